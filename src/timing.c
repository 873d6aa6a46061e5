#include "timing.h"

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
