/* A whole run, file to file: read and mmap, any thread count, every factor
 * give the same bytes (those of the reference scaler here); output over
 * input; the report; errors leave no output; chunks of any size give the
 * same bytes, and a mapped input gives back only the rows it is done
 * with. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fixtures.h"
#include "job.h"
#include "parallel.h"
#include "sys.h"
#include "write_whole.h"

/* expect: ck_assert_msg for loops over many runs: Check records the place
 * of every assertion that passes (a write() to its pipe in fork mode), so
 * such a loop tests first and only calls into Check when one fails. */
#define expect(cond, ...)                                                    \
    do {                                                                     \
        if (!(cond))                                                         \
            ck_abort_msg(__VA_ARGS__);                                       \
    } while (0)

/* A too-large allocation must come back as NULL (ENOMEM), not end the
 * process, in a sanitizer build too. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "allocator_may_return_null=1";
}

static sp_status run(const char *in, const char *out, enum sp_io io,
                     int factor, enum sp_filter filter, unsigned threads,
                     struct sp_report *r)
{
    struct sp_job job = {.in = in, .out = out, .io = io, .factor = factor,
                         .filter = filter, .threads = threads};

    return sp_job_run(&job, r);
}

/* Every factor, both paths, threads 1, 2, 10 and more than the rows, both
 * filters: the output file is the reference's, byte for byte.  _i picks
 * the input: a 37x23 P6 or a 16-bit 29x31 P5. */
START_TEST(test_equivalence)
{
    static const unsigned threads[] = {1, 2, 10, 500};
    const char *in = fx_path("in.pnm"), *out = fx_path("out.pnm");
    struct sp_image src;
    struct sp_report r;

    if (_i == 0)
        fx_make_image(&src, 37, 23, 3, 1, 255, 1);
    else
        fx_make_image(&src, 29, 31, 1, 2, 65535, 2);
    fx_write_image(in, &src);
    for (int factor = -8; factor <= 8; factor++) {
        if (factor == 0)
            continue;
        for (int f = SP_FILTER_SAMPLE; f <= SP_FILTER_BOX; f++) {
            struct sp_image want;
            unsigned char *expect;
            size_t expect_len;

            fx_ref_scale(&src, factor, (enum sp_filter)f, &want);
            expect = fx_pnm_bytes(&want, &expect_len);
            for (size_t pi = 0; pi < FX_NIO; pi++) {
                enum sp_io io = fx_io[pi];

                for (size_t t = 0; t < sizeof threads / sizeof threads[0];
                     t++) {
                    unsigned char *got;
                    size_t len;
                    sp_status st = run(in, out, io, factor,
                                       (enum sp_filter)f, threads[t], &r);

                    ck_assert_msg(st == SP_OK, "%s", sp_strerror(st));
                    got = fx_read_file(out, &len);
                    ck_assert_msg(len == expect_len &&
                                  memcmp(got, expect, len) == 0,
                                  "factor %d %s by %s with %u threads: "
                                  "output differs", factor,
                                  sp_filter_name((enum sp_filter)f),
                                  sp_io_name(io), threads[t]);
                    free(got);
                    ck_assert_int_eq(r.load.io_used, io);
                    ck_assert_uint_eq(r.out_width, want.width);
                    ck_assert_uint_eq(r.out_height, want.height);
                    ck_assert(r.threads_used >= 1 &&
                              r.threads_used <= threads[t] &&
                              r.threads_used <= want.height);
                }
            }
            free(expect);
            sp_image_release(&want);
        }
    }
    sp_image_release(&src);
}
END_TEST

/* The output may be the input, mapped while it is read. */
START_TEST(test_out_is_in)
{
    static const int factors[] = {2, -2, 3, -3, 1};
    const char *path = fx_path("same.ppm");
    struct sp_image src, want;
    struct sp_report r;

    for (size_t i = 0; i < sizeof factors / sizeof factors[0]; i++) {
        for (size_t pi = 0; pi < FX_NIO; pi++) {
            enum sp_io io = fx_io[pi];
            unsigned char *got, *expect;
            size_t len, expect_len;

            fx_make_image(&src, 37, 23, 3, 1, 255, 3);
            fx_write_image(path, &src);
            fx_ref_scale(&src, factors[i], SP_FILTER_BOX, &want);
            ck_assert_int_eq(run(path, path, io, factors[i],
                                 SP_FILTER_BOX, 4, &r), SP_OK);
            ck_assert_int_eq(r.load.io_used, io);
            got = fx_read_file(path, &len);
            expect = fx_pnm_bytes(&want, &expect_len);
            ck_assert_uint_eq(len, expect_len);
            ck_assert_mem_eq(got, expect, len);
            ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);
            free(got);
            free(expect);
            sp_image_release(&want);
            sp_image_release(&src);
        }
    }
}
END_TEST

/* The report: sizes, layout, io path, threads clamped to output rows,
 * the whitespace after the last image. */
