/* test_parallel_order.c: everything once, in order, and at the same time:
 * every item worked once and finished once, in item order, under jitter;
 * WORKs overlapping one another and the finishes; the threads placed, not
 * pinned. */
#include "parallel_lib.h"

/* ---- everything once, in order ---- */

/* Threads 1..17 and SP_THREADS_MAX (_i) against 0..40 items and a few
 * larger counts, with quick items: each worked and finished once, the
 * finishes in order, and no thread outlives its run. */
START_TEST(test_each_item_once)
{
    static const size_t more[] = {63, 64, 65, 1000};
    unsigned threads = _i < 17 ? (unsigned)_i + 1 : SP_THREADS_MAX;
    int tasks = base_tasks();

    for (size_t n = 0; n < 41 + sizeof more / sizeof more[0]; n++) {
        struct rec *r = start(threads, n < 41 ? n : more[n - 41]);
        int after;

        check_ok(r, run(r));
        after = tasks_after(tasks);
        expect(after == tasks, "%u threads, %zu items: %d threads after, "
               "%d before", threads, r->count, after, tasks);
    }
}
END_TEST

/* Slow, uneven WORKs (0..200 us) and some slow FINISHes on 2..17 threads:
 * later items get ahead of earlier ones, yet the finishes still come one
 * at a time, 0, 1, 2, ..., each with its item's slot; and more than one
 * thread did the work. */
START_TEST(test_order_under_jitter)
{
    static const unsigned counts[] = {2, 3, 4, 5, 8, 17};
    unsigned threads = counts[_i];
    struct rec *r = start(threads, 300);
    int ahead = 0;

    r->work_us = 200;
    r->finish_us = 50;
    expect(check_ok(r, run(r)) > 1, "%u threads: one thread did it all",
           threads);
    /* Otherwise the test proved nothing about the ordering. */
    for (size_t i = 0; i + 1 < r->count && !ahead; i++)
        for (size_t j = i + 1; j < r->count && j < i + threads; j++)
            ahead |= r->done_ticket[j] < r->done_ticket[i];
    ck_assert_msg(ahead, "%u threads: no WORK ever got ahead", threads);
}
END_TEST

/* ---- at the same time ---- */

/* Every WORK waits for all the others to be in progress, and thread 0
 * counts the process's threads meanwhile: THREADS items on THREADS
 * threads can only get past that if all of them run at once, each on a
 * thread of its own (a thread is in one WORK at a time, whatever its
 * slots), the caller's among them, THREADS - 1 started. */
static sp_status meet_work(struct rec *r, unsigned slot, size_t item)
{
    sp_status st = meet(&r->arrived, (int)r->count);

    (void)item;
    if (st != SP_OK)
        return st;
    if (slot / SP_RUN_DEPTH != 0)
        return wait_flag(&r->released);
    r->tasks_seen = count_tasks();
    raise_flag(&r->released);
    return SP_OK;
}

START_TEST(test_works_at_once)
{
    static const unsigned more[] = {32, 64, SP_THREADS_MAX};
    unsigned threads = _i < 16 ? (unsigned)_i + 2 : more[_i - 16];
    int tasks = base_tasks();
    struct rec *r = start(threads, threads);
    sp_status st;

    r->work_hook = meet_work;
    st = run(r);
    expect(st != ETIMEDOUT, "%u threads: the WORKs did not all run at once",
           threads);
    ck_assert_uint_eq(check_ok(r, st), threads);
    ck_assert_int_eq(r->tasks_seen, tasks + (int)threads - 1);
    ck_assert_int_eq(tasks_after(tasks), tasks);
}
END_TEST

/* The CPUs the caller may run on, and how many WORKs ran on a thread
 * that may not run on all of them. */
static cpu_set_t caller_cpus;
static atomic_int pinned_works;

static sp_status cpus_work(struct rec *r, unsigned slot, size_t item)
{
    cpu_set_t mine;

    if (sched_getaffinity(0, sizeof mine, &mine) != 0 ||
        !CPU_EQUAL(&mine, &caller_cpus))
        atomic_fetch_add(&pinned_works, 1);
    return meet_work(r, slot, item);
}

/* A worker is started on a CPU of its own, but not kept there: each WORK
 * runs on a thread free to run on every CPU the caller may.  The WORKs
 * meet, as in test_works_at_once, so every thread runs one and none is
 * left unchecked however the scheduler deals them out. */
START_TEST(test_threads_not_pinned)
{
    unsigned threads = (unsigned)_i + 2;
    struct rec *r = start(threads, threads);
    int pinned;

    ck_assert_int_eq(sched_getaffinity(0, sizeof caller_cpus, &caller_cpus),
                     0);
    atomic_store(&pinned_works, 0);
    r->work_hook = cpus_work;
    ck_assert_uint_eq(check_ok(r, run(r)), threads);
    pinned = atomic_load(&pinned_works);
    ck_assert_msg(pinned == 0, "%d of %u WORKs ran on a pinned thread",
                  pinned, threads);
}
END_TEST

