/* The status codes' names: every project code and success has a message of
 * its own, short and lower-case; the codes lie in their band, below any
 * -errno; an errno, positive or negated (the public API's), reads as
 * strerror's; a value past the last code is "unknown error".  And how a
 * message shows a name or a detail (msg.h): one line, nothing a terminal
 * obeys, printable UTF-8 as it is. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "msg.h"
#include "status.h"

/* The last project code: a new code goes below it, and moves this. */
#define LAST_CODE SP_E_BADPNG

/* next: the code after A: the band's first after success. */
static sp_status next(sp_status a)
{
    return a == SP_OK ? SP_E_BASE - 1 : a - 1;
}

START_TEST(test_codes_distinct)
{
    for (sp_status a = SP_OK; a >= LAST_CODE; a = next(a)) {
        const char *m = sp_strerror(a);

        ck_assert_ptr_nonnull(m);
        ck_assert_msg(m[0] != '\0', "status %d: empty message", a);
        ck_assert_msg(!isupper((unsigned char)m[0]),
                      "status %d: '%s' is not lower-case", a, m);
        ck_assert_msg(strcmp(m, "unknown error") != 0,
                      "status %d has no message", a);
        for (sp_status b = SP_OK; b != a; b = next(b))
            ck_assert_msg(strcmp(m, sp_strerror(b)) != 0,
                          "statuses %d and %d both say '%s'", a, b, m);
    }
}
END_TEST

START_TEST(test_errno_passed_through)
{
    static const int errs[] = {EPERM, ENOENT, EIO, EACCES, EISDIR, EINVAL,
                               ENOSPC, EROFS, ENOMEM, EXDEV, ELOOP};

    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
        ck_assert_str_eq(sp_strerror(errs[i]), strerror(errs[i]));
        ck_assert_str_eq(sp_strerror(-errs[i]), strerror(errs[i]));
    }
}
END_TEST

/* The band: every code below the largest -errno (Linux's MAX_ERRNO,
 * 4095), between SP_E_BASE and SP_E_LAST. */
START_TEST(test_band)
{
    ck_assert_int_lt(SP_E_BASE, -4095);
    ck_assert_int_lt(SP_E_LAST, SP_E_BASE);
    for (sp_status a = SP_E_BASE - 1; a >= LAST_CODE; a--)
        ck_assert_int_ge(a, SP_E_LAST);
}
END_TEST

START_TEST(test_unknown)
{
    ck_assert_str_eq(sp_strerror(LAST_CODE - 1), "unknown error");
    ck_assert_str_eq(sp_strerror(SP_E_BASE), "unknown error");
    ck_assert_str_eq(sp_strerror(-4096), "unknown error");
}
END_TEST

/* Each kind of byte and character, as sp_show_name() shows it. */
START_TEST(test_show_name_table)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain.ppm", "plain.ppm"},
        {"", ""},
        {"a b'c\"", "a b'c\""},
        {"a\nb\tc\rd\\e", "a\\nb\\tc\\rd\\\\e"},
        {"\033[2J\033]0;t\007", "\\033[2J\\033]0;t\\007"},
        {"\001\037\177", "\\001\\037\\177"},
        {"\x9b" "31m", "\\23331m"},                 /* C1 CSI, one byte */
        {"\xc2\x9b" "31m", "\\302\\23331m"},        /* U+009B in UTF-8 */
        {"\xc2\x80\xc2\x9f\xc2\xa0", "\\302\\200\\302\\237\xc2\xa0"},
        {"caf\xc3\xa9.ppm", "caf\xc3\xa9.ppm"},     /* é stays é */
        {"\xe2\x82\xac \xf0\x9f\x98\x80", "\xe2\x82\xac \xf0\x9f\x98\x80"},
        {"a\xe2\x80\xae" "b", "a\\342\\200\\256b"}, /* RLO */
        {"\xe2\x81\xa6", "\\342\\201\\246"},        /* an isolate */
        {"\xc3", "\\303"},                          /* cut short */
        {"\xc3(", "\\303("},
        {"\xc0\xaf", "\\300\\257"},                 /* overlong '/' */
        {"\xe0\x80\xaf", "\\340\\200\\257"},
        {"\xed\xa0\x80", "\\355\\240\\200"},        /* a surrogate */
        {"\xf4\x90\x80\x80", "\\364\\220\\200\\200"}, /* past U+10FFFF */
        {"\xff\xfe", "\\377\\376"},
        {"\x80", "\\200"},                          /* a lone continuation */
    };
    char buf[256];

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_str_eq(sp_show_name(cases[i].in, buf, sizeof buf),
                         cases[i].out);
}
END_TEST