START_TEST(test_report_fields)
{
    const char *in = fx_path("in.ppm"), *out = fx_path("out.png");
    struct sp_image src;
    struct sp_report r;
    unsigned char *data;
    size_t len;

    fx_make_image(&src, 37, 23, 3, 1, 255, 1);
    data = fx_pnm_bytes(&src, &len);
    data = realloc(data, len + 4);
    ck_assert_ptr_nonnull(data);
    memcpy(data + len, "\n \r\n", 4);
    fx_write_file(in, data, len + 4);

    ck_assert_int_eq(run(in, out, SP_IO_MMAP, -4, SP_FILTER_SAMPLE, 100, &r),
                     SP_OK);
    ck_assert_int_eq(r.load.io_used, SP_IO_MMAP);
    ck_assert_int_eq(r.load.magic, '6');
    ck_assert_uint_eq(r.in_width, 37);
    ck_assert_uint_eq(r.in_height, 23);
    ck_assert_uint_eq(r.out_width, 10);
    ck_assert_uint_eq(r.out_height, 6);
    ck_assert_uint_eq(r.threads_used, 6);
    ck_assert_uint_eq(r.channels, 3);
    ck_assert_uint_eq(r.sample_size, 1);
    ck_assert_uint_eq(r.maxval, 255);
    ck_assert_uint_eq(r.load.trailing_bytes, 4);
    ck_assert_int_eq(r.load.trailing_image, 0);
    ck_assert_uint_eq(r.load.input_bytes, len + 4);
    ck_assert_ptr_null(r.failed_path);
    ck_assert(fx_file_exists(out));

    ck_assert_int_eq(run(in, out, SP_IO_READ, 3, SP_FILTER_SAMPLE, 10, &r),
                     SP_OK);
    ck_assert_int_eq(r.load.io_used, SP_IO_READ);
    ck_assert_uint_eq(r.out_width, 111);
    ck_assert_uint_eq(r.out_height, 69);
    /* A thread an item, and an item whole source rows: 69 rows in 10
     * threads' shares of 7, rounded up to 9, make 8 items. */
    ck_assert_uint_eq(r.threads_used, 8);

    /* A plain input is read even when mmap or pread is asked for. */
    fx_write_text(fx_path("p.pgm"), "P2\n3 2\n9\n1 2 3\n4 5 6\n");
    ck_assert_int_eq(run(fx_path("p.pgm"), out, SP_IO_PREAD, 2,
                         SP_FILTER_SAMPLE, 10, &r), SP_OK);
    ck_assert_int_eq(r.load.io_used, SP_IO_READ);
    ck_assert_int_eq(run(fx_path("p.pgm"), out, SP_IO_MMAP, 2,
                         SP_FILTER_SAMPLE, 10, &r), SP_OK);
    ck_assert_int_eq(r.load.io_used, SP_IO_READ);
    ck_assert_int_eq(r.load.magic, '2');
    ck_assert_uint_eq(r.threads_used, 2);
    ck_assert_uint_eq(r.maxval, 9);
    free(data);
    sp_image_release(&src);
}
END_TEST

/* --io auto: a regular binary file is pread, whatever the job (each
 * part of the output reads the rows it needs as it is made); a plain one
 * is read whole. */
START_TEST(test_io_auto)
{
    static const int factors[] = {2, 7, 1, -1, -2, -5};
    const char *in = fx_path("in.ppm"), *out = fx_path("out.ppm");
    struct sp_image src;
    struct sp_report r;

    fx_make_image(&src, 37, 23, 3, 1, 255, 1);
    fx_write_image(in, &src);
    for (size_t i = 0; i < sizeof factors / sizeof factors[0]; i++)
        for (int f = SP_FILTER_SAMPLE; f <= SP_FILTER_BOX; f++) {
            ck_assert_int_eq(run(in, out, SP_IO_AUTO, factors[i],
                                 (enum sp_filter)f, 2, &r), SP_OK);
            ck_assert_msg(r.load.io_used == SP_IO_PREAD, "by %d: %s",
                          factors[i], sp_io_name(r.load.io_used));
        }
    fx_write_text(fx_path("p.pgm"), "P2\n3 2\n9\n1 2 3\n4 5 6\n");
    ck_assert_int_eq(run(fx_path("p.pgm"), out, SP_IO_AUTO, 2,
                         SP_FILTER_SAMPLE, 2, &r), SP_OK);
    ck_assert_int_eq(r.load.io_used, SP_IO_READ);
    sp_image_release(&src);
}
END_TEST

/* The bytes a job preads, counted (threads add to it at once); not those
 * the loader reads from offset 0 to parse the header. */
static size_t pread_bytes;

static ssize_t counting_pread(int fd, void *buf, size_t len, off_t off)
{
    ssize_t n = pread(fd, buf, len, off);

    if (n > 0 && off > 0)
        __atomic_add_fetch(&pread_bytes, (size_t)n, __ATOMIC_RELAXED);
    return n;
}

