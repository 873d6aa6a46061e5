/* Jobs side by side: 16 jobs run at once in one process, over every load
 * path (read, mmap, pread, auto), every input kind (PBM, 16-bit PGM,
 * PPM, PAM with alpha, plain P3), a stream (a pipe a thread writes, two
 * images in it), an input cut short and a job whose own token is set
 * (cancel.h) while it runs.  Each must end as its own single run ends:
 * the same status, and the same output bytes, or no output.  With no
 * global state in the library, nothing one job does reaches another;
 * run_tests.sh --tsan and --sanitize run this suite under ThreadSanitizer
 * and AddressSanitizer. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "cancel.h"
#include "fixtures.h"
#include "job.h"
#include "write_whole.h"

#define NJOBS 16

/* The inputs, made once a test. */
enum input { PPM, PGM16, PBM, PAM, P3, CUT, STREAM, NINPUTS };

static const char *const input_name[NINPUTS] = {
    "in.ppm", "in16.pgm", "in.pbm", "in.pam", "plain.ppm", "cut.ppm",
    NULL /* a pipe each run */};

struct data {
    unsigned char *bytes;
    size_t len;
};

/* One job of the 16. */
struct kase {
    enum input in;
    enum sp_io io;
    int factor;
    const struct sp_filter_row *filter;
    const char *ext;       /* the output's, which names its format */
    size_t chunk_bytes;    /* 0: SP_CHUNK; small: many items */
    int cancel;            /* the job's token is set once it has loaded */
};

static const struct kase kases[NJOBS] = {
    {PPM, SP_IO_READ, 2, &sp_filter_sample, "pnm", 4096, 0},
    {PPM, SP_IO_MMAP, -2, &sp_filter_box, "pnm", 0, 0},
    {PPM, SP_IO_PREAD, 3, &sp_filter_sample, "png", 0, 0},
    {PPM, SP_IO_AUTO, -3, &sp_filter_box, "pam", 2048, 0},
    {PGM16, SP_IO_READ, 2, &sp_filter_sample, "pnm", 0, 0},
    {PGM16, SP_IO_MMAP, -2, &sp_filter_box, "pnm", 4096, 0},
    {PGM16, SP_IO_PREAD, 2, &sp_filter_box, "pnm", 4096, 0},
    {PBM, SP_IO_READ, 2, &sp_filter_sample, "pnm", 0, 0},
    {PBM, SP_IO_MMAP, -2, &sp_filter_box, "pnm", 1024, 0},
    {PBM, SP_IO_PREAD, 3, &sp_filter_sample, "pnm", 1024, 0},
    {PAM, SP_IO_MMAP, 2, &sp_filter_sample, "pam", 4096, 0},
    {PAM, SP_IO_PREAD, -2, &sp_filter_box, "png", 0, 0},
    {P3, SP_IO_AUTO, 2, &sp_filter_sample, "pnm", 0, 0},
    {STREAM, SP_IO_AUTO, 2, &sp_filter_sample, "pnm", 4096, 0},
    {CUT, SP_IO_MMAP, 2, &sp_filter_sample, "pnm", 0, 0},
    {PPM, SP_IO_PREAD, 2, &sp_filter_sample, "pnm", 4096, 1},
};

static struct data input[NINPUTS];

/* rnd: a fixed sequence of bytes (a linear congruential generator). */
static unsigned rnd(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return *state >> 16 & 0xff;
}

/* make: HEADER and LEN samples' bytes from SEED into D (malloc'd). */
static void make(struct data *d, const char *header, size_t len,
                 unsigned seed)
{
    size_t h = strlen(header);

    d->bytes = malloc(h + len);
    ck_assert_ptr_nonnull(d->bytes);
    memcpy(d->bytes, header, h);
    for (size_t i = 0; i < len; i++)
        d->bytes[h + i] = (unsigned char)rnd(&seed);
    d->len = h + len;
}

