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

START_TEST(test_deadline)
{
    struct sp_watch *w;
    struct sp_cancel soon = {0}, late = {0}, gone = {0};
    uint64_t now = sp_now_ns();
    int a, b, c;

    ck_assert_int_eq(sp_watch_start(&w, 3, 1), 0);
    a = sp_watch_enter(w, &soon, now + 20 * 1000000ULL);
    b = sp_watch_enter(w, &late, now + 60ULL * 1000000000ULL);
    c = sp_watch_enter(w, &gone, now + 20 * 1000000ULL);
    ck_assert_int_ge(a, 0);
    ck_assert_int_ge(b, 0);
    ck_assert_int_ge(c, 0);
    /* full: the next is not watched */
    ck_assert_int_eq(sp_watch_enter(w, &gone, now), -1);
    sp_watch_leave(w, c);
    ck_assert(!sp_cancelled(&soon));
    nap_ms(200);
    ck_assert(sp_cancelled(&soon));
    ck_assert(!sp_cancelled(&late));
    ck_assert(!sp_cancelled(&gone));
    sp_watch_leave(w, a);
    sp_watch_leave(w, b);
    sp_watch_stop(w);
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
