#include "parallel.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#define WORKER_STACK ((size_t)512 * 1024)

struct worker {
    struct sp_pool *pool;
    unsigned band;
    pthread_t tid;
};

struct sp_pool {
    pthread_mutex_t mu;
    pthread_cond_t go;      /* a new round, or stop */
    pthread_cond_t done;    /* the last worker finished its band */
    unsigned long round;    /* rounds started */
    unsigned pending;       /* workers still in this round */
    int stopping;
    unsigned threads, started;

    /* The round's work, set under mu before round is advanced. */
    sp_band_fn fn;
    void *arg;
    size_t y0, rows;
    unsigned bands;

    sp_status status[SP_THREADS_MAX];
    struct worker workers[];  /* threads - 1 */
};

static void band_rows(const struct sp_pool *p, unsigned b, size_t *y0,
                      size_t *y1)
{
    *y0 = p->y0 + p->rows * b / p->bands;
    *y1 = p->y0 + p->rows * (b + 1) / p->bands;
}

static void *work(void *arg)
{
    struct worker *w = arg;
    struct sp_pool *p = w->pool;
    unsigned long seen = 0;

    pthread_mutex_lock(&p->mu);
    for (;;) {
        size_t y0, y1;

        while (p->round == seen && !p->stopping)
            pthread_cond_wait(&p->go, &p->mu);
        if (p->stopping)
            break;
        seen = p->round;
        if (w->band < p->bands) {
            band_rows(p, w->band, &y0, &y1);
            pthread_mutex_unlock(&p->mu);
            p->status[w->band] = p->fn(p->arg, w->band, y0, y1);
            pthread_mutex_lock(&p->mu);
        }
        if (--p->pending == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

sp_status sp_pool_start(unsigned threads, struct sp_pool **pool)
{
    pthread_attr_t attr;
    struct sp_pool *p;

    *pool = NULL;
    if (threads < 1 || threads > SP_THREADS_MAX)
        return SP_E_USAGE;
    p = calloc(1, sizeof *p + (threads - 1) * sizeof p->workers[0]);
    if (p == NULL)
        return ENOMEM;
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p);
        return SP_E_THREAD;
    }
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    p->threads = threads;
    /* A worker needs little stack; the default 8 MiB of address space a
     * thread adds up under ulimit -v on a machine with many CPUs. */
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, WORKER_STACK);
    for (; p->started < threads - 1; p->started++) {
        struct worker *w = &p->workers[p->started];

        w->pool = p;
        w->band = p->started + 1;
        if (pthread_create(&w->tid, &attr, work, w) != 0) {
            pthread_attr_destroy(&attr);
            sp_pool_stop(p);
            return SP_E_THREAD;
        }
    }
    pthread_attr_destroy(&attr);
    *pool = p;
    return SP_OK;
}

sp_status sp_pool_bands(struct sp_pool *p, size_t y0, size_t y1,
                        sp_band_fn fn, void *arg, unsigned *used)
{
    size_t rows = y1 > y0 ? y1 - y0 : 0;
    unsigned bands = rows < p->threads ? (unsigned)rows : p->threads;
    size_t b0, b1;

    if (used != NULL)
        *used = bands;
    if (bands == 0)
        return SP_OK;
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->y0 = y0;
    p->rows = rows;
    p->bands = bands;
    if (bands > 1) {
        /* Every worker wakes and counts down; those past the last band
         * have nothing else to do this round. */
        p->pending = p->started;
        p->round++;
        pthread_cond_broadcast(&p->go);
    }
    band_rows(p, 0, &b0, &b1);
    pthread_mutex_unlock(&p->mu);

    p->status[0] = fn(arg, 0, b0, b1);

    pthread_mutex_lock(&p->mu);
    while (bands > 1 && p->pending > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    for (unsigned b = 0; b < bands; b++)
        if (p->status[b] != SP_OK)
            return p->status[b];
    return SP_OK;
}

void sp_pool_stop(struct sp_pool *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->started; i++)
        pthread_join(p->workers[i].tid, NULL);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
