/* --max-per-client (src/serve/clients.c): the requests in flight by
 * client address: a client past its limit refused, others not; a
 * request done gives its place back; many clients come and go without
 * the table filling. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "clients.h"
#include "fixtures.h"

/* key4: the key of the IPv4 address A.B.C.D, port PORT. */
static struct sp_client_key key4(unsigned a, unsigned b, unsigned c,
                                 unsigned d, unsigned port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port)};
    struct sp_client_key key;

    sa.sin_addr.s_addr = htonl(a << 24 | b << 16 | c << 8 | d);
    ck_assert(sp_client_key((struct sockaddr *)&sa, &key));
    return key;
}

START_TEST(test_limit)
{
    struct sp_clients c;
    struct sp_client_key one = key4(127, 0, 0, 1, 1000);
    struct sp_client_key same = key4(127, 0, 0, 1, 2000);  /* another port */
    struct sp_client_key two = key4(127, 0, 0, 2, 1000);

    ck_assert_int_eq(sp_clients_init(&c, 2, 8), 0);
    ck_assert_int_eq(sp_clients_enter(&c, &one), 0);
    ck_assert_int_eq(sp_clients_enter(&c, &same), 0);
    ck_assert_int_eq(sp_clients_enter(&c, &one), EAGAIN);
    ck_assert_int_eq(sp_clients_enter(&c, &two), 0);
    sp_clients_leave(&c, &one);
    ck_assert_int_eq(sp_clients_enter(&c, &same), 0);
    ck_assert_int_eq(sp_clients_enter(&c, &same), EAGAIN);
    sp_clients_destroy(&c);
}
END_TEST

START_TEST(test_families)
{
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6};
    struct unix_addr {
        sa_family_t family;
        char path[108];
    } un = {AF_UNIX, "/x"};
    struct sp_client_key k6, k4 = key4(0, 0, 0, 1, 0), kun;
    struct sp_clients c;

    ck_assert_int_eq(inet_pton(AF_INET6, "::1", &v6.sin6_addr), 1);
    ck_assert(sp_client_key((struct sockaddr *)&v6, &k6));
    ck_assert(!sp_client_key((struct sockaddr *)&un, &kun));
    ck_assert(!sp_client_key(NULL, &kun));
    /* ::1 and 0.0.0.1 hold the same last byte: two clients */
    ck_assert_int_eq(sp_clients_init(&c, 1, 4), 0);
    ck_assert_int_eq(sp_clients_enter(&c, &k6), 0);
    ck_assert_int_eq(sp_clients_enter(&c, &k4), 0);
    ck_assert_int_eq(sp_clients_enter(&c, &k6), EAGAIN);
    sp_clients_destroy(&c);
    /* no limit: everything admitted, nothing allocated */
    ck_assert_int_eq(sp_clients_init(&c, 0, 4), 0);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(sp_clients_enter(&c, &k6), 0);
    sp_clients_destroy(&c);
}
END_TEST

/* Thousands of clients, each in and out, four in flight at a time: the
 * table is rebuilt as its tombstones pile up, and every count stays
 * right. */
START_TEST(test_churn)
{
    struct sp_clients c;
    struct sp_client_key k[4];

    ck_assert_int_eq(sp_clients_init(&c, 1, 4), 0);
    for (unsigned i = 0; i < 5000; i++) {
        k[i % 4] = key4(10, i >> 16 & 255, i >> 8 & 255, i & 255, 0);
        if (i >= 4) {
            struct sp_client_key old =
                key4(10, (i - 4) >> 16 & 255, (i - 4) >> 8 & 255,
                     (i - 4) & 255, 0);

            sp_clients_leave(&c, &old);
        }
        ck_assert_int_eq(sp_clients_enter(&c, &k[i % 4]), 0);
        ck_assert_int_eq(sp_clients_enter(&c, &k[i % 4]), EAGAIN);
    }
    for (int j = 0; j < 4; j++)
        ck_assert_int_eq(sp_clients_enter(&c, &k[j]), EAGAIN);
    ck_assert_uint_le(c.used, c.cap / 2);
    sp_clients_destroy(&c);
}
END_TEST

static Suite *serve_clients_suite(void)
{
    Suite *s = suite_create("serve_clients");
    TCase *tc = fx_tcase("serve_clients");

    tcase_add_test(tc, test_limit);
    tcase_add_test(tc, test_families);
    tcase_add_test(tc, test_churn);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(serve_clients_suite());
}