static ssize_t counting_preadv2(int fd, const struct iovec *iov, int k,
                                off_t off, int flags)
{
    ssize_t n = preadv2(fd, iov, k, off, flags);

    if (n > 0)
        __atomic_add_fetch(&pread_bytes, (size_t)n, __ATOMIC_RELAXED);
    return n;
}

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
        enum sp_filter filter;
        size_t rows;              /* source rows read, of the 203 */
    } cases[] = {{-2, SP_FILTER_SAMPLE, 102}, {-4, SP_FILTER_SAMPLE, 51},
                 {-7, SP_FILTER_SAMPLE, 29},  {-4, SP_FILTER_BOX, 203},
                 {-7, SP_FILTER_BOX, 203}};
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
                          cases[k].factor, sp_filter_name(cases[k].filter),
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
                                     box ? SP_FILTER_BOX : SP_FILTER_SAMPLE,
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

        ck_assert_int_eq(run(bad, out, io, 2, SP_FILTER_SAMPLE, 4,
                             &r), SP_E_TRUNCATED);
        ck_assert_ptr_eq(r.failed_path, bad);
        ck_assert_msg(r.why[0] != '\0', "no detail");
        ck_assert(!fx_file_exists(out));

        ck_assert_int_eq(run(fx_path("none.ppm"), out, io, 2,
                             SP_FILTER_SAMPLE, 4, &r), ENOENT);
        ck_assert_str_eq(r.failed_path, fx_path("none.ppm"));
        ck_assert(!fx_file_exists(out));

        ck_assert_int_eq(run(in, fx_path("out.gif"), io, 2,
                             SP_FILTER_SAMPLE, 4, &r), SP_E_OUTFORMAT);
        ck_assert_str_eq(r.failed_path, fx_path("out.gif"));
        ck_assert(!fx_file_exists(fx_path("out.gif")));

        ck_assert_int_eq(run(in, fx_path("no/out.ppm"), io, 2,
                             SP_FILTER_SAMPLE, 4, &r), ENOENT);
        ck_assert_str_eq(r.failed_path, fx_path("no/out.ppm"));

        ck_assert_int_eq(run(in, out, io, 0, SP_FILTER_SAMPLE, 4,
                             &r), SP_E_USAGE);
        ck_assert(!fx_file_exists(out));
        ck_assert_int_eq(run(in, out, io, 2, SP_FILTER_SAMPLE, 0,
                             &r), SP_E_USAGE);
        ck_assert(!fx_file_exists(out));
        ck_assert_int_eq(run(in, out, io, 2, SP_FILTER_SAMPLE,
                             SP_THREADS_MAX + 1, &r), SP_E_USAGE);
        ck_assert(!fx_file_exists(out));

        ck_assert_int_eq(run(fx_dir, out, io, 2, SP_FILTER_SAMPLE,
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

    struct sp_job job = {.in = in, .out = out, .io = SP_IO_MMAP,
                         .factor = SP_SCALE_MAX, .threads = 4,
                         .max_pixels = UINT64_MAX};  /* past the limit */

    /* One output row is 1000 x 65536 x 6 bytes = 393 MB: not even an
     * item of one row fits under the limit. */
    fx_make_image(&src, 1000, 2, 3, 2, 65535, 1);
    fx_write_image(in, &src);
    fx_limit_as((size_t)256 << 20);
    st = sp_job_run(&job, &r);
    ck_assert_msg(st == ENOMEM || st == SP_E_TOOBIG, "%d %s", st,
                  sp_strerror(st));
    ck_assert(!fx_file_exists(out));
    ck_assert_ptr_nonnull(r.failed_path);
    ck_assert_int_eq(fx_count_maps(in), 0);
    sp_image_release(&src);
}
END_TEST

/* Standard input to standard output. */
START_TEST(test_stdin_stdout)
{
    const char *in = fx_path("in.pgm"), *out = fx_path("stdout");
    struct sp_image src, want;
    struct sp_report r;
    unsigned char *data, *got, *expect;
    size_t len, got_len, expect_len;
    int fds[2], fd, status;
    pid_t pid;

    fx_make_image(&src, 37, 23, 1, 1, 255, 8);
    fx_write_image(in, &src);
    data = fx_read_file(in, &len);
    fx_ref_scale(&src, -3, SP_FILTER_BOX, &want);
    expect = fx_pnm_bytes(&want, &expect_len);

    ck_assert_int_eq(pipe(fds), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        _exit(write(fds[1], data, len) != (ssize_t)len);
    }
    close(fds[1]);
    if (fds[0] != STDIN_FILENO) {
        ck_assert_int_eq(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
        close(fds[0]);
    }
    fflush(stdout);
    fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    if (fd != STDOUT_FILENO) {
        ck_assert_int_eq(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
        close(fd);
    }

    ck_assert_int_eq(run("-", "-", SP_IO_MMAP, -3, SP_FILTER_BOX, 10, &r),
                     SP_OK);
    fflush(stdout);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_int_eq(r.load.io_used, SP_IO_READ);
    got = fx_read_file(out, &got_len);
    ck_assert_uint_eq(got_len, expect_len);
    ck_assert_mem_eq(got, expect, got_len);
    free(got);
    free(expect);
    free(data);
    sp_image_release(&want);
    sp_image_release(&src);
}
END_TEST

/* print_report: sp_report_print into a string. */
static char *print_report(const struct sp_report *r, int json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    ck_assert_ptr_nonnull(f);
    sp_report_print(r, SP_OK, json, f);
    ck_assert_int_eq(fclose(f), 0);
    /* One line: a newline at the end and nowhere else. */
    ck_assert_uint_gt(len, 1);
    ck_assert_int_eq(buf[len - 1], '\n');
    ck_assert_ptr_eq(strchr(buf, '\n'), buf + len - 1);
    return buf;
}

/* json_value: skip one JSON value at *P (string or non-negative integer);
 * returns 0 when it is malformed. */
static int json_value(const char **p, int *is_string)
{
    const char *s = *p;

    if (*s == '"') {
        for (s++; *s != '"'; s++)
            if (*s == '\0' || *s == '\\' || *s == '\n')
                return 0;
        *p = s + 1;
        *is_string = 1;
        return 1;
    }
    if (*s < '0' || *s > '9')
        return 0;
    while (*s >= '0' && *s <= '9')
        s++;
    *p = s;
    *is_string = 0;
    return 1;
}

/* json_check: LINE is one flat JSON object of string keys and string or
 * integer values; each of KEYS is among them with a number (or a string
 * when its name is given with a leading '$'). */
static void json_check(const char *line, const char *const *keys,
                       size_t nkeys)
{
    const char *p = line;
    int found[32] = {0};

    ck_assert_uint_le(nkeys, 32);
    ck_assert_int_eq(*p++, '{');
    for (;;) {
        const char *key = p + 1, *kend;
        int is_string;

        ck_assert_int_eq(*p, '"');
        ck_assert(json_value(&p, &is_string));
        kend = p - 1;
        ck_assert_msg(*p++ == ':', "json: ':' expected in '%s'", line);
        ck_assert_msg(json_value(&p, &is_string), "json: bad value in '%s'",
                      line);
        for (size_t k = 0; k < nkeys; k++) {
            const char *want = keys[k] + (keys[k][0] == '$');
            if (strlen(want) == (size_t)(kend - key) &&
                strncmp(key, want, (size_t)(kend - key)) == 0) {
                ck_assert_msg(is_string == (keys[k][0] == '$'),
                              "json: %s has the wrong type", want);
                found[k]++;
            }
        }
        if (*p == ',') {
            p++;
            continue;
        }
        break;
    }
    ck_assert_msg(strcmp(p, "}\n") == 0, "json: trailing '%s'", p);
    for (size_t k = 0; k < nkeys; k++)
        ck_assert_msg(found[k] == 1, "json: key %s seen %d times", keys[k],
                      found[k]);
}

START_TEST(test_report_print)
{
    static const char *const kv_keys[] = {
        "io", "threads", "load_ns", "load_minflt", "load_majflt", "scale_ns",
        "scale_minflt", "scale_majflt", "release_ns", "release_minflt",
        "release_majflt", "write_ns", "write_minflt", "write_majflt", "in",
        "out", "input", "output", "factor", "filter", "status",
    };
    static const char *const json_keys[] = {
        "$input", "$output", "factor", "$filter", "$io", "threads", "load_ns", "load_minflt", "load_majflt",
        "scale_ns", "scale_minflt", "scale_majflt", "release_ns",
        "release_minflt", "release_majflt", "write_ns", "write_minflt",
        "write_majflt", "$in", "$out", "$status",
    };
    const char *in = fx_path("in.ppm");
    struct sp_image src;
    struct sp_report r;
    char *line, *tok, *save = NULL;
    size_t seen[sizeof kv_keys / sizeof kv_keys[0]] = {0};

    fx_make_image(&src, 37, 23, 3, 1, 255, 1);
    fx_write_image(in, &src);
    ck_assert_int_eq(run(in, fx_path("out.ppm"), SP_IO_MMAP, 2,
                         SP_FILTER_SAMPLE, 3, &r), SP_OK);

    line = print_report(&r, 0);
    ck_assert_ptr_nonnull(strstr(line, "io=mmap "));
    ck_assert_ptr_nonnull(strstr(line, "threads=3 "));
    ck_assert_ptr_nonnull(strstr(line, " in=37x23 "));
    ck_assert_ptr_nonnull(strstr(line, " out=74x46 status=ok\n"));
    /* Every token is key=value, every key once, the numbers numbers. */
    for (tok = strtok_r(line, " \n", &save); tok != NULL;
         tok = strtok_r(NULL, " \n", &save)) {
        char *eq = strchr(tok, '=');
        size_t k;

        ck_assert_msg(eq != NULL && eq != tok && eq[1] != '\0',
                      "token '%s' is not key=value", tok);
        *eq = '\0';
        for (k = 0; k < sizeof kv_keys / sizeof kv_keys[0]; k++)
            if (strcmp(tok, kv_keys[k]) == 0)
                break;
        ck_assert_msg(k < sizeof kv_keys / sizeof kv_keys[0],
                      "unknown key '%s'", tok);
        seen[k]++;
        if (strstr(tok, "_ns") || strstr(tok, "flt") ||
            strcmp(tok, "threads") == 0)
            ck_assert_msg(strspn(eq + 1, "0123456789") == strlen(eq + 1),
                          "%s=%s is not a number", tok, eq + 1);
    }
    for (size_t k = 0; k < sizeof kv_keys / sizeof kv_keys[0]; k++)
        ck_assert_msg(seen[k] == 1, "key %s seen %zu times", kv_keys[k],
                      seen[k]);
    free(line);

    line = print_report(&r, 1);
    json_check(line, json_keys, sizeof json_keys / sizeof json_keys[0]);
    ck_assert_ptr_nonnull(strstr(line, "\"io\":\"mmap\""));
    ck_assert_ptr_nonnull(strstr(line, "\"threads\":3"));
    ck_assert_ptr_nonnull(strstr(line, "\"out\":\"74x46\""));
    free(line);

    /* A failed run's report prints too. */
    ck_assert_int_ne(run(fx_path("none"), fx_path("o.ppm"), SP_IO_READ, 2,
                         SP_FILTER_SAMPLE, 3, &r), SP_OK);
    free(print_report(&r, 0));
    line = print_report(&r, 1);
    json_check(line, json_keys, sizeof json_keys / sizeof json_keys[0]);
    free(line);
    sp_image_release(&src);
}
END_TEST

/* The phases were measured: time passes in the load and the scale of a
 * non-trivial image, and page faults are counted in the phase that made
 * them: the load reads the raster into fresh memory, the scale writes
 * fresh output buffers. */
START_TEST(test_report_timings)
{
    const char *in = fx_path("in.ppm");
    struct sp_image src;
    struct sp_report r;

    fx_make_image(&src, 300, 200, 3, 1, 255, 1);
    fx_write_image(in, &src);
    ck_assert_int_eq(run(in, fx_path("out.ppm"), SP_IO_READ, 3,
                         SP_FILTER_SAMPLE, 2, &r), SP_OK);
    ck_assert_uint_gt(r.phase[SP_LOAD].ns, 0);
    ck_assert_uint_gt(r.phase[SP_SCALE].ns, 0);
    ck_assert_uint_gt(r.phase[SP_WRITE].ns, 0);
    ck_assert_int_gt(r.phase[SP_LOAD].minflt, 0);
    ck_assert_int_gt(r.phase[SP_SCALE].minflt, 0);
    sp_image_release(&src);
}
END_TEST

/* The SIGBUS guard: the input is truncated to its header between load and
 * scale, so every worker that reads the mapping faults.  With mmap that is
 * SP_E_CHANGED, not a dead process, and no output; so it is with pread,
 * whose reads come up short; with read the raster was already copied and
 * the job succeeds.  Many times, both filters (the
 * box filter's scratch memory must not leak when a worker jumps out). */
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
        struct sp_job job = {.in = in, .out = out, .io = io,
                             .factor = i % 4 < 2 ? -2 : 3,
                             .filter = i % 8 < 4 ? SP_FILTER_BOX
                                                 : SP_FILTER_SAMPLE,
                             .threads = 1 + (unsigned)i % 5,
                             .after_load = truncate_input,
                             .after_load_arg = (void *)in};
        sp_status st;

        fx_make_image(&img, 640, 480, 3, 1, 255, (unsigned)i);
        fx_write_image(in, &img);  /* 15-byte header: "P6\n640 480\n255\n" */
        sp_image_release(&img);
        unlink(out);
        st = sp_job_run(&job, &r);
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
    fx_ref_scale(&a, -2, SP_FILTER_BOX, &want);
    expect = fx_pnm_bytes(&want, &expect_len);
    for (int i = 0; i < 4 * 2 * 2 * 2; i++) {
        enum sp_io io = (enum sp_io)(i % 4);  /* read, mmap, pread, auto */
        struct change c = {in, b_file, len, (i / 4) % 2};
        int as_stdin = (i / 8) % 2;
        const char *out = fx_path(outs[i / 16]);
        struct sp_job job = {.in = as_stdin ? "-" : in, .out = out,
                             .io = io, .factor = -2, .filter = SP_FILTER_BOX,
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
        st = sp_job_run(&job, &r);
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
            ck_assert_str_eq(r.failed_path, job.in);
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
    struct sp_job job = {.in = in, .out = out, .io = SP_IO_MMAP, .factor = 2,
                         .threads = 2};
    struct sigaction now;

    fx_make_image(&img, 64, 48, 3, 1, 255, 1);
    fx_write_image(in, &img);
    sp_image_release(&img);
    ck_assert_int_eq(sp_job_run(&job, &r), SP_OK);  /* installs the handler */
    ck_assert_int_eq(sigaction(SIGBUS, NULL, &now), 0);
    ck_assert_msg((now.sa_flags & SA_SIGINFO) && now.sa_sigaction != NULL,
                  "no SIGBUS handler after a mapped run");
    raise(SIGBUS);
}
END_TEST

/* --max-pixels: an output or input over the limit is refused before the
 * output is allocated. */
START_TEST(test_max_pixels)
{
    struct sp_image img;
    struct sp_report r;
    const char *in = fx_path("in.ppm"), *out = fx_path("out.ppm");
    struct sp_job job = {.in = in, .out = out, .io = SP_IO_MMAP, .factor = 4,
                         .threads = 2, .max_pixels = 64 * 48 * 16 - 1};

    fx_make_image(&img, 64, 48, 3, 1, 255, 1);
    fx_write_image(in, &img);
    sp_image_release(&img);
    ck_assert_int_eq(sp_job_run(&job, &r), SP_E_LIMIT);
    ck_assert(strstr(r.why, "output is 256x192") != NULL);
    ck_assert(!fx_file_exists(out));
    job.max_pixels = 64 * 48 * 16;
    ck_assert_int_eq(sp_job_run(&job, &r), SP_OK);
    job.factor = -2;
    job.max_pixels = 64 * 48 - 1;
    ck_assert_int_eq(sp_job_run(&job, &r), SP_E_LIMIT);
    ck_assert(strstr(r.why, "input is 64x48") != NULL);
}
END_TEST

/* peak_kb: the most memory this process has held resident (VmHWM). */
static long peak_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;

    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    fclose(f);
    ck_assert_int_ge(kb, 0);
    return kb;
}

/* send_padded: a child writing HEAD and then PAD bytes of FILL into the
 * pipe FDS; it exits 0 when all were written, 2 when the reader left. */
static pid_t send_padded(const int fds[2], const char *head, int fill,
                         size_t pad)
{
    pid_t pid = fork();

    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        static char block[1 << 16];
        size_t len = strlen(head);

        close(fds[0]);
        signal(SIGPIPE, SIG_IGN);
        memset(block, fill, sizeof block);
        while (len > 0 || pad > 0) {
            size_t n = len > 0 ? len : pad < sizeof block ? pad : sizeof block;
            ssize_t w = write(fds[1], len > 0 ? head : block, n);

            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                _exit(errno == EPIPE ? 2 : 1);
            if (len > 0) {
                head += w;
                len -= (size_t)w;
            } else {
                pad -= (size_t)w;
            }
        }
        _exit(0);
    }
    close(fds[1]);
    return pid;
}

/* The bytes job_from_pipe sends after the header: well over the 32 MB the
 * tests allow the peak to rise, so that a loader that held them would fail;
 * fewer under a sanitizer, whose instrumented byte loops read the blanks
 * many times slower (300 MB took most of the minute under a loaded TSan). */
#ifdef UNDER_SANITIZER
#define PIPE_PAD ((size_t)96 << 20)
#else
#define PIPE_PAD ((size_t)300 << 20)
#endif

/* job_from_pipe: JOB run on HEAD then PIPE_PAD bytes of FILL sent through
 * a pipe (JOB's input is set to it).  Returns the status; *GROWTH gets how far
 * the peak resident memory rose, in kB, and *FED the sender's exit (2:
 * cut off before the end). */
static sp_status job_from_pipe(struct sp_job *job, const char *head,
                               int fill, long *growth, int *fed)
{
    struct sp_report r;
    char in[64];
    int fds[2], status;
    long before = peak_kb();
    pid_t pid;
    sp_status st;

    ck_assert_int_eq(pipe(fds), 0);
    pid = send_padded(fds, head, fill, PIPE_PAD);
    snprintf(in, sizeof in, "/dev/fd/%d", fds[0]);
    job->in = in;
    st = sp_job_run(job, &r);
    *growth = peak_kb() - before;
    close(fds[0]);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    *fed = WEXITSTATUS(status);
    job->in = NULL;
    return st;
}

/* --max-pixels is the loader's to apply, to the header: a pipe that
 * claims 100000x100000 and sends PIPE_PAD bytes is refused at once, having
 * held a few pages of it; a 1x1 P2 followed by PIPE_PAD blanks is scaled,
 * the blanks read through (as netpbm does, to know that no image
 * follows) in a few pages of memory. */
START_TEST(test_max_pixels_pipe)
{
    const char *out = fx_path("out.pnm");
    struct sp_job job = {.out = out, .io = SP_IO_READ, .factor = -2,
                         .threads = 2, .max_pixels = 1000};
    unsigned char *bytes;
    size_t len;
    long growth;
    int fed;

    ck_assert_int_eq(job_from_pipe(&job, "P6\n100000 100000\n255\n", 0,
                                   &growth, &fed), SP_E_LIMIT);
    ck_assert_msg(growth < 32 << 10, "peak memory rose %ld kB", growth);
    ck_assert_int_eq(fed, 2);
    ck_assert(!fx_file_exists(out));

    job.max_pixels = 0;
    ck_assert_int_eq(job_from_pipe(&job, "P2\n1 1\n255\n7\n", ' ', &growth,
                                   &fed), SP_OK);
    ck_assert_msg(growth < 32 << 10, "peak memory rose %ld kB", growth);
    ck_assert_int_eq(fed, 0);
    bytes = fx_read_file(out, &len);
    ck_assert_uint_eq(len, 12);
    ck_assert_mem_eq(bytes, "P5\n1 1\n255\n\007", 12);
    free(bytes);
}
END_TEST

static unsigned load_reads, load_maps;

static ssize_t counted_read(int fd, void *buf, size_t len)
{
    load_reads++;
    return read(fd, buf, len);
}

static void *counted_mmap(void *addr, size_t len, int prot, int flags,
                          int fd, off_t off)
{
    load_maps++;
    return mmap(addr, len, prot, flags, fd, off);
}

/* A 6000x6000 file (108 MB, sparse) over --max-pixels 1000: refused by
 * every load path before its raster is read or mapped. */
START_TEST(test_max_pixels_file)
{
    const char *in = fx_path("big.ppm"), *out = fx_path("out.ppm");
    static const char head[] = "P6\n6000 6000\n255\n";
    struct sp_report r;
    int fd = open(in, O_WRONLY | O_CREAT | O_TRUNC, 0600);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, head, strlen(head)), (ssize_t)strlen(head));
    ck_assert_int_eq(ftruncate(fd, (off_t)strlen(head) + 6000 * 6000 * 3),
                     0);
    close(fd);
    for (size_t pi = 0; pi < FX_NIO; pi++) {
        enum sp_io io = fx_io[pi];
        struct sp_job job = {.in = in, .out = out, .io = io,
                             .factor = 2, .threads = 2, .max_pixels = 1000};
        long before = peak_kb();

        load_reads = load_maps = 0;
        sp_sys.read = counted_read;
        sp_sys.mmap = counted_mmap;
        ck_assert_int_eq(sp_job_run(&job, &r), SP_E_LIMIT);
        sp_sys_reset();
        ck_assert(strstr(r.why, "input is 6000x6000") != NULL);
        ck_assert_str_eq(r.failed_path, in);
        ck_assert_uint_eq(load_reads, 0);
        ck_assert_uint_eq(load_maps, 0);
        ck_assert_int_lt(peak_kb() - before, 32 << 10);
        ck_assert(!fx_file_exists(out));
    }
}
END_TEST

