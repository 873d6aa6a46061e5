/* The server's counters and their Prometheus text form (metrics.h). */
#include "metrics.h"

#include <stdarg.h>
#include <stdio.h>

#include "input_types.h"

static const unsigned codes[SP_METRICS_CODES] = {
    200, 304, 400, 403, 404, 405, 413, 414, 415, 429, 431, 500, 503};
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
    for (size_t i = 0; i < 3; i++) {
        atomic_init(&m->jobs[i], 0);
        atomic_init(&m->minflt[i], 0);
        atomic_init(&m->majflt[i], 0);
    }
}

void sp_metrics_job(struct sp_metrics *m, int io, long minflt, long majflt)
{
    if (io < 0 || io > 2)
        return;
    atomic_fetch_add(&m->jobs[io], 1);
    atomic_fetch_add(&m->minflt[io],
                     (unsigned long long)(minflt > 0 ? minflt : 0));
    atomic_fetch_add(&m->majflt[io],
                     (unsigned long long)(majflt > 0 ? majflt : 0));
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

/* put_faults: the jobs and their page faults by load path. */
static void put_faults(struct text *t, struct sp_metrics *m)
{
    static const struct {
        const char *name, *help, *type;
    } series[] = {
        {"scaleppm_jobs_total", "Jobs run, by load path.", "counter"},
        {"scaleppm_minor_faults_total",
         "Minor page faults of the jobs, by load path.", "counter"},
        {"scaleppm_major_faults_total",
         "Major page faults of the jobs, by load path.", "counter"},
    };
    atomic_ullong *values[] = {m->jobs, m->minflt, m->majflt};

    for (size_t s = 0; s < 3; s++) {
        put(t, "# HELP %s %s\n# TYPE %s %s\n", series[s].name,
            series[s].help, series[s].name, series[s].type);
        for (int io = SP_IO_READ; io <= SP_IO_PREAD; io++)
            put(t, "%s{io=\"%s\"} %llu\n", series[s].name,
                sp_io_name((enum sp_io)io), atomic_load(&values[s][io]));
    }
}

size_t sp_metrics_render(struct sp_metrics *m, unsigned in_flight,
                         unsigned busy, size_t queued, uint64_t held,
                         char *buf, size_t len)
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
    put_faults(&t, m);
    put(&t, "# HELP scaleppm_in_flight Requests begun, not yet answered.\n"
            "# TYPE scaleppm_in_flight gauge\nscaleppm_in_flight %u\n"
            "# HELP scaleppm_jobs_running Jobs on a worker.\n"
            "# TYPE scaleppm_jobs_running gauge\nscaleppm_jobs_running %u\n"
            "# HELP scaleppm_queue_length Requests waiting for a worker.\n"
            "# TYPE scaleppm_queue_length gauge\nscaleppm_queue_length %zu\n"
            "# HELP scaleppm_memory_held_bytes Bytes the admitted jobs and "
            "the answers not yet sent hold (--max-memory's count).\n"
            "# TYPE scaleppm_memory_held_bytes gauge\n"
            "scaleppm_memory_held_bytes %llu\n",
        in_flight, busy, queued, (unsigned long long)held);
    return t.at;
}