static void make_inputs(void)
{
    enum { PBM_W = 131, PBM_H = 45, PBM_ROW = (PBM_W + 7) / 8 };
    size_t n = 0, cap = 23 * 17 * 3 * 4 + 64;
    unsigned seed = 7;
    char *text = malloc(cap);

    make(&input[PPM], "P6\n101 67\n255\n", 101 * 67 * 3, 1);
    make(&input[PGM16], "P5\n83 59\n65535\n", 83 * 59 * 2, 2);
    make(&input[PBM], "P4\n131 45\n", PBM_ROW * PBM_H, 3);
    for (size_t y = 0; y < PBM_H; y++)  /* the padding bits 0 */
        input[PBM].bytes[input[PBM].len - (PBM_H - y - 1) * PBM_ROW - 1] &=
            (unsigned char)(0xff << (PBM_ROW * 8 - PBM_W));
    make(&input[PAM],
         "P7\nWIDTH 77\nHEIGHT 53\nDEPTH 4\nMAXVAL 255\n"
         "TUPLTYPE RGB_ALPHA\nENDHDR\n", 77 * 53 * 4, 4);
    ck_assert_ptr_nonnull(text);
    n = (size_t)snprintf(text, cap, "P3\n23 17\n255\n");
    for (size_t i = 0; i < 23 * 17 * 3; i++)
        n += (size_t)snprintf(text + n, cap - n, "%u%c", rnd(&seed),
                              i % 12 == 11 ? '\n' : ' ');
    input[P3].bytes = (unsigned char *)text;
    input[P3].len = n;
    /* half the raster a 64x64 header promises */
    make(&input[CUT], "P6\n64 64\n255\n", 64 * 32 * 3, 5);
    /* two images, one after the other, as pamscale reads a stream */
    input[STREAM].len = 2 * input[PPM].len;
    input[STREAM].bytes = malloc(input[STREAM].len);
    ck_assert_ptr_nonnull(input[STREAM].bytes);
    memcpy(input[STREAM].bytes, input[PPM].bytes, input[PPM].len);
    memcpy(input[STREAM].bytes + input[PPM].len, input[PPM].bytes,
           input[PPM].len);
    for (int i = 0; i < NINPUTS; i++)
        if (input_name[i] != NULL)
            fx_write_file(fx_path(input_name[i]), input[i].bytes,
                          input[i].len);
}

static void free_inputs(void)
{
    for (int i = 0; i < NINPUTS; i++) {
        free(input[i].bytes);
        input[i] = (struct data){NULL, 0};
    }
}

/* A job in a run, and the thread that writes its pipe. */
struct slot {
    struct sp_job job;
    struct sp_report report;
    struct sp_cancel token;
    char in[4096], out[4096];
    int pipe[2];           /* a stream's: the job reads pipe[0] */
    pthread_t writer;
    pthread_barrier_t *start;  /* all jobs begin together; NULL: alone */
    sp_status st;
};

static void *write_pipe(void *arg)
{
    struct slot *s = arg;
    const unsigned char *p = input[STREAM].bytes;
    size_t left = input[STREAM].len;

    while (left > 0) {
        ssize_t w = write(s->pipe[1], p, left);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        p += w;
        left -= (size_t)w;
    }
    close(s->pipe[1]);
    return NULL;
}

/* cancel_self: the after_load seam: the job's own token set, so that it
 * stops at its first item. */
static void cancel_self(void *arg)
{
    sp_cancel_set(arg);
}

/* prepare: slot S for case K, its output named with TAG. */
static void prepare(struct slot *s, int k, const char *tag)
{
    const struct kase *c = &kases[k];
    char name[64];

    memset(s, 0, sizeof *s);
    snprintf(name, sizeof name, "out-%s-%02d.%s", tag, k, c->ext);
    snprintf(s->out, sizeof s->out, "%s", fx_path(name));
    if (c->in == STREAM) {
        ck_assert_int_eq(pipe(s->pipe), 0);
        snprintf(s->in, sizeof s->in, "/dev/fd/%d", s->pipe[0]);
    } else {
        snprintf(s->in, sizeof s->in, "%s", fx_path(input_name[c->in]));
    }
    s->job = (struct sp_job){.in = sp_src_path(s->in), .out = sp_target_path(s->out), .io = c->io,
                             .factor = c->factor, .filter = c->filter,
                             .threads = 2, .chunk_bytes = c->chunk_bytes,
                             .cancel = &s->token};
    if (c->cancel) {
        s->job.after_load = cancel_self;
        s->job.after_load_arg = &s->token;
    }
}

