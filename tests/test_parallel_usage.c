/* test_parallel_usage.c: usage and many runs: bad thread counts refused, no
 * items, more threads than items; runs repeated, every thread gone after
 * each. */
#include "parallel_lib.h"

/* ---- usage ---- */

/* Thread counts out of range: SP_E_USAGE, nothing called, no thread. */
START_TEST(test_bad_threads)
{
    static const unsigned bad[] = {0, SP_THREADS_MAX + 1, 100000,
                                   (unsigned)-1};
    static const size_t counts[] = {0, 1, 10};
    int tasks = base_tasks();

    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++)
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            struct rec *r = start(bad[b], counts[c]);

            ck_assert_int_eq(run(r), SP_E_USAGE);
            ck_assert_int_eq(atomic_load(&r->calls), 0);
            ck_assert_int_eq(tasks_after(tasks), tasks);
        }
}
END_TEST

/* No items: success, nothing called, whatever the threads. */
START_TEST(test_no_items)
{
    static const unsigned counts[] = {1, 2, 17, SP_THREADS_MAX};
    int tasks = base_tasks();

    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        struct rec *r = start(counts[c], 0);

        ck_assert_int_eq(run(r), SP_OK);
        ck_assert_int_eq(atomic_load(&r->calls), 0);
        ck_assert_int_eq(tasks_after(tasks), tasks);
    }
}
END_TEST

/* More threads than items: fine, and only as many threads are used as
 * there are items (slots of thread numbers below the count; parallel.h
 * says only 0..THREADS-1, but a thread with no item to take is one
 * wasted). */
START_TEST(test_more_threads_than_items)
{
    static const unsigned counts[] = {2, 5, 17, SP_THREADS_MAX};
    static const size_t items[] = {1, 2, 3, 4, 16};

    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (size_t n = 0; n < sizeof items / sizeof items[0]; n++) {
            struct rec *r;

            if (items[n] >= counts[c])
                continue;
            r = start(counts[c], items[n]);
            r->work_us = 100;
            check_ok(r, run(r));
            for (size_t i = 0; i < r->count; i++)
                expect(r->work_slot[i] / SP_RUN_DEPTH < r->count,
                       "%u threads, %zu items: slot %u used", r->threads,
                       r->count, r->work_slot[i]);
        }
}
END_TEST

/* ---- many runs ---- */

/* Run after run, clean and failing, on few threads and many: all correct
 * (a lost wakeup would hang one, and Check's timeout fail it), and the
 * process ends with the threads it began with. */
START_TEST(test_repeated_runs)
{
    int tasks = base_tasks();
    uint32_t rng = 2024;

    for (int run_no = 0; run_no < 200; run_no++) {
        struct rec *r = start(4, 50);

        check_ok(r, run(r));
    }
    for (int run_no = 0; run_no < 400; run_no++) {
        struct rec *r;
        size_t k;

        rng = rng * 1103515245u + 12345u;
        r = start(1 + (rng >> 8) % 8, (rng >> 12) % 61);
        k = r->count > 0 ? (rng >> 20) % r->count : 0;
        r->work_us = run_no % 3 == 0 ? 20 : 0;
        switch (r->count > 0 ? (rng >> 28) % 4 : 0) {
        case 1:
            r->work_fail[k] = EIO;
            check_stopped(r, run(r), EIO, k, 0);
            break;
        case 2:
            r->finish_fail[k] = EPIPE;
            check_stopped(r, run(r), EPIPE, k, 1);
            break;
        default:
            check_ok(r, run(r));
            break;
        }
    }
    ck_assert_int_eq(tasks_after(tasks), tasks);
}
END_TEST

static Suite *parallel_usage_suite(void)
{
    Suite *s = suite_create("parallel_usage");
    TCase *tc = fx_tcase("usage");
    tcase_add_test(tc, test_bad_threads);
    tcase_add_test(tc, test_no_items);
    tcase_add_test(tc, test_more_threads_than_items);
    suite_add_tcase(s, tc);

    tc = fx_tcase("runs");
    tcase_add_test(tc, test_repeated_runs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(parallel_usage_suite());
}