/* ---- chunks ---- */

/* minflt_now: this process's minor faults so far. */
static long minflt_now(void)
{
    struct rusage ru;

    ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
    return ru.ru_minflt;
}

/* run_chunks: JOB with items of CHUNK bytes; the output is WANT's bytes,
 * the threads are clamped, and the phases are sane: each measured, none
 * negative, load and each later phase no longer than the run (scale and
 * write overlap), and together no more faults than the run took. */
static void run_chunks(struct sp_job *job, size_t chunk,
                       const unsigned char *want, size_t want_len,
                       size_t out_height, const char *what)
{
    struct sp_report r;
    uint64_t t0, wall;
    long f0, faults, sum_flt = 0;
    unsigned char *got;
    size_t len;
    sp_status st;

    job->chunk_bytes = chunk;
    f0 = minflt_now();
    t0 = sp_now_ns();
    st = sp_job_run(job, &r);
    wall = sp_now_ns() - t0;
    faults = minflt_now() - f0;
    expect(st == SP_OK, "%s: %s (%s)", what, sp_strerror(st), r.why);
    got = fx_read_file(job->out, &len);
    expect(len == want_len && memcmp(got, want, len) == 0,
           "%s: output differs", what);
    free(got);
    expect(r.load.io_used == job->io, "%s: io %d", what, r.load.io_used);
    expect(r.threads_used >= 1 && r.threads_used <= job->threads &&
           r.threads_used <= out_height, "%s: threads_used %u", what,
           r.threads_used);
    for (int i = 0; i < SP_NPHASES; i++) {
        expect(r.phase[i].minflt >= 0 && r.phase[i].majflt >= 0,
               "%s: phase %d faults %ld %ld", what, i, r.phase[i].minflt,
               r.phase[i].majflt);
        sum_flt += r.phase[i].minflt;
    }
    expect(r.phase[SP_LOAD].ns > 0 && r.phase[SP_SCALE].ns > 0 &&
           r.phase[SP_WRITE].ns > 0, "%s: a phase of 0 ns", what);
    expect(r.phase[SP_LOAD].ns + r.phase[SP_SCALE].ns <= wall &&
           r.phase[SP_LOAD].ns + r.phase[SP_RELEASE].ns <= wall &&
           r.phase[SP_LOAD].ns + r.phase[SP_WRITE].ns <= wall, "%s: load %llu, scale "
           "%llu, release %llu, write %llu ns; the run took %llu", what,
           (unsigned long long)r.phase[SP_LOAD].ns,
           (unsigned long long)r.phase[SP_SCALE].ns,
           (unsigned long long)r.phase[SP_RELEASE].ns,
           (unsigned long long)r.phase[SP_WRITE].ns,
           (unsigned long long)wall);
    expect(sum_flt <= faults, "%s: the phases add up to %ld faults, the run "
           "took %ld", what, sum_flt, faults);
}

