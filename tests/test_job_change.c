/* test_job_change.c: an input that changes under a job: truncated (the
 * SIGBUS guard, and without it), changed in place. */
#include "job_lib.h"

static void truncate_input(void *arg)
{
    ck_assert_int_eq(truncate((const char *)arg, 15), 0);
}

START_TEST(test_sigbus_guard)
{
    struct sp_image img;
    struct sp_report r;
    const char *in = fx_path("in.ppm"), *out = fx_path("out.ppm");

    for (int i = 0; i < 40; i++) {
        enum sp_io io = (enum sp_io)(i % 3);  /* read, mmap, pread */
        struct sp_job job = {.in = sp_src_path(in), .out = sp_target_path(out), .io = io,
                             .factor = i % 4 < 2 ? -2 : 3,
                             .filter = i % 8 < 4 ? &sp_filter_box
                                                 : &sp_filter_sample,
                             .threads = 1 + (unsigned)i % 5,
                             .after_load = truncate_input,
                             .after_load_arg = (void *)in};
        sp_status st;

        fx_make_image(&img, 640, 480, 3, 1, 255, (unsigned)i);
        fx_write_image(in, &img);  /* 15-byte header: "P6\n640 480\n255\n" */
        sp_image_release(&img);
        unlink(out);
        st = fx_job_run(&job, &r);
        if (io != SP_IO_READ) {
            ck_assert_msg(st == SP_E_CHANGED, "run %d: %s", i,
                          sp_strerror(st));
            ck_assert_str_eq(r.failed_path, in);
            ck_assert(!fx_file_exists(out));
        } else {
            ck_assert_int_eq(st, SP_OK);
        }
    }
}
END_TEST

/* How after_load changes the input: rewritten in place with another
 * image of the same size (dd conv=notrunc), or cut by 10 bytes
 * (truncate -s -10). */
struct change {
    const char *path;
    const unsigned char *other;  /* the other image's file, LEN bytes */
    size_t len;
    int cut;
};

static void change_input(void *arg)
{
    const struct change *c = arg;
    int fd = open(c->path, O_WRONLY);

    ck_assert_int_ge(fd, 0);
    if (c->cut)
        ck_assert_int_eq(ftruncate(fd, (off_t)c->len - 10), 0);
    else
        ck_assert_int_eq(pwrite(fd, c->other, c->len, 0), (ssize_t)c->len);
    ck_assert_int_eq(close(fd), 0);
}

/* backdate: PATH's mtime a day back, so that a write to it changes its
 * mtime even within the file system's timestamp granularity. */
static void backdate(const char *path)
{
    struct timespec t[2] = {{time(NULL) - 86400, 0}, {time(NULL) - 86400, 0}};

    ck_assert_int_eq(utimensat(AT_FDCWD, path, t, 0), 0);
}

/* The input changes in place after it is loaded, before it is scaled.
 * A mapped or pread input is still read, so the job must see the change
 * (its stamp) and commit no output: SP_E_CHANGED, nothing left behind;
 * also with the input as standard input, and into a PNG.  Read copied
 * the raster at load: its output is the first image's, scaled. */
