/* test_batch_eta.c: the batch runner's time-left estimate, held against a
 * simulated batch whose truth is known. */
#include "batch_lib.h"

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

static Suite *batch_eta_suite(void)
{
    Suite *s = suite_create("batch_eta");
    TCase *tc = fx_tcase("eta");
    tcase_add_test(tc, test_no_rate);
    tcase_add_test(tc, test_equal_files);
    tcase_add_test(tc, test_mixed_files);
    tcase_add_test(tc, test_bounds);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(batch_eta_suite());
}
