#include "parallel.h"

#include <pthread.h>

struct band {
    pthread_t tid;
    sp_band_fn fn;
    void *arg;
    size_t y0, y1;
    sp_status status;
};

static void *run_band(void *p)
{
    struct band *b = p;

    b->status = b->fn(b->arg, b->y0, b->y1);
    return NULL;
}

sp_status sp_parallel_bands(size_t rows, unsigned threads, sp_band_fn fn,
                            void *arg, unsigned *used)
{
    struct band bands[SP_THREADS_MAX];
    sp_status st = SP_OK;
    size_t t, started;

    if (threads < 1 || threads > SP_THREADS_MAX)
        return SP_E_USAGE;
    t = threads < rows ? threads : rows;
    if (used != NULL)
        *used = (unsigned)t;
    for (started = 0; started < t; started++) {
        struct band *b = &bands[started];

        b->fn = fn;
        b->arg = arg;
        b->y0 = rows * started / t;
        b->y1 = rows * (started + 1) / t;
        b->status = SP_OK;
        if (pthread_create(&b->tid, NULL, run_band, b) != 0) {
            st = SP_E_THREAD;
            break;
        }
    }
    for (size_t i = 0; i < started; i++) {
        if (pthread_join(bands[i].tid, NULL) != 0)
            st = SP_E_THREAD;
        else if (st == SP_OK)
            st = bands[i].status;
    }
    return st;
}