START_TEST(test_input_changed)
{
    const char *in = fx_path("in.ppm");
    static const char *const outs[] = {"out.ppm", "out.png"};
    struct sp_image a, b, want;
    unsigned char *a_file, *b_file, *expect;
    size_t len, expect_len;
    int fds = fx_count_fds();

    fx_make_image(&a, 64, 48, 3, 1, 255, 1);
    fx_make_image(&b, 64, 48, 3, 1, 255, 2);
    a_file = fx_pnm_bytes(&a, &len);
    b_file = fx_pnm_bytes(&b, &len);
    fx_ref_scale(&a, -2, SP_REDUCE_BOX, &want);
    expect = fx_pnm_bytes(&want, &expect_len);
    for (int i = 0; i < 4 * 2 * 2 * 2; i++) {
        enum sp_io io = (enum sp_io)(i % 4);  /* read, mmap, pread, auto */
        struct change c = {in, b_file, len, (i / 4) % 2};
        int as_stdin = (i / 8) % 2;
        const char *out = fx_path(outs[i / 16]);
        struct sp_job job = {.in = sp_src_path(as_stdin ? "-" : in), .out = sp_target_path(out),
                             .io = io, .factor = -2, .filter = &sp_filter_box,
                             .threads = 3, .chunk_bytes = 1024,
                             .after_load = change_input, .after_load_arg = &c};
        struct sp_report r;
        sp_status st;
        int saved = dup(STDIN_FILENO);  /* -1 when the test has none */

        fx_write_file(in, a_file, len);
        backdate(in);
        if (as_stdin) {
            int fd = open(in, O_RDONLY);

            ck_assert_int_ge(fd, 0);
            ck_assert_int_eq(dup2(fd, STDIN_FILENO), STDIN_FILENO);
            close(fd);
        }
        st = fx_job_run(&job, &r);
        if (saved >= 0) {
            dup2(saved, STDIN_FILENO);
            close(saved);
        } else {
            close(STDIN_FILENO);
        }
        if (io == SP_IO_READ) {
            ck_assert_int_eq(st, SP_OK);
            if (i / 16 == 0) {
                size_t got_len;
                unsigned char *got = fx_read_file(out, &got_len);

                ck_assert(got_len == expect_len &&
                          memcmp(got, expect, got_len) == 0);
                free(got);
            }
            ck_assert_int_eq(unlink(out), 0);
        } else {
            ck_assert_msg(st == SP_E_CHANGED, "%s, %s%s: %s", sp_io_name(io),
                          c.cut ? "cut" : "rewritten",
                          as_stdin ? ", stdin" : "", sp_strerror(st));
            ck_assert_str_eq(r.failed_path, job.in.path);
            ck_assert_str_eq(sp_strerror(st), "input changed while reading");
            ck_assert(!fx_file_exists(out));
        }
        ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);  /* in.ppm */
        ck_assert_int_eq(fx_count_fds(), fds);
    }
    free(a_file);
    free(b_file);
    free(expect);
    sp_image_release(&want);
    sp_image_release(&a);
    sp_image_release(&b);
}
END_TEST

/* A SIGBUS outside a guarded read still kills the process: the handler
 * is not a blanket.  The handler must be there first, or the SIGBUS would
 * kill the process just the same and prove nothing. */
START_TEST(test_sigbus_unguarded)
{
    struct sp_image img;
    struct sp_report r;
    const char *in = fx_path("in.ppm"), *out = fx_path("out.ppm");
    struct sp_job job = {.in = sp_src_path(in), .out = sp_target_path(out), .io = SP_IO_MMAP, .factor = 2,
                         .threads = 2};
    struct sigaction now;

    fx_make_image(&img, 64, 48, 3, 1, 255, 1);
    fx_write_image(in, &img);
    sp_image_release(&img);
    ck_assert_int_eq(fx_job_run(&job, &r), SP_OK);  /* sp_init's handler */
    ck_assert_int_eq(sigaction(SIGBUS, NULL, &now), 0);
    ck_assert_msg((now.sa_flags & SA_SIGINFO) && now.sa_sigaction != NULL,
                  "no SIGBUS handler after a mapped run");
    raise(SIGBUS);
}
END_TEST

static Suite *job_change_suite(void)
{
    Suite *s = suite_create("job_change");
    TCase *tc = fx_tcase("run");
    tcase_add_test(tc, test_sigbus_guard);
#if defined(__SANITIZE_ADDRESS__)
    /* the sanitizer's SIGBUS handler came before the guard's, which hands
     * it a fault that is not its own: a report and the sanitizer's exit */
    tcase_add_exit_test(tc, test_sigbus_unguarded, 1);
#elif defined(__SANITIZE_THREAD__)
    tcase_add_exit_test(tc, test_sigbus_unguarded, 66);
#else
    tcase_add_test_raise_signal(tc, test_sigbus_unguarded, SIGBUS);
#endif
    tcase_add_test(tc, test_input_changed);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(job_change_suite());
}
