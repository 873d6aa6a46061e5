/* The watch over running jobs' deadlines (src/serve/deadline.c): a token
 * is set once its deadline passes, not before, and not after it leaves;
 * a socket is shut down the same way. */
#include <poll.h>
#include <stddef.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

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

/* readable: whether FD has something to read (an end of file too)
 * within MS milliseconds. */
static int readable(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};

    return poll(&p, 1, ms) == 1;
}

START_TEST(test_socket)
{
    struct sp_watch *w;
    int due[2], late[2], gone[2], a, b, c;
    uint64_t now = sp_now_ns();
    char byte;

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, due), 0);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, late), 0);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, gone), 0);
    ck_assert_int_eq(sp_watch_start(&w, 3, 1), 0);
    a = sp_watch_enter_socket(w, due[0], now + 20 * 1000000ULL);
    b = sp_watch_enter_socket(w, late[0], now + 60ULL * 1000000000ULL);
    c = sp_watch_enter_socket(w, gone[0], now + 20 * 1000000ULL);
    ck_assert(a >= 0 && b >= 0 && c >= 0);
    sp_watch_leave(w, c);
    /* the peer of the socket past its deadline reads its end */
    ck_assert(readable(due[1], 60 * 1000));
    ck_assert_int_eq(read(due[1], &byte, 1), 0);
    ck_assert(!readable(late[1], 200));
    ck_assert(!readable(gone[1], 0));
    sp_watch_leave(w, a);
    sp_watch_leave(w, b);
    sp_watch_stop(w);
    for (int i = 0; i < 2; i++) {
        close(due[i]);
        close(late[i]);
        close(gone[i]);
    }
}
END_TEST

static Suite *serve_deadline_suite(void)
{
    Suite *s = suite_create("serve_deadline");
    TCase *tc = fx_tcase("serve_deadline");

    tcase_add_test(tc, test_deadline);
    tcase_add_test(tc, test_socket);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(serve_deadline_suite());
}