/* What each worker was started with (placing_create, the thread seam):
 * the CPUs its attributes allow, and the CPU its creator was on. */
static cpu_set_t placed_on[SP_THREADS_MAX];
static int creator_cpu[SP_THREADS_MAX];
static unsigned creates;

static int placing_create(pthread_t *tid, const pthread_attr_t *attr,
                          void *(*routine)(void *), void *arg)
{
    if (creates < SP_THREADS_MAX) {
        if (pthread_attr_getaffinity_np(attr, sizeof placed_on[0],
                                        &placed_on[creates]) != 0)
            CPU_ZERO(&placed_on[creates]);
        creator_cpu[creates] = sched_getcpu();
    }
    creates++;
    return pthread_create(tid, attr, routine, arg);
}

/* A worker starts pinned to one CPU of those the caller may run on, and
 * while there are CPUs to spare not to the one its creator is on, so that
 * it does not wait there for the creator to block (place() in
 * parallel.c).  _i picks 2 threads, one a CPU, or twice as many as CPUs
 * and one (the CPUs dealt round).  A creator that moves to another CPU
 * between placing a worker and starting it could meet its worker: a run
 * where that happens is tried again, up to 5 times. */
START_TEST(test_threads_placed)
{
    cpu_set_t allowed;
    unsigned n, threads, beside = 0;

    ck_assert_int_eq(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    n = (unsigned)CPU_COUNT(&allowed);
    if (n < 2) {
        fprintf(stderr, "test_threads_placed: one CPU: nothing to place\n");
        return;
    }
    threads = _i == 0 ? 2 : _i == 1 ? n : 2 * n + 1;
    if (threads > SP_THREADS_MAX)
        threads = SP_THREADS_MAX;
    sp_run_thread_create = placing_create;
    for (int attempt = 0; attempt < 5; attempt++) {
        struct rec *r = start(threads, threads);

        creates = 0;
        (void)check_ok(r, run(r));
        ck_assert_uint_eq(creates, threads - 1);
        beside = 0;
        for (unsigned t = 0; t < creates; t++) {
            cpu_set_t both;

            CPU_AND(&both, &placed_on[t], &allowed);
            ck_assert_msg(CPU_COUNT(&placed_on[t]) == 1 &&
                          CPU_COUNT(&both) == 1,
                          "%u threads: worker %u may run on %d CPUs, %d of "
                          "them allowed, not one", threads, t + 1,
                          CPU_COUNT(&placed_on[t]), CPU_COUNT(&both));
            beside += creator_cpu[t] >= 0 && t + 1 < n &&
                      CPU_ISSET((unsigned)creator_cpu[t], &placed_on[t]);
        }
        if (beside == 0)
            break;
    }
    sp_run_thread_create = pthread_create;
    ck_assert_msg(beside == 0, "%u threads: %u workers placed on their "
                  "creator's CPU", threads, beside);
}
END_TEST

/* Item 2m's FINISH and item 2m+1's WORK wait for each other, so each
 * handshake proves a WORK in progress during a FINISH.  It cannot
 * deadlock a correct runner on 2+ threads: while item 2m finishes, every
 * earlier item is finished, so item 2m+1 is either in its WORK or not yet
 * taken, and then no slot but item 2m's is full, so a thread other than
 * the one in the FINISH is free to take it. */
static sp_status overlap_work(struct rec *r, unsigned slot, size_t item)
{
    sp_status st;

    (void)slot;
    if (item % 2 == 0)
        return SP_OK;
    st = wait_flag(&r->finishing[item - 1]);
    if (st == SP_OK)
        raise_flag(&r->met[item]);
    return st;
}

static sp_status overlap_finish(struct rec *r, unsigned slot, size_t item)
{
    (void)slot;
    if (item % 2 != 0 || item + 1 == r->count)
        return SP_OK;
    raise_flag(&r->finishing[item]);
    return wait_flag(&r->met[item + 1]);
}

START_TEST(test_work_during_finish)
{
    static const unsigned counts[] = {2, 3, 4, 8, 17};

    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        struct rec *r = start(counts[c], 41);
        sp_status st;

        r->work_hook = overlap_work;
        r->finish_hook = overlap_finish;
        r->work_us = 20;
        st = run(r);
        expect(st != ETIMEDOUT, "%u threads: no WORK ran during a FINISH",
               counts[c]);
        check_ok(r, st);
    }
}
END_TEST

static Suite *parallel_order_suite(void)
{
    Suite *s = suite_create("parallel_order");
    TCase *tc = fx_tcase("ordered");
    tcase_add_loop_test(tc, test_each_item_once, 0, 18);
    tcase_add_loop_test(tc, test_order_under_jitter, 0, 6);
    tcase_add_loop_test(tc, test_works_at_once, 0, 19);
    tcase_add_loop_test(tc, test_threads_not_pinned, 0, 3);
    tcase_add_loop_test(tc, test_threads_placed, 0, 3);
    tcase_add_test(tc, test_work_during_finish);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(parallel_order_suite());
}
