/* metrics.h: what the server counts, and /metrics, its Prometheus text
 * form: requests by status, their latency as a histogram, the body bytes
 * sent; the caller adds the gauges it knows (in flight, queued).  Every
 * counter is atomic: the connections' threads record side by side. */
#ifndef SP_SERVE_METRICS_H
#define SP_SERVE_METRICS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* The statuses counted one by one; any other is counted as "other". */
#define SP_METRICS_CODES 13

/* The latency histogram's upper bounds, in seconds (and +Inf after). */
#define SP_METRICS_BUCKETS 12

struct sp_metrics {
    atomic_ullong requests[SP_METRICS_CODES + 1];
    atomic_ullong buckets[SP_METRICS_BUCKETS + 1];  /* not cumulative */
    atomic_ullong latency_us;                       /* the sum */
    atomic_ullong bytes;
    /* Jobs and their page faults, by the load path they took (enum
     * sp_io: read, mmap, pread). */
    atomic_ullong jobs[3], minflt[3], majflt[3];
};

/* sp_metrics_init: M all zero. */
void sp_metrics_init(struct sp_metrics *m);

/* sp_metrics_record: one request answered STATUS with BYTES of body
 * after SECONDS. */
void sp_metrics_record(struct sp_metrics *m, unsigned status, uint64_t bytes,
                       double seconds);

/* sp_metrics_job: one job run on the load path IO (SP_IO_READ, _MMAP or
 * _PREAD; another is not counted), with MINFLT minor and MAJFLT major
 * page faults over all its phases. */
void sp_metrics_job(struct sp_metrics *m, int io, long minflt, long majflt);

/* sp_metrics_render: M, and the gauges IN_FLIGHT, BUSY (jobs running),
 * QUEUED and HELD (the bytes --max-memory counts: the admitted jobs' and
 * the answers not yet sent), as Prometheus text into BUF (LEN bytes),
 * NUL-terminated.
 * Returns the length written, or LEN or more when it did not fit (as
 * snprintf). */
size_t sp_metrics_render(struct sp_metrics *m, unsigned in_flight,
                         unsigned busy, size_t queued, uint64_t held,
                         char *buf, size_t len);

#endif
