/* --max-memory (src/serve/budget.c): a job's bytes from its header, and
 * the ledger that admits only while the total stays under the budget. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "budget.h"
#include "fixtures.h"
#include "job_types.h"

static struct sp_header header(size_t w, size_t h, unsigned ch,
                               unsigned bytes)
{
    struct sp_header hdr;

    memset(&hdr, 0, sizeof hdr);
    hdr.width = w;
    hdr.height = h;
    hdr.channels = ch;
    hdr.sample_size = bytes;
    return hdr;
}

START_TEST(test_cost)
{
    struct sp_header hdr = header(100, 50, 3, 2);
    uint64_t chunks = 2 * SP_CHUNK;

    /* read holds the raster; mmap and pread two chunks a thread */
    ck_assert_uint_eq(sp_serve_cost(&hdr, -2, NULL, 1, 0, 1),
                      100 * 50 * 3 * 2 + chunks);
    ck_assert_uint_eq(sp_serve_cost(&hdr, -2, NULL, 0, 0, 4), 8 * chunks);
    /* an stb output holds the 8-bit image and its encoding: 50x25 and,
     * for a reduce by 3 that rounds up, 34x17 */
    ck_assert_uint_eq(sp_serve_cost(&hdr, -2, NULL, 0, 1, 1),
                      chunks + 50 * 25 * 3 * 2);
    ck_assert_uint_eq(sp_serve_cost(&hdr, -3, NULL, 0, 1, 1),
                      chunks + 34 * 17 * 3 * 2);
    ck_assert_uint_eq(sp_serve_cost(&hdr, 4, NULL, 1, 1, 1),
                      100 * 50 * 3 * 2 + 400 * 200 * 3 * 2);
    /* a fit's output is its box's size: 100x50 into 40x40 is 40x20; an
     * image inside the box is copied, unless it enlarges */
    struct sp_fit fit = {.width = 40, .height = 40};
    ck_assert_uint_eq(sp_serve_cost(&hdr, 0, &fit, 0, 1, 1),
                      chunks + 40 * 20 * 3 * 2);
    fit = (struct sp_fit){.width = 400};
    ck_assert_uint_eq(sp_serve_cost(&hdr, 0, &fit, 0, 1, 1),
                      chunks + 100 * 50 * 3 * 2);
    fit.enlarge = 1;
    ck_assert_uint_eq(sp_serve_cost(&hdr, 0, &fit, 0, 1, 1),
                      chunks + 400 * 200 * 3 * 2);
    /* a header of absurd sides saturates, never wraps */
    hdr = header(SIZE_MAX / 2, SIZE_MAX / 2, 4, 2);
    ck_assert_uint_eq(sp_serve_cost(&hdr, 2, NULL, 1, 1, 1), UINT64_MAX);
}
END_TEST

/* An answer's planned bytes: its output's raster, at the input's
 * channels and sample size. */
START_TEST(test_body)
{
    struct sp_header hdr = header(100, 50, 3, 2);
    struct sp_fit fit = {.width = 40, .height = 40};

    ck_assert_uint_eq(sp_serve_body(&hdr, -3, NULL), 34 * 17 * 3 * 2);
    ck_assert_uint_eq(sp_serve_body(&hdr, 4, NULL), 400 * 200 * 3 * 2);
    ck_assert_uint_eq(sp_serve_body(&hdr, 0, &fit), 40 * 20 * 3 * 2);
    hdr = header(SIZE_MAX / 2, SIZE_MAX / 2, 4, 2);
    ck_assert_uint_eq(sp_serve_body(&hdr, 2, NULL), UINT64_MAX);
}
END_TEST

START_TEST(test_ledger)
{
    struct sp_budget b;

    sp_budget_init(&b, 100);
    ck_assert_int_eq(sp_budget_take(&b, 101), EFBIG);
    ck_assert_int_eq(sp_budget_take(&b, 60), 0);
    ck_assert_int_eq(sp_budget_take(&b, 41), EAGAIN);
    ck_assert_int_eq(sp_budget_take(&b, 40), 0);
    ck_assert_int_eq(sp_budget_take(&b, 1), EAGAIN);
    sp_budget_give(&b, 60);
    ck_assert_int_eq(sp_budget_take(&b, 60), 0);
    sp_budget_destroy(&b);
    /* no budget: everything admitted */
    sp_budget_init(&b, 0);
    ck_assert_int_eq(sp_budget_take(&b, UINT64_MAX), 0);
    sp_budget_destroy(&b);
}
END_TEST

static Suite *serve_budget_suite(void)
{
    Suite *s = suite_create("serve_budget");
    TCase *tc = fx_tcase("serve_budget");

    tcase_add_test(tc, test_cost);
    tcase_add_test(tc, test_body);
    tcase_add_test(tc, test_ledger);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(serve_budget_suite());
}
