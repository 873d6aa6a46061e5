/* test_job_discard.c: a job with no output (--no-output): the same scale
 * work as a job that writes one, on every path and thread count, and
 * nothing opened or written. */
#include "job_lib.h"

#include <stdarg.h>

/* What a job asked of the system besides the bytes it preads (job_lib.h),
 * counted through the syscall seam (threads add at once): the bytes
 * given back (madvise: the rows a mapped input is done with, and its
 * release), and the calls that make or write an output. */
static size_t madvised, output_calls;

static int counting_madvise(void *addr, size_t len, int advice)
{
    __atomic_add_fetch(&madvised, len, __ATOMIC_RELAXED);
    return madvise(addr, len, advice);
}

static int counting_openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    mode_t mode;

    va_start(ap, flags);
    mode = (mode_t)va_arg(ap, int);
    va_end(ap);
    __atomic_add_fetch(&output_calls, 1, __ATOMIC_RELAXED);
    return openat(dirfd, path, flags, mode);
}

static ssize_t counting_writev(int fd, const struct iovec *iov, int n)
{
    __atomic_add_fetch(&output_calls, 1, __ATOMIC_RELAXED);
    return writev(fd, iov, n);
}

static ssize_t counting_write(int fd, const void *buf, size_t len)
{
    __atomic_add_fetch(&output_calls, 1, __ATOMIC_RELAXED);
    return write(fd, buf, len);
}

/* What one job did: its status and report, and the counts above. */
struct seen {
    sp_status st;
    struct sp_report r;
    size_t pread_bytes, madvised, output_calls;
};

/* run_counted: JOB run with the seam counting, into *S. */
static void run_counted(struct sp_job *job, struct seen *s)
{
    pread_bytes = madvised = output_calls = 0;
    sp_sys.pread = counting_pread;
    sp_sys.preadv2 = counting_preadv2;
    sp_sys.madvise = counting_madvise;
    sp_sys.openat = counting_openat;
    sp_sys.writev = counting_writev;
    sp_sys.write = counting_write;
    s->st = fx_job_run(job, &s->r);
    sp_sys_reset();
    s->pread_bytes = pread_bytes;
    s->madvised = madvised;
    s->output_calls = output_calls;
}

/* Every path, threads 1, 2, 3 and 7, a reduce (sample and box), an
 * enlarge and a copy, in items of a few rows: the job with no output
 * loads, scales and releases as the one that writes out.ppm (the same
 * report but for the write phase, which is zero; the same rows pread,
 * the same pages given back), and makes or writes nothing. */
START_TEST(test_discard_same_work)
{
    static const int factors[] = {-3, -2, 2, 1};
    static const unsigned threads[] = {1, 2, 3, 7};
    const char *in = fx_path("in.ppm"), *out = fx_path("out.ppm");
    struct sp_image img;

    fx_make_image(&img, 200, 150, 3, 1, 255, 7);
    fx_write_image(in, &img);
    sp_image_release(&img);
    for (int i = 0; i < 4 * 4 * 4; i++) {
        struct sp_job job = {.in = sp_src_path(in), .out = sp_target_path(out), .io = (enum sp_io)(i % 4),
                             .factor = factors[i / 4 % 4],
                             .filter = i / 4 % 4 == 1 ? &sp_filter_box
                                                      : &sp_filter_sample,
                             .threads = threads[i / 16],
                             .chunk_bytes = 4096, .drop_grain = 4096};
        struct seen wrote, none;
        const struct sp_report *a = &wrote.r, *b = &none.r;

        run_counted(&job, &wrote);
        ck_assert_int_eq(wrote.st, SP_OK);
        ck_assert_int_eq(unlink(out), 0);
        job.out = (struct sp_target){.kind = SP_TARGET_NONE};
        run_counted(&job, &none);
        ck_assert_msg(none.st == SP_OK, "%s: %s", sp_io_name(job.io),
                      sp_strerror(none.st));
        ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);  /* in.ppm */
        ck_assert_uint_gt(wrote.output_calls, 0);
        ck_assert_uint_eq(none.output_calls, 0);
        ck_assert_ptr_null(b->output);
        ck_assert_uint_eq(b->phase[SP_WRITE].ns, 0);
        ck_assert_int_eq(b->phase[SP_WRITE].minflt, 0);
        ck_assert_int_eq(b->phase[SP_WRITE].majflt, 0);
        ck_assert_uint_gt(b->phase[SP_SCALE].ns, 0);
        ck_assert_int_eq(b->load.io_used, a->load.io_used);
        ck_assert_uint_eq(b->threads_used, a->threads_used);
        ck_assert_uint_eq(b->out_width, a->out_width);
        ck_assert_uint_eq(b->out_height, a->out_height);
        ck_assert_uint_eq(b->images, 1);
        ck_assert_msg(none.pread_bytes == wrote.pread_bytes &&
                      none.madvised == wrote.madvised,
                      "%s -s %d -t %u: pread %zu and %zu bytes, madvised "
                      "%zu and %zu", sp_io_name(job.io), job.factor,
                      job.threads, none.pread_bytes, wrote.pread_bytes,
                      none.madvised, wrote.madvised);
        if (a->load.io_used == SP_IO_PREAD)  /* every row the scale reads */
            ck_assert_uint_gt(none.pread_bytes, 0);
        if (a->load.io_used == SP_IO_MMAP)   /* rows given back as it goes */
            ck_assert_uint_gt(none.madvised, 0);
    }
}
END_TEST

