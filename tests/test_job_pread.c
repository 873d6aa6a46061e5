/* test_job_pread.c: the pread path: a job preads only the rows it uses,
 * asks for readahead where the bytes are not cached; errors leave no
 * output; an output too large. */
#include "job_lib.h"

/* The read a thread last had refused with EAGAIN, and how many were. */
static __thread int refused_fd = -1;
static __thread off_t refused_at = -1;
static int refusals;

static void refused(int fd, off_t off)
{
    __atomic_add_fetch(&refusals, 1, __ATOMIC_RELAXED);
    refused_fd = fd;
    refused_at = off;
    errno = EAGAIN;
}

/* The bytes are not in the page cache: RWF_NOWAIT says EAGAIN. */
static ssize_t uncached_preadv2(int fd, const struct iovec *iov, int k,
                                off_t off, int flags)
{
    (void)iov;
    (void)k;
    (void)flags;
    refused(fd, off);
    return -1;
}

/* The real call, its refusals recorded as uncached_preadv2's. */
static ssize_t noting_preadv2(int fd, const struct iovec *iov, int k,
                              off_t off, int flags)
{
    ssize_t n = preadv2(fd, iov, k, off, flags);

    if (n < 0 && errno == EAGAIN)
        refused(fd, off);
    return n;
}

/* The readahead asked for (sp_sys.fadvise): how many times, and how many
 * of them were not exactly the 8 MiB from where the read the thread had
 * refused starts, on its descriptor, POSIX_FADV_WILLNEED. */
static int advices, advices_wrong;

static int recording_fadvise(int fd, off_t off, off_t len, int advice)
{
    __atomic_add_fetch(&advices, 1, __ATOMIC_RELAXED);
    if (fd != refused_fd || off != refused_at || len != (off_t)8 << 20 ||
        advice != POSIX_FADV_WILLNEED)
        __atomic_add_fetch(&advices_wrong, 1, __ATOMIC_RELAXED);
    refused_fd = -1;
    return posix_fadvise(fd, off, len, advice);
}

/* A pread reduce copies only the rows it reads, each once: one row in N
 * to sample, every row for box; from the page cache or, when it says the
 * bytes are not there, by a plain pread after asking for readahead. */
START_TEST(test_pread_reads_only_its_rows)
{
    static const struct {
        int factor;
        const struct sp_filter_row *filter;
        size_t rows;              /* source rows read, of the 203 */
    } cases[] = {{-2, &sp_filter_sample, 102}, {-4, &sp_filter_sample, 51},
                 {-7, &sp_filter_sample, 29},  {-4, &sp_filter_box, 203},
                 {-7, &sp_filter_box, 203}};
    const char *in = fx_path("in.ppm"), *out = fx_path("out.ppm");
    size_t stride = 301 * 3;
    struct sp_image src;
    struct sp_report r;

    fx_make_image(&src, 301, 203, 3, 1, 255, 4);
    fx_write_image(in, &src);
    sp_sys.pread = counting_pread;
    sp_sys.preadv2 = counting_preadv2;
    for (size_t i = 0; i < 2 * sizeof cases / sizeof cases[0]; i++) {
        if (i == sizeof cases / sizeof cases[0])
            sp_sys.preadv2 = uncached_preadv2;
        for (unsigned t = 1; t <= 3; t++) {
            size_t k = i % (sizeof cases / sizeof cases[0]);

            pread_bytes = 0;
            ck_assert_int_eq(run(in, out, SP_IO_PREAD, cases[k].factor,
                                 cases[k].filter, t, &r), SP_OK);
            ck_assert_msg(pread_bytes == cases[k].rows * stride,
                          "by %d %s, %u threads%s: %zu bytes, not %zu rows",
                          cases[k].factor, sp_filter_of(cases[k].filter)->name,
                          t, k == i ? "" : ", uncached", pread_bytes,
                          cases[k].rows);
        }
    }
    sp_sys_reset();
    sp_image_release(&src);
}
END_TEST

/* A pread job whose read finds its bytes not in the page cache asks for
 * readahead of the 8 MiB from there, once for each such read; one that
 * finds them there (the file was just written) asks for none. */
START_TEST(test_pread_readahead)
{
    const char *in = fx_path("in.ppm"), *out = fx_path("out.ppm");
    struct sp_image src;
    struct sp_report r;

    fx_make_image(&src, 301, 203, 3, 1, 255, 4);
    fx_write_image(in, &src);
    sp_sys.fadvise = recording_fadvise;
    for (int cached = 0; cached <= 1; cached++) {
        sp_sys.preadv2 = cached ? noting_preadv2 : uncached_preadv2;
        for (unsigned t = 1; t <= 3; t++) {
            for (int box = 0; box <= 1; box++) {
                refusals = advices = advices_wrong = 0;
                ck_assert_int_eq(run(in, out, SP_IO_PREAD, -4,
                                     box ? &sp_filter_box : &sp_filter_sample,
                                     t, &r), SP_OK);
                ck_assert_msg(cached || refusals > 0, "no read refused");
                ck_assert_msg(advices == refusals,
                              "%s, %u threads, %s: %d readaheads asked for "
                              "%d reads not cached",
                              cached ? "cached" : "not cached", t,
                              box ? "box" : "sample", advices, refusals);
                ck_assert_int_eq(advices_wrong, 0);
            }
        }
    }
    sp_sys_reset();
    sp_image_release(&src);
}
END_TEST