/* utf8_ok: S is valid UTF-8 with no C0 control, DEL or C1 control. */
static int utf8_ok(const unsigned char *s)
{
    while (*s != '\0') {
        size_t n = *s < 0x80 ? 1 : *s >= 0xf0 ? 4 : *s >= 0xe0 ? 3 : 2;

        if (*s < 0x20 || *s == 0x7f || (*s >= 0x80 && *s < 0xc2) ||
            *s > 0xf4 || (*s == 0xc2 && s[1] < 0xa0))
            return 0;
        for (size_t i = 1; i < n; i++)
            if ((s[i] & 0xc0) != 0x80)
                return 0;
        s += n;
    }
    return 1;
}

/* Random bytes, every buffer size: what is shown is always valid UTF-8
 * with no control of any kind, fits with its NUL, and never ends inside
 * an escape or a character; with room enough, it is the whole text. */
START_TEST(test_show_name_random)
{
    unsigned seed = 25;

    for (int round = 0; round < 3000; round++) {
        unsigned char in[24];
        char buf[128];
        size_t n = (size_t)rand_r(&seed) % (sizeof in - 1), len;

        for (size_t i = 0; i < n; i++) {
            in[i] = (unsigned char)(rand_r(&seed) % 255 + 1);
            if (i > 0 && rand_r(&seed) % 4 == 0)  /* some real UTF-8 */
                in[i] = (unsigned char)(0x80 | (rand_r(&seed) & 0x3f));
        }
        in[n] = '\0';
        len = (size_t)rand_r(&seed) % sizeof buf + 1;
        memset(buf, 'x', sizeof buf);
        sp_show_name((const char *)in, buf, len);
        ck_assert_msg(memchr(buf, '\0', len) != NULL, "no NUL within %zu",
                      len);
        ck_assert_msg(utf8_ok((const unsigned char *)buf),
                      "round %d: '%s' holds a control or bad UTF-8", round,
                      buf);
        if (strlen(buf) > 0 && buf[strlen(buf) - 1] == '\\') {
            size_t k = strlen(buf), slashes = 0;

            while (k > 0 && buf[k - 1] == '\\')
                k--, slashes++;
            ck_assert_msg(slashes % 2 == 0, "ends inside an escape: %s",
                          buf);
        }
        if (len == sizeof buf) {
            char again[sizeof buf];

            /* 4 bytes shown for 1 at most: 23 bytes always fit in 128 */
            ck_assert_uint_le(strlen(buf), 4 * n);
            ck_assert_str_eq(sp_show_name((const char *)in, again,
                                          sizeof again), buf);
        }
    }
}
END_TEST

/* A name cut to fit: between characters and escapes, never inside. */
START_TEST(test_show_name_cut)
{
    char buf[8];

    ck_assert_str_eq(sp_show_name("caf\xc3\xa9s", buf, 5), "caf");
    ck_assert_str_eq(sp_show_name("caf\xc3\xa9s", buf, 6), "caf\xc3\xa9");
    ck_assert_str_eq(sp_show_name("ab\033", buf, 6), "ab");
    ck_assert_str_eq(sp_show_name("ab\033", buf, 7), "ab\\033");
    ck_assert_str_eq(sp_show_name("a\n", buf, 3), "a");
    ck_assert_str_eq(sp_show_name("abc", buf, 1), "");
}
END_TEST

static Suite *status_suite(void)
{
    Suite *s = suite_create("status");
    TCase *tc = fx_tcase("names");

    tcase_add_test(tc, test_codes_distinct);
    tcase_add_test(tc, test_errno_passed_through);
    tcase_add_test(tc, test_band);
    tcase_add_test(tc, test_unknown);
    suite_add_tcase(s, tc);

    tc = fx_tcase("shown");
    tcase_add_test(tc, test_show_name_table);
    tcase_add_test(tc, test_show_name_random);
    tcase_add_test(tc, test_show_name_cut);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(status_suite());
}