/* A mapped or pread input cut after the load: with no output the job
 * still checks its input as one that writes does (test_job_change.c),
 * and fails with SP_E_CHANGED, naming the input; nothing is left
 * behind. */
static void cut_input(void *arg)
{
    ck_assert_int_eq(truncate((const char *)arg, 15), 0);
}

START_TEST(test_discard_reads_rows)
{
    const char *in = fx_path("in.ppm");
    struct sp_image img;

    for (int i = 0; i < 2 * 3; i++) {
        struct sp_job job = {.in = sp_src_path(in), .io = i % 2 ? SP_IO_PREAD : SP_IO_MMAP,
                             .factor = -2, .threads = 1 + (unsigned)i / 2,
                             .after_load = cut_input,
                             .after_load_arg = (void *)in};
        struct sp_report r;

        fx_make_image(&img, 640, 480, 3, 1, 255, (unsigned)i);
        fx_write_image(in, &img);  /* 15-byte header: "P6\n640 480\n255\n" */
        sp_image_release(&img);
        ck_assert_int_eq(fx_job_run(&job, &r), SP_E_CHANGED);
        ck_assert_str_eq(r.failed_path, in);
        ck_assert_uint_eq(r.phase[SP_WRITE].ns, 0);
        ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);
    }
}
END_TEST

/* The report of a job with no output says so: output=none in text,
 * null in JSON, and the write phase's figures are there, zero. */
START_TEST(test_discard_report)
{
    const char *in = fx_path("in.pgm");
    struct sp_job job = {.in = sp_src_path(in), .io = SP_IO_READ, .factor = 2,
                         .threads = 2};
    struct sp_image img;
    struct sp_report r;
    char *buf = NULL;
    size_t len = 0;
    FILE *f;

    fx_make_image(&img, 37, 23, 1, 1, 255, 3);
    fx_write_image(in, &img);
    sp_image_release(&img);
    ck_assert_int_eq(fx_job_run(&job, &r), SP_OK);
    for (int json = 0; json < 2; json++) {
        f = open_memstream(&buf, &len);
        ck_assert_ptr_nonnull(f);
        sp_report_print(&r, SP_OK, json, f);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_ptr_nonnull(strstr(buf, json ? "\"output\":null,"
                                               : " output=none "));
        ck_assert_ptr_nonnull(strstr(buf, json ? "\"write_ns\":0,"
                                               : " write_ns=0 "));
        free(buf);
        buf = NULL;
    }
}
END_TEST

static Suite *job_discard_suite(void)
{
    Suite *s = suite_create("job_discard");
    TCase *tc = fx_tcase("run");
    tcase_add_test(tc, test_discard_same_work);
    tcase_add_test(tc, test_discard_reads_rows);
    tcase_add_test(tc, test_discard_report);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(job_discard_suite());
}
