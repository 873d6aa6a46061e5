#include "parallel.h"

#include <pthread.h>
#include <stdlib.h>

#define WORKER_STACK ((size_t)512 * 1024)

/* The run's shared state.  Items taken and not yet finished are at most
 * one a thread, so they have distinct numbers modulo the thread count:
 * the thread waiting to finish item i sleeps on turn[i % threads] alone,
 * and the finish of item i - 1 wakes just that one. */
struct run {
    pthread_mutex_t mu;
    pthread_cond_t gate;       /* every thread started, or failed */
    int open;                  /* the gate: 1 go, -1 stop */
    size_t count;
    size_t next_take;          /* the next item to take */
    size_t next_finish;        /* items below it are finished */
    size_t failed_item;        /* the lowest item that failed, or count */
    sp_status failed;          /* its status, or 0 */
    sp_item_fn work, finish;
    void *arg;
    unsigned threads;
    pthread_cond_t *turn;      /* [threads] */
};

struct worker {
    struct run *run;
    unsigned thread;
    pthread_t tid;
};

/* fail: record item I's status ST; the caller holds mu. */
static void fail(struct run *r, size_t i, sp_status st)
{
    if (r->failed == SP_OK || i < r->failed_item) {
        r->failed = st;
        r->failed_item = i;
    }
    for (unsigned t = 0; t < r->threads; t++)
        pthread_cond_signal(&r->turn[t]);
}

static void run_items(struct run *r, unsigned thread)
{
    pthread_mutex_lock(&r->mu);
    while (r->open == 0)
        pthread_cond_wait(&r->gate, &r->mu);
    while (r->open > 0 && r->failed == SP_OK && r->next_take < r->count) {
        size_t i = r->next_take++;
        pthread_cond_t *turn = &r->turn[i % r->threads];
        sp_status st;

        pthread_mutex_unlock(&r->mu);
        st = r->work(r->arg, thread, i);
        pthread_mutex_lock(&r->mu);
        if (st != SP_OK) {
            fail(r, i, st);
            break;
        }
        while (r->next_finish != i && r->failed == SP_OK)
            pthread_cond_wait(turn, &r->mu);
        if (r->failed != SP_OK)
            break;
        pthread_mutex_unlock(&r->mu);
        st = r->finish(r->arg, thread, i);
        pthread_mutex_lock(&r->mu);
        if (st != SP_OK) {
            fail(r, i, st);
            break;
        }
        r->next_finish = i + 1;
        pthread_cond_signal(&r->turn[(i + 1) % r->threads]);
    }
    pthread_mutex_unlock(&r->mu);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;

    run_items(w->run, w->thread);
    return NULL;
}

/* open_gate: let the threads go (GO 1) or send them home (-1). */
static void open_gate(struct run *r, int go)
{
    pthread_mutex_lock(&r->mu);
    r->open = go;
    pthread_cond_broadcast(&r->gate);
    pthread_mutex_unlock(&r->mu);
}

sp_status sp_run_ordered(unsigned threads, size_t count, sp_item_fn work,
                         sp_item_fn finish, void *arg)
{
    struct run r = {.count = count, .failed_item = count, .work = work,
                    .finish = finish, .arg = arg, .threads = threads};
    struct worker *w;
    pthread_attr_t attr;
    unsigned started = 0;
    sp_status st = SP_OK;

    if (threads < 1 || threads > SP_THREADS_MAX)
        return SP_E_USAGE;
    if (threads > count)
        threads = r.threads = count > 0 ? (unsigned)count : 1;
    r.turn = malloc(threads * sizeof *r.turn);
    w = malloc(threads * sizeof *w);
    if (r.turn == NULL || w == NULL || pthread_mutex_init(&r.mu, NULL) != 0) {
        free(r.turn);
        free(w);
        return SP_E_THREAD;
    }
    pthread_cond_init(&r.gate, NULL);
    for (unsigned t = 0; t < threads; t++)
        pthread_cond_init(&r.turn[t], NULL);

    /* A thread needs little stack; the default 8 MiB of address space a
     * thread adds up under ulimit -v on a machine with many CPUs. */
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, WORKER_STACK);
    for (; started + 1 < threads; started++) {
        w[started].run = &r;
        w[started].thread = started + 1;
        if (pthread_create(&w[started].tid, &attr, worker_main,
                           &w[started]) != 0) {
            st = SP_E_THREAD;
            break;
        }
    }
    pthread_attr_destroy(&attr);

    open_gate(&r, st == SP_OK ? 1 : -1);
    if (st == SP_OK)
        run_items(&r, 0);
    for (unsigned t = 0; t < started; t++)
        pthread_join(w[t].tid, NULL);
    if (st == SP_OK)
        st = r.failed;

    for (unsigned t = 0; t < threads; t++)
        pthread_cond_destroy(&r.turn[t]);
    pthread_cond_destroy(&r.gate);
    pthread_mutex_destroy(&r.mu);
    free(r.turn);
    free(w);
    return st;
}
