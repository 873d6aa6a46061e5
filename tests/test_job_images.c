/* test_job_images.c: the images of one input: renamed under the job, a
 * stream by path, whitespace and junk after an image, opening without
 * waiting. */
#include "job_lib.h"

/* --- the images of one input ------------------------------------------ */

/* images_bytes: N different 8x6 P6 images' files (seeds SEED, SEED+1,
 * ...) back to back, SEP between them and after the last; *LEN its
 * length.  *WANT (*WANT_LEN) gets what -s 1 makes of them: the images'
 * files with nothing between.  The caller frees both. */
static unsigned char *images_bytes(unsigned n, unsigned seed, const char *sep,
                                   size_t *len, unsigned char **want,
                                   size_t *want_len)
{
    unsigned char *all = NULL, *out = NULL;
    size_t seplen = strlen(sep);

    *len = 0;
    *want_len = 0;
    for (unsigned i = 0; i < n; i++) {
        struct sp_image img;
        size_t l;
        unsigned char *b;

        fx_make_image(&img, 8, 6, 3, 1, 255, seed + i);
        b = fx_pnm_bytes(&img, &l);
        all = realloc(all, *len + l + seplen);
        out = realloc(out, *want_len + l);
        ck_assert(all != NULL && out != NULL);
        memcpy(all + *len, b, l);
        memcpy(all + *len + l, sep, seplen);
        memcpy(out + *want_len, b, l);
        *len += l + seplen;
        *want_len += l;
        free(b);
        sp_image_release(&img);
    }
    *want = out;
    return all;
}

/* same_file: PATH holds the LEN bytes at WANT. */
static int same_file(const char *path, const unsigned char *want, size_t len)
{
    size_t got_len;
    unsigned char *got = fx_read_file(path, &got_len);
    int same = got != NULL && got_len == len && memcmp(got, want, len) == 0;

    free(got);
    return same;
}

/* rename_over: after the first image's load, another file is renamed
 * over the input's path (how an editor or rsync replaces a file). */
struct swap {
    const char *from, *to;
    int loads;
};

static void rename_over(void *arg)
{
    struct swap *s = arg;

    if (s->loads++ == 0)
        ck_assert_int_eq(rename(s->from, s->to), 0);
}

/* A multi-image file replaced by rename between its images: every image
 * is read from the file first opened, and that file did not change: all
 * three of its images, exit 0, not "input changed"; by every load path,
 * no descriptor left open. */
START_TEST(test_input_renamed)
{
    const char *in = fx_path("in.ppm"), *other = fx_path("other.ppm");
    const char *out = fx_path("out.ppm");
    unsigned char *a, *b, *want, *b_want;
    size_t a_len, b_len, want_len, b_want_len;
    int fds = fx_count_fds();

    a = images_bytes(3, 1, "", &a_len, &want, &want_len);
    b = images_bytes(3, 7, "", &b_len, &b_want, &b_want_len);
    /* each path, then --io auto */
    for (size_t pi = 0; pi <= FX_NIO; pi++) {
        enum sp_io io = pi < FX_NIO ? fx_io[pi] : SP_IO_AUTO;
        struct swap s = {other, in, 0};
        struct sp_job job = {.in = sp_src_path(in), .out = sp_target_path(out), .io = io,
                             .factor = 1, .threads = 2,
                             .after_load = rename_over, .after_load_arg = &s};
        struct sp_report r;
        sp_status st;

        fx_write_file(in, a, a_len);
        fx_write_file(other, b, b_len);
        st = fx_job_run(&job, &r);
        ck_assert_msg(st == SP_OK, "%s: %s", sp_io_name(io),
                      sp_strerror(st));
        ck_assert_uint_eq(r.images, 3);
        ck_assert(same_file(out, want, want_len));
        ck_assert_int_eq(fx_count_fds(), fds);
    }
    free(a);
    free(b);
    free(want);
    free(b_want);
}
END_TEST

/* send_slowly: a child that opens PATH for writing (or writes to FD when
 * PATH is NULL), writes the LEN bytes at DATA up to AT, waits a moment,
 * writes the rest and exits. */
static pid_t send_slowly(const char *path, int fd, const unsigned char *data,
                         size_t len, size_t at)
{
    pid_t pid = fork();

    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct timespec pause = {0, 200 * 1000 * 1000};

        if (path != NULL)
            fd = open(path, O_WRONLY);
        if (fd < 0 || write(fd, data, at) != (ssize_t)at)
            _exit(1);
        nanosleep(&pause, NULL);
        _exit(write(fd, data + at, len - at) != (ssize_t)(len - at));
    }
    return pid;
}

