/* The server's counters and their Prometheus text form (metrics.h). */
#include "metrics.h"

#include <stdarg.h>
#include <stdio.h>

static const unsigned codes[SP_METRICS_CODES] = {200, 304, 400, 403, 404, 405,
                                                 413, 414, 415, 429, 500, 503};
static const double bounds[SP_METRICS_BUCKETS] = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10};

void sp_metrics_init(struct sp_metrics *m)
{
    for (size_t i = 0; i <= SP_METRICS_CODES; i++)
        atomic_init(&m->requests[i], 0);
    for (size_t i = 0; i <= SP_METRICS_BUCKETS; i++)
        atomic_init(&m->buckets[i], 0);
    atomic_init(&m->latency_us, 0);
    atomic_init(&m->bytes, 0);
}

void sp_metrics_record(struct sp_metrics *m, unsigned status, uint64_t bytes,
                       double seconds)
{
    size_t c = 0, b = 0;

    while (c < SP_METRICS_CODES && codes[c] != status)
        c++;
    while (b < SP_METRICS_BUCKETS && seconds > bounds[b])
        b++;
    atomic_fetch_add(&m->requests[c], 1);
    atomic_fetch_add(&m->buckets[b], 1);
    atomic_fetch_add(&m->latency_us,
                     (unsigned long long)(seconds > 0 ? seconds * 1e6 : 0));
    atomic_fetch_add(&m->bytes, bytes);
}

/* A text being built: BUF of LEN bytes, AT the length it would have. */
struct text {
    char *buf;
    size_t len, at;
};

__attribute__((format(printf, 2, 3)))
static void put(struct text *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(t->at < t->len ? t->buf + t->at : NULL,
                  t->at < t->len ? t->len - t->at : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->at += (size_t)n;
}

size_t sp_metrics_render(struct sp_metrics *m, unsigned in_flight,
                         unsigned busy, size_t queued, char *buf, size_t len)
{
    struct text t = {buf, len, 0};
    unsigned long long total = 0;

    if (len > 0)
        buf[0] = '\0';
    put(&t, "# HELP scaleppm_requests_total Requests answered, by status.\n"
            "# TYPE scaleppm_requests_total counter\n");
    for (size_t i = 0; i < SP_METRICS_CODES; i++)
        put(&t, "scaleppm_requests_total{code=\"%u\"} %llu\n", codes[i],
            atomic_load(&m->requests[i]));
    put(&t, "scaleppm_requests_total{code=\"other\"} %llu\n",
        atomic_load(&m->requests[SP_METRICS_CODES]));
    put(&t, "# HELP scaleppm_request_seconds Time from a request's headers "
            "to its answer's end.\n"
            "# TYPE scaleppm_request_seconds histogram\n");
    for (size_t i = 0; i <= SP_METRICS_BUCKETS; i++) {
        total += atomic_load(&m->buckets[i]);
        if (i < SP_METRICS_BUCKETS)
            put(&t, "scaleppm_request_seconds_bucket{le=\"%g\"} %llu\n",
                bounds[i], total);
        else
            put(&t, "scaleppm_request_seconds_bucket{le=\"+Inf\"} %llu\n",
                total);
    }
    put(&t, "scaleppm_request_seconds_sum %.6f\n"
            "scaleppm_request_seconds_count %llu\n",
        (double)atomic_load(&m->latency_us) / 1e6, total);
    put(&t, "# HELP scaleppm_response_bytes_total Body bytes answered.\n"
            "# TYPE scaleppm_response_bytes_total counter\n"
            "scaleppm_response_bytes_total %llu\n",
        atomic_load(&m->bytes));
    put(&t, "# HELP scaleppm_in_flight Requests begun, not yet answered.\n"
            "# TYPE scaleppm_in_flight gauge\nscaleppm_in_flight %u\n"
            "# HELP scaleppm_jobs_running Jobs on a worker.\n"
            "# TYPE scaleppm_jobs_running gauge\nscaleppm_jobs_running %u\n"
            "# HELP scaleppm_queue_length Requests waiting for a worker.\n"
            "# TYPE scaleppm_queue_length gauge\nscaleppm_queue_length %zu\n",
        in_flight, busy, queued);
    return t.at;
}
