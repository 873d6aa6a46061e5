/* The status codes' names: every project code and success has a message of
 * its own, short and lower-case; a positive status is an errno and reads
 * as strerror's; a value past the last code is "unknown error". */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "fixtures.h"
#include "status.h"

/* The last project code: a new code goes below it, and moves this. */
#define LAST_CODE SP_E_CONVERT

START_TEST(test_codes_distinct)
{
    for (sp_status a = SP_OK; a >= LAST_CODE; a--) {
        const char *m = sp_strerror(a);

        ck_assert_ptr_nonnull(m);
        ck_assert_msg(m[0] != '\0', "status %d: empty message", a);
        ck_assert_msg(!isupper((unsigned char)m[0]),
                      "status %d: '%s' is not lower-case", a, m);
        ck_assert_msg(strcmp(m, "unknown error") != 0,
                      "status %d has no message", a);
        for (sp_status b = SP_OK; b > a; b--)
            ck_assert_msg(strcmp(m, sp_strerror(b)) != 0,
                          "statuses %d and %d both say '%s'", a, b, m);
    }
}
END_TEST

START_TEST(test_errno_passed_through)
{
    static const int errs[] = {EPERM, ENOENT, EIO, EACCES, EISDIR, EINVAL,
                               ENOSPC, EROFS, ENOMEM, EXDEV, ELOOP};

    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
        ck_assert_str_eq(sp_strerror(errs[i]), strerror(errs[i]));
}
END_TEST

START_TEST(test_unknown)
{
    ck_assert_str_eq(sp_strerror(LAST_CODE - 1), "unknown error");
    ck_assert_str_eq(sp_strerror(-1000), "unknown error");
}
END_TEST

static Suite *status_suite(void)
{
    Suite *s = suite_create("status");
    TCase *tc = fx_tcase("names");

    tcase_add_test(tc, test_codes_distinct);
    tcase_add_test(tc, test_errno_passed_through);
    tcase_add_test(tc, test_unknown);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(status_suite());
}