/* Items of 1 byte (one row a thread), 7 bytes,
 * 1000 bytes and the default, against threads 1, 2, 3 and 10, read and
 * mmap, reduce, copy and enlarge, both filters: the output file is the
 * reference's, byte for byte.  _i picks the input: a 37x23 P6 or a
 * 16-bit 29x31 P5. */
START_TEST(test_chunks)
{
    static const size_t chunks[] = {1, 7, 1000, 0};
    static const unsigned threads[] = {1, 2, 3, 10};
    static const int factors[] = {-7, -4, -3, -2, 1, 2, 3, 5};
    const char *in = fx_path("in.pnm"), *out = fx_path("out.pnm");
    struct sp_image src;

    if (_i == 0)
        fx_make_image(&src, 37, 23, 3, 1, 255, 1);
    else
        fx_make_image(&src, 29, 31, 1, 2, 65535, 2);
    fx_write_image(in, &src);
    for (size_t fi = 0; fi < sizeof factors / sizeof factors[0]; fi++) {
        for (int f = SP_FILTER_SAMPLE; f <= SP_FILTER_BOX; f++) {
            struct sp_image want;
            unsigned char *expect_bytes;
            size_t expect_len;

            fx_ref_scale(&src, factors[fi], (enum sp_filter)f, &want);
            expect_bytes = fx_pnm_bytes(&want, &expect_len);
            for (size_t pi = 0; pi < FX_NIO; pi++) {
                enum sp_io io = fx_io[pi];

                for (size_t t = 0; t < sizeof threads / sizeof threads[0];
                     t++) {
                    for (size_t w = 0; w < sizeof chunks / sizeof chunks[0];
                         w++) {
                        struct sp_job job = {
                            .in = in, .out = out, .io = io,
                            .factor = factors[fi],
                            .filter = (enum sp_filter)f,
                            .threads = threads[t]};
                        char what[128];

                        snprintf(what, sizeof what, "by %d %s, %s, %u "
                                 "threads, chunk %zu", factors[fi],
                                 sp_filter_name((enum sp_filter)f),
                                 sp_io_name(io), threads[t],
                                 chunks[w]);
                        run_chunks(&job, chunks[w], expect_bytes, expect_len,
                                   want.height, what);
                    }
                }
            }
            free(expect_bytes);
            sp_image_release(&want);
        }
    }
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 2);
    sp_image_release(&src);
}
END_TEST

