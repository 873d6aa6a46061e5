/* The batch runner's own functions (batch_test.sh and
 * batch_options_test.sh run its command line): the time-left estimate,
 * held against a simulated batch whose truth is known, a batch run when
 * no thread can be started, and the read path's buffer kept from image
 * to image (--read-buffer). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "batch.h"
#include "fixtures.h"
#include "parallel.h"
#include "sys.h"

#define NS 1000000000ULL

/* A simulated batch: N files of SIZE[i] bytes on W workers, each file
 * taking its bytes / SPEED seconds, each worker taking the next file as
 * it becomes free (the batch's order).  START and END are each file's, in
 * ns, and TOTAL the batch's. */
struct sim {
    size_t n;
    unsigned w;
    uint64_t size[200], start[200], end[200], total;
};

static void simulate(struct sim *s, double speed)
{
    uint64_t free_at[16] = {0};

    ck_assert_uint_le(s->w, 16);
    s->total = 0;
    for (size_t i = 0; i < s->n; i++) {
        unsigned k = 0;

        for (unsigned j = 1; j < s->w; j++)
            if (free_at[j] < free_at[k])
                k = j;
        s->start[i] = free_at[k];
        s->end[i] = s->start[i] + (uint64_t)((double)s->size[i] / speed *
                                             (double)NS);
        free_at[k] = s->end[i];
        if (s->end[i] > s->total)
            s->total = s->end[i];
    }
}

/* estimate_at: sp_batch_eta given what the batch knows at NOW. */
static double estimate_at(const struct sim *s, uint64_t now)
{
    struct sp_eta_file fly[16];
    size_t nfly = 0;
    uint64_t left = 0, done_bytes = 0, done_ns = 0;

    for (size_t i = 0; i < s->n; i++) {
        if (s->start[i] > now)
            left += s->size[i];
        else if (s->end[i] <= now) {
            done_bytes += s->size[i];
            done_ns += s->end[i] - s->start[i];
        } else
            fly[nfly++] = (struct sp_eta_file){s->size[i], s->start[i]};
    }
    return sp_batch_eta(left, done_bytes, done_ns, fly, nfly, now, s->w);
}

/* check_from_tenth: from a tenth of the run to its end, in hundredths,
 * every estimate given is within 25% of the time truly left, or half a
 * second (the line shows whole seconds; in the last files' tail a quarter
 * is less); returns how many were given. */
static int check_from_tenth(const struct sim *s)
{
    int given = 0;

    for (int c = 10; c < 100; c++) {
        uint64_t now = s->total * (uint64_t)c / 100;
        double truth = (double)(s->total - now) / (double)NS;
        double est = estimate_at(s, now);

        if (est < 0)
            continue;
        given++;
        double slack = truth * 0.25 > 0.5 ? truth * 0.25 : 0.5;

        ck_assert_msg(est >= truth - slack && est <= truth + slack,
                      "at %d%% of the run: %.2f s estimated, %.2f s left",
                      c, est, truth);
    }
    return given;
}

START_TEST(test_no_rate)
{
    struct sp_eta_file fly[2] = {{1000, 0}, {2000, 0}};

    /* Nothing ended yet, or only files with no bytes: no estimate. */
    ck_assert(sp_batch_eta(5000, 0, 0, fly, 2, NS, 2) < 0);
    ck_assert(sp_batch_eta(5000, 0, NS, fly, 2, NS, 2) < 0);
}
END_TEST

/* 72 files of the same size on 8 workers (the photographs): the
 * estimate is exact once the first files end, where the count of files
 * ended was off until a whole round had ended. */
START_TEST(test_equal_files)
{
    static struct sim s = {.n = 72, .w = 8};

    for (size_t i = 0; i < s.n; i++)
        s.size[i] = 24000000;
    simulate(&s, 80e6);
    ck_assert_int_gt(check_from_tenth(&s), 80);
}
END_TEST

/* Sizes from 1 to 4 MB in a fixed shuffled order, 4 workers. */
START_TEST(test_mixed_files)
{
    static struct sim s = {.n = 150, .w = 4};
    uint32_t x = 12345;

    for (size_t i = 0; i < s.n; i++) {
        x = x * 1103515245u + 12345u;
        s.size[i] = 1000000 + (x >> 8) % 3000000;
    }
    simulate(&s, 5e6);
    ck_assert_int_gt(check_from_tenth(&s), 85);
}
END_TEST

