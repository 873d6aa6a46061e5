/* The server's counters and their Prometheus text (src/serve/metrics.c). */
#include <string.h>

#include "fixtures.h"
#include "metrics.h"

START_TEST(test_render)
{
    struct sp_metrics m;
    char buf[8192], small[64];
    size_t n;

    sp_metrics_init(&m);
    sp_metrics_record(&m, 200, 100, 0.002);
    sp_metrics_record(&m, 200, 50, 3.0);
    sp_metrics_record(&m, 404, 10, 0.0001);
    sp_metrics_record(&m, 999, 0, 100.0);
    n = sp_metrics_render(&m, 3, 2, 7, buf, sizeof buf);
    ck_assert_uint_lt(n, sizeof buf);
    ck_assert_uint_eq(strlen(buf), n);
    ck_assert_ptr_nonnull(strstr(buf, "scaleppm_requests_total{code=\"200\"} 2\n"));
    ck_assert_ptr_nonnull(strstr(buf, "scaleppm_requests_total{code=\"404\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(buf, "scaleppm_requests_total{code=\"other\"} 1\n"));
    /* cumulative buckets: 0.0001 in the first, 0.002 by 0.0025, 3 by 10,
     * 100 only in +Inf */
    ck_assert_ptr_nonnull(strstr(buf, "_bucket{le=\"0.001\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(buf, "_bucket{le=\"0.0025\"} 2\n"));
    ck_assert_ptr_nonnull(strstr(buf, "_bucket{le=\"2.5\"} 2\n"));
    ck_assert_ptr_nonnull(strstr(buf, "_bucket{le=\"10\"} 3\n"));
    ck_assert_ptr_nonnull(strstr(buf, "_bucket{le=\"+Inf\"} 4\n"));
    ck_assert_ptr_nonnull(strstr(buf, "scaleppm_request_seconds_count 4\n"));
    ck_assert_ptr_nonnull(strstr(buf, "scaleppm_response_bytes_total 160\n"));
    ck_assert_ptr_nonnull(strstr(buf, "scaleppm_in_flight 3\n"));
    ck_assert_ptr_nonnull(strstr(buf, "scaleppm_jobs_running 2\n"));
    ck_assert_ptr_nonnull(strstr(buf, "scaleppm_queue_length 7\n"));
    /* too small a buffer: cut, NUL-terminated, the length wanted told */
    ck_assert_uint_eq(sp_metrics_render(&m, 3, 2, 7, small, sizeof small), n);
    ck_assert_uint_eq(strlen(small), sizeof small - 1);
}
END_TEST

static Suite *serve_metrics_suite(void)
{
    Suite *s = suite_create("serve_metrics");
    TCase *tc = fx_tcase("serve_metrics");

    tcase_add_test(tc, test_render);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(serve_metrics_suite());
}