/* Outputs larger than the default chunk (SP_CHUNK), so that it too is cut
 * in several; and chunks
 * that do not divide the output. */
START_TEST(test_chunks_large)
{
    static const int factors[] = {-3, 2, 5};
    static const unsigned threads[] = {1, 3};
    static const size_t chunks[] = {0, 100000, 333333};
    const char *in = fx_path("in.ppm"), *out = fx_path("out.ppm");
    struct sp_image src;

    fx_make_image(&src, 301, 203, 3, 1, 255, 5);
    fx_write_image(in, &src);
    for (size_t fi = 0; fi < sizeof factors / sizeof factors[0]; fi++) {
        enum sp_filter filter = factors[fi] < 0 ? SP_FILTER_BOX
                                                : SP_FILTER_SAMPLE;
        struct sp_image want;
        unsigned char *expect_bytes;
        size_t expect_len;

        fx_ref_scale(&src, factors[fi], filter, &want);
        expect_bytes = fx_pnm_bytes(&want, &expect_len);
        for (size_t pi = 0; pi < FX_NIO; pi++) {
            enum sp_io io = fx_io[pi];

            for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
                for (size_t w = 0; w < sizeof chunks / sizeof chunks[0];
                     w++) {
                    struct sp_job job = {.in = in, .out = out,
                                         .io = io,
                                         .factor = factors[fi],
                                         .filter = filter,
                                         .threads = threads[t]};
                    char what[128];

                    snprintf(what, sizeof what, "301x203 by %d, %s, %u "
                             "threads, chunk %zu", factors[fi],
                             sp_io_name(io), threads[t],
                             chunks[w]);
                    run_chunks(&job, chunks[w], expect_bytes, expect_len,
                               want.height, what);
                }
            }
        }
        free(expect_bytes);
        sp_image_release(&want);
    }
    sp_image_release(&src);
}
END_TEST

