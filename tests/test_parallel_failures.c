/* test_parallel_failures.c: failures: the lowest failed item's status wins,
 * nothing finished after it; threads that cannot be started are done
 * without. */
#include "parallel_lib.h"

/* ---- failures ---- */

/* WORK (_i 0) or FINISH (_i 1) of item K fails: that status, nothing from
 * K on finished; a FINISH failing, everything before K finished. */
START_TEST(test_item_fails)
{
    static const unsigned counts[] = {1, 2, 3, 4, 8, 17};
    static const size_t bad[] = {0, 1, 7, 30, 49};
    static const sp_status codes[2][2] = {{EIO, SP_E_TRUNCATED},
                                          {ENOSPC, SP_E_ENCODE}};
    int tasks = base_tasks();

    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++)
            for (size_t e = 0; e < 2; e++) {
                struct rec *r = start(counts[c], 50);

                r->work_us = 30;
                if (_i == 0)
                    r->work_fail[bad[b]] = codes[_i][e];
                else
                    r->finish_fail[bad[b]] = codes[_i][e];
                check_stopped(r, run(r), codes[_i][e], bad[b], _i);
            }
    ck_assert_int_eq(tasks_after(tasks), tasks);
}
END_TEST

/* Two failures for certain: item 3 waits, in its WORK or its FINISH,
 * until item 4's WORK has failed, then fails itself (or, the third way,
 * its WORK succeeds).  Nothing blocks item 4 meanwhile: everything before
 * 3 can finish, so another thread's slot comes free to take 4 if none
 * has.  The run returns item 3's status, the lower item's, though it came
 * second. */
enum { FIRST = 3, SECOND = 4 };

static sp_status second_fails(struct rec *r, unsigned slot, size_t item)
{
    (void)slot;
    if (item == SECOND)
        raise_flag(&r->later_failed);
    return item == FIRST ? wait_flag(&r->later_failed) : SP_OK;
}

/* Item 3's FINISH is called only if nothing failed before its turn, so
 * item 4's WORK waits for that FINISH to begin before it fails. */
static sp_status second_fails_in_finish(struct rec *r, unsigned slot,
                                        size_t item)
{
    sp_status st;

    (void)slot;
    if (item != SECOND)
        return SP_OK;
    st = wait_flag(&r->finishing[FIRST]);
    raise_flag(&r->later_failed);
    return st;
}

static sp_status first_fails_in_finish(struct rec *r, unsigned slot,
                                       size_t item)
{
    (void)slot;
    if (item != FIRST)
        return SP_OK;
    raise_flag(&r->finishing[FIRST]);
    return wait_flag(&r->later_failed);
}

/* Item 1's WORK fails once item 2's has begun on another thread, and
 * item 2's only once item 1's thread has returned from the run, its
 * failure recorded.  Item 0's WORK waits for item 1's to begin, so that
 * item 1 is on another thread than item 0, which the caller's nearly
 * always takes: only a started thread is seen to return, and a run where
 * item 1 fell to the caller's proves nothing and is made again. */
static sp_status first_fails_first(struct rec *r, unsigned slot,
                                   size_t item)
{
    sp_status st;

    (void)slot;
    switch (item) {
    case 0:
        return wait_flag(&r->began[1]);
    case 1:
        raise_flag(&r->began[1]);
        st = wait_flag(&r->began[2]);
        if (!pthread_equal(pthread_self(), r->caller))
            r->fail_tid = gettid();
        raise_flag(&r->first_failed);
        return st;
    case 2:
        raise_flag(&r->began[2]);
        st = wait_flag(&r->first_failed);
        if (st == SP_OK && r->fail_tid != 0) {
            st = exited(r->fail_tid);
            r->conclusive = st == SP_OK;
        }
        return st;
    }
    return SP_OK;
}

