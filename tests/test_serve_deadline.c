/* The watch over running jobs' deadlines (src/serve/deadline.c): a token
 * is set once its deadline passes, not before, and not after it leaves. */
#include <stddef.h>
#include <time.h>

#include "deadline.h"
#include "fixtures.h"
#include "timing.h"

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* cancelled_soon: C set, waited for as long as the watch's thread takes
 * to be run (a minute at most: a watch that never sets it fails). */
static int cancelled_soon(struct sp_cancel *c)
{
    for (int ms = 0; ms < 60000 && !sp_cancelled(c); ms++)
        nap_ms(1);
    return sp_cancelled(c);
}

/* Every check waits for the event, not for a time: SOON and AFTER are
 * waited for; GONE is checked only when it left before its deadline (a
 * loaded machine may hold this thread past it: then the round is made
 * again); AFTER, whose deadline follows GONE's, is set by a look that
 * would have set GONE, had it stayed. */
START_TEST(test_deadline)
{
    const uint64_t ms = 1000000ULL;
    int conclusive = 0;

    for (int round = 0; round < 100 && !conclusive; round++) {
        struct sp_watch *w;
        struct sp_cancel soon = {0}, late = {0}, gone = {0}, after = {0};
        uint64_t now = sp_now_ns();
        int a, b, c, d, early;

        ck_assert_int_eq(sp_watch_start(&w, 4, 1), 0);
        a = sp_watch_enter(w, &soon, now + 20 * ms);
        b = sp_watch_enter(w, &late, now + 60000 * ms);
        c = sp_watch_enter(w, &gone, now + 200 * ms);
        d = sp_watch_enter(w, &after, now + 200 * ms + 1);
        ck_assert_int_ge(a, 0);
        ck_assert_int_ge(b, 0);
        ck_assert_int_ge(c, 0);
        ck_assert_int_ge(d, 0);
        /* full: the next is not watched */
        ck_assert_int_eq(sp_watch_enter(w, &gone, now), -1);
        early = sp_cancelled(&soon);
        sp_watch_leave(w, c);
        conclusive = sp_now_ns() < now + 20 * ms;
        ck_assert(!early || !conclusive);
        ck_assert(cancelled_soon(&soon));
        ck_assert(cancelled_soon(&after));
        ck_assert(!sp_cancelled(&late));
        ck_assert(!sp_cancelled(&gone) || !conclusive);
        sp_watch_leave(w, a);
        sp_watch_leave(w, b);
        sp_watch_leave(w, d);
        sp_watch_stop(w);
    }
    ck_assert_msg(conclusive, "100 rounds held past 20 ms");
}
END_TEST

static Suite *serve_deadline_suite(void)
{
    Suite *s = suite_create("serve_deadline");
    TCase *tc = fx_tcase("serve_deadline");

    tcase_add_test(tc, test_deadline);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(serve_deadline_suite());
}