/* A file in progress past its expected time is credited its size, not
 * more: the estimate never goes negative; a file one job's: the last
 * big file alone bounds the estimate from below. */
START_TEST(test_bounds)
{
    struct sp_eta_file late = {1000000, 0}, big = {100000000, 0};

    /* rate 1 byte/ns a job, the late file started 10 ms ago */
    ck_assert(sp_batch_eta(0, 1000, 1000, &late, 1, 10000000, 4) == 0);
    /* 100 MB at 1 byte/ns is 0.1 s, whatever the workers */
    ck_assert(sp_batch_eta(0, 1000, 1000, &big, 1, 0, 8) >= 0.0999);
}
END_TEST

/* fail_create: the thread seam: no thread can be started. */
static int fail_create(pthread_t *tid, const pthread_attr_t *attr,
                       void *(*routine)(void *), void *arg)
{
    (void)tid;
    (void)attr;
    (void)routine;
    (void)arg;
    return EAGAIN;
}

START_TEST(test_no_thread)
{
    static const unsigned char px[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    char *in[2], *out[2];
    struct sp_batch b = {.job = {.io = SP_IO_AUTO, .filter = SP_FILTER_SAMPLE,
                                 .factor = 2, .threads = 4},
                         .in = in, .out = out, .n = 2,
                         .buffers = SP_BUFFER_REUSE};
    struct sp_tally t;

    in[0] = strdup(fx_path("a.ppm"));
    in[1] = strdup(fx_path("b.ppm"));
    out[0] = strdup(fx_path("a2.ppm"));
    out[1] = strdup(fx_path("b2.ppm"));
    fx_write_pnm(in[0], "P6\n2 2\n255\n", px, sizeof px);
    fx_write_pnm(in[1], "P6\n2 2\n255\n", px, sizeof px);
    sigemptyset(&b.stop_signals);
    sp_run_thread_create = fail_create;
    ck_assert_int_eq(sp_batch_run(&b, &t), SP_OK);
    sp_run_thread_create = pthread_create;
    ck_assert_uint_eq(t.scaled, 2);
    ck_assert(fx_file_exists(out[0]) && fx_file_exists(out[1]));
    for (int i = 0; i < 2; i++) {
        free(in[i]);
        free(out[i]);
    }
}
END_TEST

/* The read path's buffers: where each raster of RASTER bytes was read
 * into (the first read of a sp_sys_read_full: the buffer's start). */
#define RW 1024
#define RH 512
#define RASTER ((size_t)RW * RH * 3)
static unsigned char *raster_buf[64];
static unsigned raster_reads;

static ssize_t noting_read(int fd, void *buf, size_t len)
{
    if (len == RASTER) {
        unsigned k = __atomic_fetch_add(&raster_reads, 1, __ATOMIC_RELAXED);

        if (k < sizeof raster_buf / sizeof raster_buf[0])
            raster_buf[k] = buf;
    }
    return read(fd, buf, len);
}

/* reads_batch: a batch of N inputs IN (the first of two images) by the
 * read path on one worker with read buffer POLICY; the minor faults it
 * took.  raster_buf and raster_reads say where the rasters went. */
static long reads_batch(char **in, char **out, size_t n,
                        enum sp_buffer_policy policy)
{
    struct sp_batch b = {.job = {.io = SP_IO_READ, .filter = SP_FILTER_SAMPLE,
                                 .factor = -8, .threads = 1},
                         .in = in, .out = out, .n = n, .buffers = policy};
    struct sp_tally t;
    struct rusage r0, r1;

    sigemptyset(&b.stop_signals);
    raster_reads = 0;
    sp_sys.read = noting_read;
    ck_assert_int_eq(getrusage(RUSAGE_SELF, &r0), 0);
    ck_assert_int_eq(sp_batch_run(&b, &t), SP_OK);
    ck_assert_int_eq(getrusage(RUSAGE_SELF, &r1), 0);
    sp_sys_reset();
    ck_assert_uint_eq(t.scaled, n);
    ck_assert_uint_eq(raster_reads, n + 1);
    return r1.ru_minflt - r0.ru_minflt;
}

/* raster_faults: the minor faults of filling RASTER bytes of new pages
 * (fewer than its pages where the kernel maps larger folios). */
static long raster_faults(void)
{
    struct rusage r0, r1;
    unsigned char *p = mmap(NULL, RASTER, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    ck_assert_ptr_ne(p, MAP_FAILED);
    ck_assert_int_eq(getrusage(RUSAGE_THREAD, &r0), 0);
    memset(p, 1, RASTER);
    ck_assert_int_eq(getrusage(RUSAGE_THREAD, &r1), 0);
    munmap(p, RASTER);
    return r1.ru_minflt - r0.ru_minflt;
}

/* --read-buffer reuse: every image of the batch, of every file, is read
 * into the one buffer, which is the first image's; --read-buffer fresh:
 * each image's buffer is new pages, so that the batch takes the faults of
 * filling new pages for most of each raster after the first, which reuse
 * does not. */
START_TEST(test_read_buffer)
{
    enum { N = 6 };
    long per_raster = raster_faults();
    char *in[N], *out[N];
    struct sp_image img;
    unsigned char *a, *b;
    size_t a_len, b_len;
    long reuse, fresh;

    fx_make_image(&img, RW, RH, 3, 1, 255, 1);
    a = fx_pnm_bytes(&img, &a_len);
    sp_image_release(&img);
    fx_make_image(&img, RW, RH, 3, 1, 255, 2);
    b = fx_pnm_bytes(&img, &b_len);
    sp_image_release(&img);
    for (int i = 0; i < N; i++) {
        char name[32];

        snprintf(name, sizeof name, "in%d.ppm", i);
        in[i] = strdup(fx_path(name));
        snprintf(name, sizeof name, "out%d.ppm", i);
        out[i] = strdup(fx_path(name));
        fx_write_file(in[i], i % 2 ? b : a, a_len);
    }
    /* the first file holds two images */
    a = realloc(a, a_len + b_len);
    ck_assert_ptr_nonnull(a);
    memcpy(a + a_len, b, b_len);
    fx_write_file(in[0], a, a_len + b_len);

    reuse = reads_batch(in, out, N, SP_BUFFER_REUSE);
    for (unsigned k = 1; k < raster_reads; k++)
        ck_assert_msg(raster_buf[k] == raster_buf[0],
                      "reuse: raster %u read into %p, raster 1 into %p",
                      k + 1, (void *)raster_buf[k], (void *)raster_buf[0]);
    /* (fresh last: it fixes glibc's mmap threshold for the process, as
     * the program does for --read-buffer fresh) */
    sp_buffer_fresh_pages();
    fresh = reads_batch(in, out, N, SP_BUFFER_FRESH);
    if (per_raster < 32)  /* large folios: faults cannot tell */
        fprintf(stderr, "test_read_buffer: %ld faults fill %zu bytes: the "
                "faults not checked\n", per_raster, RASTER);
    else
        ck_assert_msg(fresh - reuse >= N * per_raster / 2,
                      "%ld minor faults with reuse, %ld fresh: reuse should "
                      "save most of the %ld of each of the %d rasters "
                      "after the first", reuse, fresh, per_raster, N);
    for (int i = 0; i < N; i++) {
        free(in[i]);
        free(out[i]);
    }
    free(a);
    free(b);
}
END_TEST

/* What a recording reporter saw (reporter.h). */
struct record {
    int scaled, failed, skipped, over, progress;
    sp_status failed_st;
    size_t failed_i;
};

static void record_file(void *arg, size_t i, sp_status st,
                        const struct sp_report *r)
{
    struct record *rec = arg;

    if (st != SP_OK) {
        rec->failed++;
        rec->failed_st = st;
        rec->failed_i = i;
    } else if (r->skipped) {
        rec->skipped++;
    } else {
        rec->scaled++;
    }
}

static void record_progress(void *arg, const struct sp_progress *p)
{
    struct record *rec = arg;

    ck_assert_uint_le(p->done, p->files);
    rec->progress++;
}

static void record_over(void *arg)
{
    ((struct record *)arg)->over++;
}

/* three_files: a.ppm (scaled), b.ppm (no image: fails) and c.ppm (its
 * output whole already: skipped with skip_existing) into B. */
static void three_files(struct sp_batch *b, char **in, char **out)
{
    static const unsigned char px[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    static const char *const name[3][2] = {
        {"a.ppm", "a2.ppm"}, {"b.ppm", "b2.ppm"}, {"c.ppm", "c2.ppm"}};

    for (int i = 0; i < 3; i++) {
        in[i] = strdup(fx_path(name[i][0]));
        out[i] = strdup(fx_path(name[i][1]));
    }
    fx_write_pnm(in[0], "P6\n2 2\n255\n", px, sizeof px);
    fx_write_text(in[1], "not an image\n");
    fx_write_pnm(in[2], "P6\n2 2\n255\n", px, sizeof px);
    fx_write_pnm(out[2], "P6\n1 1\n255\n", px, 3);
    *b = (struct sp_batch){.job = {.io = SP_IO_AUTO,
                                   .filter = SP_FILTER_SAMPLE, .factor = 2,
                                   .threads = 2},
                           .in = in, .out = out, .n = 3,
                           .buffers = SP_BUFFER_REUSE, .skip_existing = 1};
    sigemptyset(&b->stop_signals);
}

/* The batch prints nothing: each file's end goes to the reporter. */
START_TEST(test_reporter)
{
    char *in[3], *out[3];
    struct sp_batch b;
    struct sp_tally t;
    struct record rec = {0};
    int saved = dup(STDERR_FILENO);
    size_t len;
    unsigned char *said;

    three_files(&b, in, out);
    b.reporter = (struct sp_reporter){.arg = &rec, .file = record_file,
                                      .progress = record_progress,
                                      .over = record_over};
    /* stderr into a file, to see that nothing is printed */
    fflush(stderr);
    ck_assert_int_ge(saved, 0);
    ck_assert_int_ge(freopen(fx_path("stderr"), "w", stderr) != NULL, 1);
    ck_assert_int_eq(sp_batch_run(&b, &t), SP_E_NOTPNM);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    said = fx_read_file(fx_path("stderr"), &len);
    ck_assert_msg(len == 0, "the batch printed: %s", said);
    free(said);
    ck_assert_int_eq(rec.scaled, 1);
    ck_assert_int_eq(rec.failed, 1);
    ck_assert_int_eq(rec.failed_st, SP_E_NOTPNM);
    ck_assert_uint_eq(rec.failed_i, 1);
    ck_assert_int_eq(rec.skipped, 1);
    ck_assert_int_eq(rec.over, 1);
    ck_assert(t.scaled == 1 && t.failed == 1 && t.skipped == 1);
    for (int i = 0; i < 3; i++) {
        free(in[i]);
        free(out[i]);
    }
}
END_TEST

/* The caller's token stops the batch: no file taken, EINTR, nothing
 * reported but the end; and a failure under fail_fast sets it. */
START_TEST(test_caller_token)
{
    char *in[3], *out[3];
    struct sp_batch b;
    struct sp_tally t;
    struct record rec = {0};
    struct sp_cancel token = {0};

    three_files(&b, in, out);
    b.reporter = (struct sp_reporter){.arg = &rec, .file = record_file,
                                      .over = record_over};
    b.job.cancel = &token;
    sp_cancel_set(&token);
    ck_assert_int_eq(sp_batch_run(&b, &t), EINTR);
    ck_assert(t.scaled == 0 && t.failed == 0 && t.skipped == 0);
    ck_assert(rec.scaled == 0 && rec.failed == 0 && rec.over == 1);
    ck_assert(!fx_file_exists(out[0]));

    token = (struct sp_cancel){0};
    b.fail_fast = 1;
    b.job.threads = 1;  /* one file after another: a, then b fails */
    ck_assert_int_eq(sp_batch_run(&b, &t), SP_E_NOTPNM);
    ck_assert(sp_cancelled(&token));
    ck_assert(t.scaled == 1 && t.failed == 1 && t.skipped == 0);
    for (int i = 0; i < 3; i++) {
        free(in[i]);
        free(out[i]);
    }
}
END_TEST

static Suite *batch_suite(void)
{
    Suite *s = suite_create("batch_unit");
    TCase *tc = fx_tcase("eta");

    tcase_add_test(tc, test_no_rate);
    tcase_add_test(tc, test_equal_files);
    tcase_add_test(tc, test_mixed_files);
    tcase_add_test(tc, test_bounds);
    suite_add_tcase(s, tc);
    tc = fx_tcase("run");
    tcase_add_test(tc, test_no_thread);
    tcase_add_test(tc, test_read_buffer);
    tcase_add_test(tc, test_reporter);
    tcase_add_test(tc, test_caller_token);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(batch_suite());
}