START_TEST(test_lowest_failure_wins)
{
    int tasks = base_tasks();

    for (unsigned threads = 2; threads <= 9; threads++) {
        struct rec *r = start(threads, 20);

        /* In the WORKs: item 3's status. */
        r->work_hook = second_fails;
        r->work_fail[FIRST] = ENOMEM;
        r->work_fail[SECOND] = EIO;
        check_stopped(r, run(r), ENOMEM, FIRST, 0);

        /* Item 3's FINISH fails while 4's WORK does. */
        r = start(threads, 20);
        r->work_hook = second_fails_in_finish;
        r->finish_hook = first_fails_in_finish;
        r->finish_fail[FIRST] = SP_E_CHANGED;
        r->work_fail[SECOND] = EIO;
        check_stopped(r, run(r), SP_E_CHANGED, FIRST, 1);

        /* Item 3's WORK succeeds after 4's failed: 4's status, and
         * nothing from 4 on finished (3 may or may not be). */
        r = start(threads, 20);
        r->work_hook = second_fails;
        r->work_fail[SECOND] = EIO;
        check_stopped(r, run(r), EIO, SECOND, 0);

        /* Item 2's WORK fails after 1's failure was recorded: still 1's
         * status (a runner that kept the last failure's would say 2's). */
        for (int tries = 0; tries == 0 || (!r->conclusive && tries < 100);
             tries++) {
            r = start(threads, 20);
            r->work_hook = first_fails_first;
            r->work_fail[1] = ENOMEM;
            r->work_fail[2] = EIO;
            check_stopped(r, run(r), ENOMEM, 1, 0);
        }
        ck_assert_msg(r->conclusive, "%u threads: item 1 failed on the "
                      "caller's thread 100 times", threads);
    }
    ck_assert_int_eq(tasks_after(tasks), tasks);
}
END_TEST

/* Every WORK fails, with different statuses: item 0 is always taken and
 * worked, so its status is the one. */
START_TEST(test_all_fail)
{
    for (unsigned threads = 1; threads <= 17; threads++) {
        struct rec *r = start(threads, 40);

        r->work_us = 50;
        for (size_t i = 0; i < r->count; i++)
            r->work_fail[i] = i == 0 ? SP_E_CHANGED : i % 2 ? EIO : ENOMEM;
        check_stopped(r, run(r), SP_E_CHANGED, 0, 0);
    }
}
END_TEST

/* After a failure nothing more is finished, not even an earlier item
 * that is ready.  On 2 threads, item 0's FINISH holds on while the other
 * thread, free to take items 1 and 2, works them, item 2 failing once
 * that FINISH has begun; the FINISH returns only when the failing thread
 * has returned from the run, so with the failure recorded, and item 1,
 * worked and waiting, must stay unfinished.  Only a started thread is
 * seen to return: a run where the caller's failed is made again. */
static sp_status stop_work(struct rec *r, unsigned slot, size_t item)
{
    sp_status st;

    (void)slot;
    if (item != 2)
        return SP_OK;
    st = wait_flag(&r->finishing[0]);
    if (!pthread_equal(pthread_self(), r->caller))
        r->fail_tid = gettid();
    raise_flag(&r->began[2]);
    return st;
}

static sp_status stop_finish(struct rec *r, unsigned slot, size_t item)
{
    sp_status st;

    (void)slot;
    if (item != 0)
        return SP_OK;
    raise_flag(&r->finishing[0]);
    st = wait_flag(&r->began[2]);
    if (st == SP_OK && r->fail_tid != 0) {
        st = exited(r->fail_tid);
        r->conclusive = st == SP_OK;
    }
    return st;
}

START_TEST(test_no_finish_after_failure)
{
    struct rec *r = NULL;

    for (int tries = 0; tries == 0 || (!r->conclusive && tries < 100);
         tries++) {
        sp_status st;

        r = start(2, 6);
        r->work_hook = stop_work;
        r->finish_hook = stop_finish;
        r->work_fail[2] = EIO;
        st = run(r);
        expect(st != ETIMEDOUT, "the failing thread did not return");
        check_stopped(r, st, EIO, 2, 0);
    }
    ck_assert_msg(r->conclusive, "item 2 failed on the caller's thread "
                  "100 times");
    ck_assert_msg(r->nseq == 1 && atomic_load(&r->worked[1]) == 1,
                  "%zu finished after item 2 failed", r->nseq);
}
END_TEST