/* The stb formats take the whole image at once, whatever the chunk: the
 * file is what sp_write() makes of the reference. */
START_TEST(test_chunks_stb)
{
    static const char *const names[] = {"out.png", "out.bmp", "out.tga"};
    const char *in = fx_path("in.ppm"), *ref = fx_path("ref");
    struct sp_image src, want;
    char why[SP_WHY_MAX];

    fx_make_image(&src, 37, 23, 3, 1, 255, 6);
    fx_write_image(in, &src);
    fx_ref_scale(&src, 3, SP_FILTER_SAMPLE, &want);
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        enum sp_outfmt fmt;
        unsigned char *expect_bytes;
        size_t expect_len;

        ck_assert_int_eq(sp_outfmt_for(names[n], &fmt), SP_OK);
        ck_assert_int_eq(sp_write(&want, ref, fmt, why), SP_OK);
        expect_bytes = fx_read_file(ref, &expect_len);
        for (size_t pi = 0; pi < FX_NIO; pi++) {
            enum sp_io io = fx_io[pi];

            for (unsigned threads = 1; threads <= 4; threads += 3) {
                struct sp_job job = {.in = in, .out = fx_path(names[n]),
                                     .io = io, .factor = 3,
                                     .threads = threads};
                char what[96];

                snprintf(what, sizeof what, "%s, %s, %u threads", names[n],
                         sp_io_name(io), threads);
                run_chunks(&job, 1, expect_bytes, expect_len, want.height,
                           what);
            }
        }
        free(expect_bytes);
    }
    sp_image_release(&want);
    sp_image_release(&src);
}
END_TEST

/* ---- giving back the rows of a mapped input ----
 *
 * The seam records the input's mapping and every madvise, and makes each
 * range given back inaccessible (PROT_NONE): a row read after it was
 * given back faults, and the fault names the case. */

#define MAX_ADVICE 4096

static struct {
    unsigned char *base;         /* the last mapping made */
    size_t len;
    int maps;
    size_t n;
    unsigned char *addr[MAX_ADVICE];
    size_t size[MAX_ADVICE];
    int advice[MAX_ADVICE];
    int hide;                    /* mprotect what is given back */
} seen;

static char where[160];

static void on_fault(int sig)
{
    static const char pre[] = "fault in case: ";
    static const char post[] = " (a row read after it was given back?)\n";
    ssize_t ignored;

    ignored = write(STDERR_FILENO, pre, sizeof pre - 1);
    ignored = write(STDERR_FILENO, where, strnlen(where, sizeof where));
    ignored = write(STDERR_FILENO, post, sizeof post - 1);
    (void)ignored;
    signal(sig, SIG_DFL);
}

static void *recording_mmap(void *addr, size_t len, int prot, int flags,
                            int fd, off_t off)
{
    void *p = mmap(addr, len, prot, flags, fd, off);

    if (p != MAP_FAILED) {
        seen.base = p;
        seen.len = len;
        seen.maps++;
    }
    return p;
}

static int recording_madvise(void *addr, size_t len, int advice)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    if (seen.n < MAX_ADVICE) {
        seen.addr[seen.n] = addr;
        seen.size[seen.n] = len;
        seen.advice[seen.n] = advice;
    }
    seen.n++;
    if (seen.hide && len > 0 &&
        mprotect(addr, (len + page - 1) / page * page, PROT_NONE) != 0)
        return -1;
    return madvise(addr, len, advice);
}

/* check_advice: the calls seen are MADV_DONTNEED of page-aligned ranges,
 * each starting where the one before ended, from the mapping's base: the
 * drops (all but the last) whole pages, the last (the release) ending at
 * the mapping's end. */
static void check_advice(const char *what)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *at = seen.base;

    expect(seen.maps == 1, "%s: %d mappings", what, seen.maps);
    expect(seen.n >= 1 && seen.n <= MAX_ADVICE, "%s: %zu madvise calls",
           what, seen.n);
    for (size_t i = 0; i < seen.n; i++) {
        expect(seen.advice[i] == MADV_DONTNEED, "%s: call %zu advice %d",
               what, i, seen.advice[i]);
        expect(seen.addr[i] == at, "%s: call %zu at offset %td, want %td",
               what, i, seen.addr[i] - seen.base, at - seen.base);
        expect((size_t)(seen.addr[i] - seen.base) % page == 0,
               "%s: call %zu not page-aligned", what, i);
        if (i + 1 < seen.n)
            expect(seen.size[i] > 0 && seen.size[i] % page == 0,
                   "%s: drop %zu of %zu bytes", what, i, seen.size[i]);
        at += seen.size[i];
    }
    expect(at == seen.base + seen.len, "%s: the calls end at %td of %zu",
           what, at - seen.base, seen.len);
}

/* A mapped input through chunks of every size: only whole pages before
 * the rows still to be read are given back, in order, and the release
 * gives back the rest; the output is still the reference's.  A read
 * (malloc'd) or pread input never calls madvise. */
