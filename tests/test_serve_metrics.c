/* The server's counters and their Prometheus text (src/serve/metrics.c). */
#include <string.h>

#include "fixtures.h"
#include "input_types.h"
#include "metrics.h"

START_TEST(test_render)
{
    /* the buckets are cumulative: 0.0001 s in the first, 0.002 s by
     * 0.0025, 3 s by 10, 100 s only in +Inf */
    static const char *const want[] = {
        "scaleppm_requests_total{code=\"200\"} 2\n",
        "scaleppm_requests_total{code=\"404\"} 1\n",
        "scaleppm_requests_total{code=\"other\"} 1\n",
        "_bucket{le=\"0.001\"} 1\n", "_bucket{le=\"0.0025\"} 2\n",
        "_bucket{le=\"2.5\"} 2\n", "_bucket{le=\"10\"} 3\n",
        "_bucket{le=\"+Inf\"} 4\n", "scaleppm_request_seconds_count 4\n",
        "scaleppm_response_bytes_total 160\n", "scaleppm_in_flight 3\n",
        "scaleppm_jobs_running 2\n", "scaleppm_queue_length 7\n",
        "scaleppm_memory_held_bytes 4096\n",
        "scaleppm_jobs_total{io=\"mmap\"} 2\n",
        "scaleppm_jobs_total{io=\"read\"} 0\n",
        "scaleppm_minor_faults_total{io=\"mmap\"} 12\n",
        "scaleppm_major_faults_total{io=\"mmap\"} 1\n",
        "scaleppm_major_faults_total{io=\"pread\"} 0\n",
    };
    struct sp_metrics m;
    char buf[8192], small[64];
    size_t n;

    sp_metrics_init(&m);
    sp_metrics_record(&m, 200, 100, 0.002);
    sp_metrics_record(&m, 200, 50, 3.0);
    sp_metrics_record(&m, 404, 10, 0.0001);
    sp_metrics_record(&m, 999, 0, 100.0);
    sp_metrics_job(&m, SP_IO_MMAP, 10, 1);
    sp_metrics_job(&m, SP_IO_MMAP, 2, 0);
    sp_metrics_job(&m, SP_IO_AUTO, 5, 5);  /* not a path taken: not counted */
    n = sp_metrics_render(&m, 3, 2, 7, 4096, buf, sizeof buf);
    ck_assert_uint_lt(n, sizeof buf);
    ck_assert_uint_eq(strlen(buf), n);
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        expect(strstr(buf, want[i]) != NULL, "no line '%s' in:\n%s", want[i],
               buf);
    /* too small a buffer: cut, NUL-terminated, the length wanted told */
    ck_assert_uint_eq(sp_metrics_render(&m, 3, 2, 7, 4096, small, sizeof small), n);
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