/* creates_left: how many threads fake_create starts before it fails
 * with EAGAIN, as pthread_create does under RLIMIT_NPROC. */
static int creates_left;

static int fake_create(pthread_t *tid, const pthread_attr_t *attr,
                       void *(*routine)(void *), void *arg)
{
    if (creates_left == 0)
        return EAGAIN;
    creates_left--;
    return pthread_create(tid, attr, routine, arg);
}

/* check_ran: the run said it ran on WANT threads (or, WANT 0, fewer than
 * asked for), and only those threads' slots were used. */
static void check_ran(const struct rec *r, unsigned want)
{
    expect(want ? r->ran == want : r->ran >= 1 && r->ran < r->threads,
           "%u threads asked, %u started: %u ran", r->threads, want,
           r->ran);
    for (size_t i = 0; i < r->count; i++)
        expect(!atomic_load(&r->worked[i]) ||
               r->work_slot[i] / SP_RUN_DEPTH < r->ran,
               "%u threads, %u ran: item %zu in slot %u", r->threads,
               r->ran, i, r->work_slot[i]);
}

/* Threads that cannot be started: the run goes on with those that did,
 * the caller's at least (_i more: 0, 1, 2, 5, then none fails), every
 * item worked and finished once, in order, and it says how many ran;
 * with an item failing, the run stops as it should. */
START_TEST(test_fewer_threads)
{
    static const int more[] = {0, 1, 2, 5, 7};
    int tasks = base_tasks();
    struct rec *r;

    creates_left = more[_i];
    sp_run_thread_create = fake_create;
    r = start(8, 300);
    r->work_us = 50;
    ck_assert_uint_le(check_ok(r, run(r)), (unsigned)more[_i] + 1);
    check_ran(r, (unsigned)more[_i] + 1);
    ck_assert_int_eq(tasks_after(tasks), tasks);

    creates_left = more[_i];
    r = start(8, 300);
    r->work_fail[100] = EIO;
    check_stopped(r, run(r), EIO, 100, 0);
    check_ran(r, (unsigned)more[_i] + 1);
    sp_run_thread_create = pthread_create;
    ck_assert_int_eq(tasks_after(tasks), tasks);
}
END_TEST

#ifndef UNDER_SANITIZER
/* Threads that cannot be started for want of address space for their
 * stacks (capped just above what the process maps): the run goes on
 * with those that did, every item done, and the threads that started
 * are joined. */
START_TEST(test_thread_start_fails)
{
    int tasks = base_tasks();
    struct rec *r = start(SP_THREADS_MAX, MAX_ITEMS);

    fx_limit_as((size_t)8 << 20);
    check_ok(r, run(r));
    check_ran(r, 0);
    ck_assert_int_eq(tasks_after(tasks), tasks);
}
END_TEST
#endif

/* A sanitizer's runtime dies when the address space runs out rather than
 * let pthread_create fail, so the test that caps it is left out there
 * (UNDER_SANITIZER, fixtures.h). */
static Suite *parallel_failures_suite(void)
{
    Suite *s = suite_create("parallel_failures");
    TCase *tc = fx_tcase("failures");
    tcase_add_loop_test(tc, test_item_fails, 0, 2);
    tcase_add_test(tc, test_lowest_failure_wins);
    tcase_add_test(tc, test_all_fail);
    tcase_add_test(tc, test_no_finish_after_failure);
    tcase_add_loop_test(tc, test_fewer_threads, 0, 5);
#ifndef UNDER_SANITIZER
    tcase_add_test(tc, test_thread_start_fails);
#endif
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(parallel_failures_suite());
}
