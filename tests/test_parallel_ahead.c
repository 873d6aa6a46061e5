/* test_parallel_ahead.c: working ahead and finishing for others: a thread
 * goes on into its other slot rather than wait for an earlier item's
 * FINISH, and finishes the items other threads worked. */
#include "parallel_lib.h"

/* ---- working ahead, finishing for others ---- */

/* Item 0's WORK holds on until the other items WORKed meanwhile number
 * SP_RUN_DEPTH for each other thread.  Nothing can be finished before
 * item 0, so a thread that waited for its item's FINISH would stop at
 * one; one that goes on fills its every slot, and then must sleep: it is
 * given time to take one more, and the WORKs begun are counted. */
static sp_status ahead_work(struct rec *r, unsigned slot, size_t item)
{
    int others = (int)(used_threads(r) - 1) * SP_RUN_DEPTH;
    sp_status st;

    (void)slot;
    if (item != 0) {
        arrive(&r->arrived);
        return SP_OK;
    }
    st = wait_count(&r->arrived, others);
    if (st != SP_OK)
        return st;
    pause_us(20000);
    r->works_seen = atomic_load_explicit(&r->works, memory_order_relaxed);
    return SP_OK;
}

START_TEST(test_work_ahead)
{
    static const unsigned counts[] = {2, 3, 4, 8, 17};
    static char full[SLOTS_MAX];
    unsigned threads = counts[_i];
    unsigned others = (threads - 1) * SP_RUN_DEPTH;
    struct rec *r = start(threads, others + 1 + 7);
    unsigned t0;
    sp_status st;

    r->work_hook = ahead_work;
    st = run(r);
    expect(st != ETIMEDOUT, "%u threads: %u items not worked while item 0 "
           "was", threads, others);
    check_ok(r, st);
    ck_assert_msg(r->works_seen == (int)others + 1, "%u threads: %d WORKs "
                  "begun before item 0's returned, not %u", threads,
                  r->works_seen, others + 1);
    /* Each of the others in a slot of its own, none item 0's thread's:
     * every other thread's every slot. */
    memset(full, 0, sizeof full);
    t0 = r->work_slot[0] / SP_RUN_DEPTH;
    for (size_t i = 1; i <= others; i++) {
        unsigned s = r->work_slot[i];

        expect(s / SP_RUN_DEPTH != t0 && !full[s], "%u threads: item %zu "
               "in slot %u while item 0 was in slot %u", threads, i, s,
               r->work_slot[0]);
        full[s] = 1;
    }
}
END_TEST

/* On 2 threads, item 0's WORK (path 0) or FINISH (path 1) holds on until
 * item 2's WORK has begun, and item 2's WORK until item 1's FINISH has.
 * Item 0's thread is busy with it meanwhile, so the other thread takes
 * items 1 and 2 into its two slots, and item 1 is ready before item 0's
 * thread is done with item 0: that thread, finishing, finishes item 1 as
 * well, while the thread that worked item 1 is still in item 2's WORK.  A
 * runner where only an item's own thread finishes it never gets past
 * that wait. */
static sp_status elsewhere_work(struct rec *r, unsigned slot, size_t item)
{
    (void)slot;
    if (item == 0 && r->path == 0)
        return wait_flag(&r->began[2]);
    if (item != 2)
        return SP_OK;
    raise_flag(&r->began[2]);
    return wait_flag(&r->finishing[1]);
}

static sp_status elsewhere_finish(struct rec *r, unsigned slot, size_t item)
{
    (void)slot;
    if (item == 0 && r->path == 1)
        return wait_flag(&r->began[2]);
    if (item == 1)
        raise_flag(&r->finishing[1]);
    return SP_OK;
}

START_TEST(test_finish_elsewhere)
{
    static const size_t counts[] = {3, 4, 9, 40};

    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        struct rec *r = start(2, counts[c]);
        sp_status st;

        r->path = _i;
        r->work_hook = elsewhere_work;
        r->finish_hook = elsewhere_finish;
        r->work_us = c == 3 ? 20 : 0;
        st = run(r);
        expect(st != ETIMEDOUT, "%zu items, path %d: item 1 not finished "
               "while its thread was in item 2's WORK", r->count, _i);
        ck_assert_uint_eq(check_ok(r, st), 2);
        expect(pthread_equal(r->work_tid[1], r->work_tid[2]) &&
               r->work_slot[1] != r->work_slot[2] &&
               !pthread_equal(r->work_tid[0], r->work_tid[1]),
               "%zu items, path %d: items 0, 1, 2 in slots %u, %u, %u",
               r->count, _i, r->work_slot[0], r->work_slot[1],
               r->work_slot[2]);
        expect(pthread_equal(r->finish_tid[0], r->work_tid[0]) &&
               pthread_equal(r->finish_tid[1], r->work_tid[0]),
               "%zu items, path %d: items 0 and 1 not finished by item 0's "
               "thread", r->count, _i);
    }
}
END_TEST

static Suite *parallel_ahead_suite(void)
{
    Suite *s = suite_create("parallel_ahead");
    TCase *tc = fx_tcase("combining");
    tcase_add_loop_test(tc, test_work_ahead, 0, 5);
    tcase_add_loop_test(tc, test_finish_elsewhere, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(parallel_ahead_suite());
}