/* A stream named by a path (a FIFO; a pipe as /dev/fd/N, as bash's <(...)
 * names it) whose writer pauses between images 2 and 3: one descriptor
 * for all of them, so every image arrives, whatever separates them.  At
 * 1cd7bc8 the path was opened again for each image: the bytes read past
 * image 1 were lost. */
START_TEST(test_stream_by_path)
{
    static const char *const seps[] = {"", "\n", "\r\n \t\v\f"};
    const char *fifo = fx_path("fifo"), *out = fx_path("out.ppm");

    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    for (int i = 0; i < 6; i++) {
        unsigned char *data, *want;
        size_t len, want_len, first_len, one;
        char byfd[64];
        struct sp_job job = {.out = sp_target_path(out), .io = SP_IO_READ, .factor = 1,
                             .threads = 2};
        struct sp_report r;
        sp_status st;
        int p[2] = {-1, -1}, status;
        pid_t pid;

        data = images_bytes(3, 3, seps[i % 3], &len, &want, &want_len);
        one = want_len / 3;
        first_len = 2 * (one + strlen(seps[i % 3]));
        if (i < 3) {
            job.in = sp_src_path(fifo);
            pid = send_slowly(fifo, -1, data, len, first_len);
        } else {
            ck_assert_int_eq(pipe(p), 0);
            pid = send_slowly(NULL, p[1], data, len, first_len);
            close(p[1]);
            snprintf(byfd, sizeof byfd, "/dev/fd/%d", p[0]);
            job.in = sp_src_path(byfd);
        }
        st = fx_job_run(&job, &r);
        if (p[0] >= 0)
            close(p[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(st == SP_OK, "%s, separator %d: %s", job.in.path, i % 3,
                      sp_strerror(st));
        ck_assert_uint_eq(r.images, 3);
        ck_assert(same_file(out, want, want_len));
        free(data);
        free(want);
    }
}
END_TEST

/* CHOICES: the ways the loops below give a job its input: each path of
 * fx_io, --io auto, and a stream (standard input, a pipe). */
#define CHOICES ((int)FX_NIO + 2)

/* Whitespace between images and after the last is skipped, as libnetpbm
 * skips it, by every load path and from a file as standard input; the
 * plain formats (whose writers end each image with a newline) too.  At
 * 1cd7bc8 only the first image was scaled, exit 0. */
START_TEST(test_whitespace_between_images)
{
    static const char plain[] = "P1\n3 2\n0 1 0\n1 0 1\n"
                                "P1\n2 1\n1 0\n \r\n"
                                "P2\n2 1\n9\n1 2 \r\n\r\n"
                                "P3\n1 1\n255\n1 2 3 \n";
    const char *in = fx_path("in.ppm"), *out = fx_path("out.ppm");
    unsigned char *data, *want;
    size_t len, want_len;

    data = images_bytes(3, 5, "\r\n \t\v\f", &len, &want, &want_len);
    /* each path, --io auto, then standard input; the binary images, then
     * the plain */
    for (int i = 0; i < 2 * CHOICES; i++) {
        int k = i % CHOICES, as_stdin = k == CHOICES - 1, saved = -1;
        struct sp_job job = {.in = sp_src_path(as_stdin ? "-" : in), .out = sp_target_path(out),
                             .io = k < FX_NIO ? fx_io[k] : SP_IO_AUTO,
                             .factor = 1, .threads = 3};
        struct sp_report r;
        sp_status st;

        if (i < CHOICES)
            fx_write_file(in, data, len);
        else
            fx_write_text(in, plain);
        if (as_stdin) {
            int fd = open(in, O_RDONLY);

            saved = dup(STDIN_FILENO);
            ck_assert_int_ge(fd, 0);
            ck_assert_int_eq(dup2(fd, STDIN_FILENO), STDIN_FILENO);
            close(fd);
        }
        st = fx_job_run(&job, &r);
        if (as_stdin) {
            /* left at its end: the whitespace after the last image read */
            ck_assert_int_eq(lseek(STDIN_FILENO, 0, SEEK_CUR),
                             i < CHOICES ? (off_t)len
                                         : (off_t)strlen(plain));
            dup2(saved, STDIN_FILENO);
            close(saved);
        }
        ck_assert_msg(st == SP_OK, "case %d: %s", i, sp_strerror(st));
        ck_assert_uint_eq(r.images, i < CHOICES ? 3 : 4);
        ck_assert_uint_eq(r.load.trailing_bytes, i < CHOICES ? 6 : 1);
        if (i < CHOICES)
            ck_assert(same_file(out, want, want_len));
    }
    free(data);
    free(want);
}
END_TEST

/* Anything after an image that is not whitespace then an image (text, a
 * lone 'P', a NUL) fails the job as netpbm's tools fail (bad magic
 * number): SP_E_NOTPNM naming the image, no output; a JPEG's first bytes
 * are a JPEG image, cut: SP_E_TRUNCATED, naming it alike.  By every load
 * path and through a pipe.  At 1cd7bc8: exit 0, the rest ignored. */
START_TEST(test_junk_after_image)
{
    static const char *const junk[] = {"\377\330\377\340", "junk", "\n P",
                                       " \0"};
    const char *in = fx_path("in.ppm"), *out = fx_path("out.ppm");
    unsigned char *data, *want;
    size_t len, want_len;

    data = images_bytes(2, 1, "", &len, &want, &want_len);
    /* how: each path, --io auto (the file), then a pipe */
    for (int i = 0; i < 4 * CHOICES; i++) {
        size_t jl = i % 4 == 3 ? 2 : strlen(junk[i % 4]);
        unsigned char *bytes = malloc(len + jl);
        int how = i / 4, p[2] = {-1, -1}, status;
        char byfd[64];
        struct sp_job job = {.in = sp_src_path(in), .out = sp_target_path(out),
                             .io = how < FX_NIO ? fx_io[how]
                                   : how == FX_NIO ? SP_IO_AUTO
                                                   : SP_IO_READ,
                             .factor = 2, .threads = 2};
        struct sp_report r;
        sp_status st;
        pid_t pid = -1;

        ck_assert_ptr_nonnull(bytes);
        /* the junk between the two images */
        memcpy(bytes, data, len / 2);
        memcpy(bytes + len / 2, junk[i % 4], jl);
        memcpy(bytes + len / 2 + jl, data + len / 2, len - len / 2);
        if (how <= FX_NIO) {
            fx_write_file(in, bytes, len + jl);
        } else {
            ck_assert_int_eq(pipe(p), 0);
            pid = send_slowly(NULL, p[1], bytes, len + jl, len / 2);
            close(p[1]);
            snprintf(byfd, sizeof byfd, "/dev/fd/%d", p[0]);
            job.in = sp_src_path(byfd);
        }
        unlink(out);
        st = fx_job_run(&job, &r);
        if (p[0] >= 0) {
            close(p[0]);
            ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        }
        ck_assert_msg(st == (i % 4 == 0 ? SP_E_TRUNCATED : SP_E_NOTPNM),
                      "case %d: %s", i, sp_strerror(st));
        ck_assert_str_eq(r.failed_path, job.in.path);
        ck_assert_msg(strncmp(r.why, "image 2, at byte ", 17) == 0, "%s",
                      r.why);
        ck_assert(!fx_file_exists(out));
        free(bytes);
    }
    free(data);
    free(want);
}
END_TEST

/* open_nowait (a batch's): a FIFO with no writer is not waited for in
 * open(): SP_E_EMPTY at once, naming the FIFO, no output.  With a writer
 * that pauses before it writes, the reads still wait for the data (the
 * descriptor is blocking again once open). */
START_TEST(test_open_nowait)
{
    const char *fifo = fx_path("fifo"), *out = fx_path("out.ppm");
    struct sp_job job = {.in = sp_src_path(fifo), .out = sp_target_path(out), .io = SP_IO_READ,
                         .factor = 1, .threads = 1, .open_nowait = 1};
    struct sp_report r;
    unsigned char *data, *want;
    size_t len, want_len;
    int keep, w, status;
    pid_t pid;

    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(fx_job_run(&job, &r), SP_E_EMPTY);
    ck_assert_str_eq(r.failed_path, fifo);
    ck_assert(!fx_file_exists(out));

    /* A reader kept open lets the writer open at once, before the job. */
    keep = open(fifo, O_RDONLY | O_NONBLOCK);
    ck_assert_int_ge(keep, 0);
    w = open(fifo, O_WRONLY);
    ck_assert_int_ge(w, 0);
    data = images_bytes(2, 2, "\n", &len, &want, &want_len);
    pid = send_slowly(NULL, w, data, len, 0);
    close(w);
    ck_assert_int_eq(fx_job_run(&job, &r), SP_OK);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_uint_eq(r.images, 2);
    ck_assert(same_file(out, want, want_len));
    close(keep);
    free(data);
    free(want);
}
END_TEST

static Suite *job_images_suite(void)
{
    Suite *s = suite_create("job_images");
    TCase *tc = fx_tcase("images");
    tcase_add_test(tc, test_input_renamed);
    tcase_add_test(tc, test_stream_by_path);
    tcase_add_test(tc, test_whitespace_between_images);
    tcase_add_test(tc, test_junk_after_image);
    tcase_add_test(tc, test_open_nowait);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(job_images_suite());
}
