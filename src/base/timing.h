/* timing.h: wall time (CLOCK_MONOTONIC) and page faults (getrusage of the
 * calling thread: a thread meters what it does itself) of one phase of a
 * run. */
#ifndef SP_TIMING_H
#define SP_TIMING_H

#include <stddef.h>
#include <stdint.h>

struct sp_phase {
    uint64_t ns;
    long minflt;  /* minor page faults: no I/O, the page was in memory */
    long majflt;  /* major page faults: the page had to be read */
};

struct sp_meter {
    uint64_t t0;
    long minflt0, majflt0;
};

/* sp_now_ns: CLOCK_MONOTONIC in nanoseconds.  The one clock: the
 * library's phases, and the experiment programs (src/tools, src/iobench)
 * too. */
uint64_t sp_now_ns(void);

/* sp_minflt: the calling thread's minor page faults so far. */
long sp_minflt(void);

/* sp_meter_start / sp_meter_stop: measure what happens between the two
 * calls and add it to *PHASE (a phase done in several pieces sums them). */
void sp_meter_start(struct sp_meter *m);
void sp_meter_stop(const struct sp_meter *m, struct sp_phase *phase);

/* sp_phase_add: P's page faults added to TO's, and its time too if
 * WITH_NS (phases that run one at a time add up; those side by side do
 * not). */
void sp_phase_add(struct sp_phase *to, const struct sp_phase *p, int with_ns);

/* When a piece of work ran: CLOCK_MONOTONIC ns. */
struct sp_interval {
    uint64_t t0, t1;
};

/* sp_interval_union: how long at least one of the N INTERVALS was running: the
 * length of their union (INTERVALS is sorted here). */
uint64_t sp_interval_union(struct sp_interval *intervals, size_t n);

#endif
