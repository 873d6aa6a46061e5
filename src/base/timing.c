#include "timing.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

uint64_t sp_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void faults(long *minflt, long *majflt)
{
    struct rusage ru;

    if (getrusage(RUSAGE_THREAD, &ru) != 0) {
        *minflt = *majflt = 0;
        return;
    }
    *minflt = ru.ru_minflt;
    *majflt = ru.ru_majflt;
}

long sp_minflt(void)
{
    long minflt, majflt;

    faults(&minflt, &majflt);
    return minflt;
}

void sp_meter_start(struct sp_meter *m)
{
    faults(&m->minflt0, &m->majflt0);
    m->t0 = sp_now_ns();
}

void sp_meter_stop(const struct sp_meter *m, struct sp_phase *phase)
{
    long minflt, majflt;

    phase->ns += sp_now_ns() - m->t0;
    faults(&minflt, &majflt);
    phase->minflt += minflt - m->minflt0;
    phase->majflt += majflt - m->majflt0;
}

static int by_start(const void *a, const void *b)
{
    const struct sp_interval *x = a, *y = b;

    return (x->t0 > y->t0) - (x->t0 < y->t0);
}

uint64_t sp_interval_union(struct sp_interval *intervals, size_t n)
{
    uint64_t total = 0, t0 = 0, t1 = 0;

    qsort(intervals, n, sizeof *intervals, by_start);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || intervals[i].t0 > t1) {
            total += t1 - t0;
            t0 = intervals[i].t0;
            t1 = intervals[i].t1;
        } else if (intervals[i].t1 > t1) {
            t1 = intervals[i].t1;
        }
    }
    return total + (t1 - t0);
}

void sp_phase_add(struct sp_phase *to, const struct sp_phase *p, int with_ns)
{
    if (with_ns)
        to->ns += p->ns;
    to->minflt += p->minflt;
    to->majflt += p->majflt;
}