START_TEST(test_drop_rows_job)
{
    static const int factors[] = {-3, -2, 1, 2, 3};
    static const unsigned threads[] = {1, 3};
    static const size_t chunks[] = {1, 5000, 0};
    const char *in = fx_path("in.ppm"), *out = fx_path("out.ppm");
    struct sp_image src;

    signal(SIGSEGV, on_fault);
    fx_make_image(&src, 300, 200, 3, 1, 255, 9);  /* 180 KB: 44 pages */
    fx_write_image(in, &src);
    for (size_t fi = 0; fi < sizeof factors / sizeof factors[0]; fi++) {
        for (int f = SP_FILTER_SAMPLE; f <= SP_FILTER_BOX; f++) {
            struct sp_image want;
            unsigned char *expect_bytes;
            size_t expect_len;

            fx_ref_scale(&src, factors[fi], (enum sp_filter)f, &want);
            expect_bytes = fx_pnm_bytes(&want, &expect_len);
            for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
                for (size_t w = 0; w < sizeof chunks / sizeof chunks[0];
                     w++) {
                    for (size_t pi = 0; pi < FX_NIO; pi++) {
                        enum sp_io io = fx_io[pi];
                        struct sp_job job = {
                            .in = in, .out = out, .io = io,
                            .factor = factors[fi],
                            .filter = (enum sp_filter)f,
                            .threads = threads[t]};

                        snprintf(where, sizeof where, "by %d %s, %s, %u "
                                 "threads, chunk %zu", factors[fi],
                                 sp_filter_name((enum sp_filter)f),
                                 sp_io_name(io), threads[t],
                                 chunks[w]);
                        job.drop_grain = (size_t)sysconf(_SC_PAGESIZE);
                        memset(&seen, 0, sizeof seen);
                        seen.hide = 1;
                        sp_sys.mmap = recording_mmap;
                        sp_sys.madvise = recording_madvise;
                        run_chunks(&job, chunks[w], expect_bytes,
                                   expect_len, want.height, where);
                        sp_sys_reset();
                        if (io != SP_IO_MMAP) {
                            expect(seen.n == 0, "%s: %zu madvise calls",
                                   where, seen.n);
                            continue;
                        }
                        check_advice(where);
                        /* One row an item: the rows are given back as
                         * the items pass, not all at the end. */
                        if (chunks[w] == 1 && threads[t] == 1)
                            expect(seen.n >= 10, "%s: %zu madvise calls",
                                   where, seen.n);
                    }
                }
            }
            free(expect_bytes);
            sp_image_release(&want);
        }
    }
    sp_image_release(&src);
}
END_TEST

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
        struct sp_job job = {.in = in, .out = out, .io = io,
                             .factor = 1, .threads = 2,
                             .after_load = rename_over, .after_load_arg = &s};
        struct sp_report r;
        sp_status st;

        fx_write_file(in, a, a_len);
        fx_write_file(other, b, b_len);
        st = sp_job_run(&job, &r);
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
        struct sp_job job = {.out = out, .io = SP_IO_READ, .factor = 1,
                             .threads = 2};
        struct sp_report r;
        sp_status st;
        int p[2] = {-1, -1}, status;
        pid_t pid;

        data = images_bytes(3, 3, seps[i % 3], &len, &want, &want_len);
        one = want_len / 3;
        first_len = 2 * (one + strlen(seps[i % 3]));
        if (i < 3) {
            job.in = fifo;
            pid = send_slowly(fifo, -1, data, len, first_len);
        } else {
            ck_assert_int_eq(pipe(p), 0);
            pid = send_slowly(NULL, p[1], data, len, first_len);
            close(p[1]);
            snprintf(byfd, sizeof byfd, "/dev/fd/%d", p[0]);
            job.in = byfd;
        }
        st = sp_job_run(&job, &r);
        if (p[0] >= 0)
            close(p[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(st == SP_OK, "%s, separator %d: %s", job.in, i % 3,
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
        struct sp_job job = {.in = as_stdin ? "-" : in, .out = out,
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
        st = sp_job_run(&job, &r);
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

/* Anything after an image that is not whitespace then an image (a JPEG's
 * first bytes, text, a lone 'P', a NUL) fails the job as netpbm's tools
 * fail (bad magic number): SP_E_NOTPNM naming the image, no output; by
 * every load path and through a pipe.  At 1cd7bc8: exit 0, the rest
 * ignored. */
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
        struct sp_job job = {.in = in, .out = out,
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
            job.in = byfd;
        }
        unlink(out);
        st = sp_job_run(&job, &r);
        if (p[0] >= 0) {
            close(p[0]);
            ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        }
        ck_assert_msg(st == SP_E_NOTPNM, "case %d: %s", i, sp_strerror(st));
        ck_assert_str_eq(r.failed_path, job.in);
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
    struct sp_job job = {.in = fifo, .out = out, .io = SP_IO_READ,
                         .factor = 1, .threads = 1, .open_nowait = 1};
    struct sp_report r;
    unsigned char *data, *want;
    size_t len, want_len;
    int keep, w, status;
    pid_t pid;

    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(sp_job_run(&job, &r), SP_E_EMPTY);
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
    ck_assert_int_eq(sp_job_run(&job, &r), SP_OK);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_uint_eq(r.images, 2);
    ck_assert(same_file(out, want, want_len));
    close(keep);
    free(data);
    free(want);
}
END_TEST

static Suite *job_suite(void)
{
    Suite *s = suite_create("job");
    TCase *tc = fx_tcase("run");

    tcase_add_loop_test(tc, test_equivalence, 0, 2);
    tcase_add_test(tc, test_out_is_in);
    tcase_add_test(tc, test_report_fields);
    tcase_add_test(tc, test_io_auto);
    tcase_add_test(tc, test_pread_reads_only_its_rows);
    tcase_add_test(tc, test_pread_readahead);
    tcase_add_test(tc, test_errors_leave_no_output);
    tcase_add_test(tc, test_output_too_large);
    tcase_add_test(tc, test_stdin_stdout);
    tcase_add_test(tc, test_report_print);
    tcase_add_test(tc, test_report_timings);
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
    tcase_add_test(tc, test_max_pixels);
    tcase_add_test(tc, test_max_pixels_pipe);
    tcase_add_test(tc, test_max_pixels_file);
    suite_add_tcase(s, tc);

    tc = fx_tcase("chunks");
    tcase_add_loop_test(tc, test_chunks, 0, 2);
    tcase_add_test(tc, test_chunks_large);
    tcase_add_test(tc, test_chunks_stb);
    tcase_add_test(tc, test_drop_rows_job);
    suite_add_tcase(s, tc);

    tc = fx_tcase("images");
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
    return fx_run(job_suite());
}