/* Errors: the status, the path it is about, a detail, and no output. */
START_TEST(test_errors_leave_no_output)
{
    const char *in = fx_path("in.ppm"), *bad = fx_path("bad.ppm");
    const char *out = fx_path("out.ppm");
    struct sp_image src;
    struct sp_report r;
    int fds = fx_count_fds();

    fx_make_image(&src, 8, 8, 3, 1, 255, 1);
    fx_write_image(in, &src);
    fx_write_text(bad, "P6\n8 8\n255\nshort");

    for (size_t pi = 0; pi < FX_NIO; pi++) {
        enum sp_io io = fx_io[pi];

        ck_assert_int_eq(run(bad, out, io, 2, &sp_filter_sample, 4,
                             &r), SP_E_TRUNCATED);
        ck_assert_ptr_eq(r.failed_path, bad);
        ck_assert_msg(r.why[0] != '\0', "no detail");
        ck_assert(!fx_file_exists(out));

        ck_assert_int_eq(run(fx_path("none.ppm"), out, io, 2,
                             &sp_filter_sample, 4, &r), ENOENT);
        ck_assert_str_eq(r.failed_path, fx_path("none.ppm"));
        ck_assert(!fx_file_exists(out));

        ck_assert_int_eq(run(in, fx_path("out.gif"), io, 2,
                             &sp_filter_sample, 4, &r), SP_E_OUTFORMAT);
        ck_assert_str_eq(r.failed_path, fx_path("out.gif"));
        ck_assert(!fx_file_exists(fx_path("out.gif")));

        ck_assert_int_eq(run(in, fx_path("no/out.ppm"), io, 2,
                             &sp_filter_sample, 4, &r), ENOENT);
        ck_assert_str_eq(r.failed_path, fx_path("no/out.ppm"));

        ck_assert_int_eq(run(in, out, io, 0, &sp_filter_sample, 4,
                             &r), SP_E_USAGE);
        ck_assert(!fx_file_exists(out));
        ck_assert_int_eq(run(in, out, io, 2, &sp_filter_sample, 0,
                             &r), SP_E_USAGE);
        ck_assert(!fx_file_exists(out));
        ck_assert_int_eq(run(in, out, io, 2, &sp_filter_sample,
                             SP_THREADS_MAX + 1, &r), SP_E_USAGE);
        ck_assert(!fx_file_exists(out));

        ck_assert_int_eq(run(fx_dir, out, io, 2, &sp_filter_sample,
                             4, &r), EISDIR);
        ck_assert(!fx_file_exists(out));
    }
    ck_assert_int_eq(fx_count_fds(), fds);
    ck_assert_int_eq(fx_count_maps(in), 0);
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 2);
    sp_image_release(&src);
}
END_TEST

/* An output too large for memory, with --max-pixels out of the way: ENOMEM
 * (or SP_E_TOOBIG), no output, no crash.  The address space is limited so
 * that even an overcommitting kernel refuses. */
START_TEST(test_output_too_large)
{
    const char *in = fx_path("in.ppm"), *out = fx_path("out.ppm");
    struct sp_image src;
    struct sp_report r;
    sp_status st;

    struct sp_job job = {.in = sp_src_path(in), .out = sp_target_path(out), .io = SP_IO_MMAP,
                         .factor = SP_SCALE_MAX, .threads = 4,
                         .max_pixels = UINT64_MAX};  /* past the limit */

    /* One output row is 1000 x 65536 x 6 bytes = 393 MB: not even an
     * item of one row fits under the limit. */
    fx_make_image(&src, 1000, 2, 3, 2, 65535, 1);
    fx_write_image(in, &src);
    fx_limit_as((size_t)256 << 20);
    st = fx_job_run(&job, &r);
    ck_assert_msg(st == ENOMEM || st == SP_E_TOOBIG, "%d %s", st,
                  sp_strerror(st));
    ck_assert(!fx_file_exists(out));
    ck_assert_ptr_nonnull(r.failed_path);
    ck_assert_int_eq(fx_count_maps(in), 0);
    sp_image_release(&src);
}
END_TEST

/* Standard input to standard output. */

static Suite *job_pread_suite(void)
{
    Suite *s = suite_create("job_pread");
    TCase *tc = fx_tcase("run");
    tcase_add_test(tc, test_pread_reads_only_its_rows);
    tcase_add_test(tc, test_pread_readahead);
    tcase_add_test(tc, test_errors_leave_no_output);
    tcase_add_test(tc, test_output_too_large);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(job_pread_suite());
}
