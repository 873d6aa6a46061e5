/* test_batch_run.c: a batch run: when no thread can be started, the read
 * path's buffer kept from image to image (--read-buffer), its reports to a
 * recording reporter (nothing printed), the caller's token. */
#include "batch_lib.h"

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
    struct sp_batch b = {.job = {.io = SP_IO_AUTO, .filter = &sp_filter_sample,
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
    struct sp_batch b = {.job = {.io = SP_IO_READ, .filter = &sp_filter_sample,
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

    /* The threshold fixed for both runs (--read-buffer fresh fixes it):
     * fixed only before the fresh run, the reuse run's buffer, made under
     * glibc's dynamic threshold, can be left free in the worker's arena
     * below a chunk still held, and every fresh raster is then carved
     * from its pages, touched already.  Reuse keeps one buffer either
     * way. */
    sp_buffer_fresh_pages();
    reuse = reads_batch(in, out, N, SP_BUFFER_REUSE);
    for (unsigned k = 1; k < raster_reads; k++)
        ck_assert_msg(raster_buf[k] == raster_buf[0],
                      "reuse: raster %u read into %p, raster 1 into %p",
                      k + 1, (void *)raster_buf[k], (void *)raster_buf[0]);
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
                                   .filter = &sp_filter_sample, .factor = 2,
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

static Suite *batch_run_suite(void)
{
    Suite *s = suite_create("batch_run");
    TCase *tc = fx_tcase("run");
    tcase_add_test(tc, test_no_thread);
    tcase_add_test(tc, test_read_buffer);
    tcase_add_test(tc, test_reporter);
    tcase_add_test(tc, test_caller_token);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(batch_run_suite());
}