static void *run(void *arg)
{
    struct slot *s = arg;

    if (s->pipe[1] > 0)
        ck_assert_int_eq(pthread_create(&s->writer, NULL, write_pipe, s), 0);
    if (s->start != NULL)
        pthread_barrier_wait(s->start);
    s->st = fx_job_run(&s->job, &s->report);
    if (s->pipe[1] > 0) {
        pthread_join(s->writer, NULL);
        close(s->pipe[0]);
    }
    return NULL;
}

START_TEST(test_sixteen_at_once)
{
    static struct slot alone[NJOBS], together[NJOBS];
    pthread_t tid[NJOBS];
    pthread_barrier_t start;

    make_inputs();
    /* each job on its own, one after another */
    for (int k = 0; k < NJOBS; k++) {
        prepare(&alone[k], k, "alone");
        run(&alone[k]);
    }
    /* all 16 at once, started together */
    ck_assert_int_eq(pthread_barrier_init(&start, NULL, NJOBS), 0);
    for (int k = 0; k < NJOBS; k++) {
        prepare(&together[k], k, "together");
        together[k].start = &start;
    }
    for (int k = 0; k < NJOBS; k++)
        ck_assert_int_eq(pthread_create(&tid[k], NULL, run, &together[k]),
                         0);
    for (int k = 0; k < NJOBS; k++)
        pthread_join(tid[k], NULL);
    pthread_barrier_destroy(&start);

    for (int k = 0; k < NJOBS; k++) {
        const struct slot *a = &alone[k], *t = &together[k];

        ck_assert_msg(a->st == t->st, "job %d: %d alone, %d together", k,
                      a->st, t->st);
        if (a->st != SP_OK) {
            ck_assert_msg(!fx_file_exists(a->out) && !fx_file_exists(t->out),
                          "job %d failed and left an output", k);
            continue;
        }
        {
            size_t la, lt;
            unsigned char *ba = fx_read_file(a->out, &la);
            unsigned char *bt = fx_read_file(t->out, &lt);

            ck_assert_msg(la == lt && memcmp(ba, bt, la) == 0,
                          "job %d: %zu bytes alone, %zu together, not the "
                          "same", k, la, lt);
            free(ba);
            free(bt);
        }
    }
    /* and each ended as it should: the cut input and the cancelled job
     * failed, alone as together; every other was scaled */
    for (int k = 0; k < NJOBS; k++) {
        sp_status want = kases[k].in == CUT ? SP_E_TRUNCATED
                         : kases[k].cancel  ? EINTR
                                            : SP_OK;

        ck_assert_msg(alone[k].st == want, "job %d: %d, not %d", k,
                      alone[k].st, want);
    }
    ck_assert_uint_eq(alone[13].report.images, 2);  /* the stream's two */
    ck_assert_uint_eq(together[13].report.images, 2);
    free_inputs();
}
END_TEST

/* One token cancels the jobs that hold it, and no other. */
START_TEST(test_token_is_the_jobs)
{
    static struct slot s[4];
    pthread_t tid[4];

    make_inputs();
    for (int k = 0; k < 4; k++)
        prepare(&s[k], 0, k == 0 ? "a" : k == 1 ? "b" : k == 2 ? "c" : "d");
    /* the first two share a token set before they start */
    sp_cancel_set(&s[0].token);
    s[1].job.cancel = &s[0].token;
    for (int k = 0; k < 4; k++)
        ck_assert_int_eq(pthread_create(&tid[k], NULL, run, &s[k]), 0);
    for (int k = 0; k < 4; k++)
        pthread_join(tid[k], NULL);
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(s[k].st, k < 2 ? EINTR : SP_OK);
        ck_assert_int_eq(fx_file_exists(s[k].out), k >= 2);
    }
    free_inputs();
}
END_TEST

static Suite *concurrent_suite(void)
{
    Suite *s = suite_create("concurrent");
    TCase *tc = fx_tcase("jobs");

    tcase_add_test(tc, test_sixteen_at_once);
    tcase_add_test(tc, test_token_is_the_jobs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(concurrent_suite());
}
