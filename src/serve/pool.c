/* The server's workers and their bounded queue (pool.h). */
#include "pool.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>

static void *worker(void *arg)
{
    struct sp_pool *p = arg;

    pthread_mutex_lock(&p->mu);
    for (;;) {
        void *task;

        while (p->count == 0 && !p->stopping)
            pthread_cond_wait(&p->ready, &p->mu);
        if (p->count == 0)
            break;  /* stopping, and nothing left to run */
        task = p->ring[p->head];
        p->head = (p->head + 1) % p->cap;
        p->count--;
        p->busy++;
        pthread_mutex_unlock(&p->mu);
        p->run(task);
        pthread_mutex_lock(&p->mu);
        p->busy--;
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* join_all: end the first N threads of P (P->stopping set). */
static void join_all(struct sp_pool *p, unsigned n)
{
    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    pthread_cond_broadcast(&p->ready);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < n; i++)
        pthread_join(p->threads[i], NULL);
}

static void free_pool(struct sp_pool *p)
{
    while (atomic_load(&p->signalling) > 0)  /* a submit's last step */
        sched_yield();
    pthread_cond_destroy(&p->ready);
    pthread_mutex_destroy(&p->mu);
    free(p->threads);
    free(p->ring);
}

sp_status sp_pool_start(struct sp_pool *pool, unsigned workers, size_t queue,
                        size_t stack, void (*run)(void *task))
{
    struct sp_pool *p = pool;
    pthread_attr_t attr;
    sigset_t all, was;
    sp_status st = SP_OK;

    *p = (struct sp_pool){.run = run};
    /* The ring holds the queue and the tasks handed to idle workers. */
    p->cap = queue + workers;
    p->ring = calloc(p->cap, sizeof *p->ring);
    p->threads = calloc(workers, sizeof *p->threads);
    if (p->ring == NULL || p->threads == NULL) {
        free(p->ring);
        free(p->threads);
        return ENOMEM;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->ready, NULL);
    if ((st = pthread_attr_init(&attr)) != 0) {
        free_pool(p);
        return st;
    }
    (void)pthread_attr_setstacksize(&attr, stack);
    /* A worker's job reads mappings: a fault there must reach the guard's
     * handler (input/guard.c), and a fault's signal blocked is death. */
    sigfillset(&all);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    pthread_sigmask(SIG_BLOCK, &all, &was);
    for (; p->nthreads < workers; p->nthreads++)
        if ((st = pthread_create(&p->threads[p->nthreads], &attr, worker,
                                 p)) != 0)
            break;
    pthread_sigmask(SIG_SETMASK, &was, NULL);
    pthread_attr_destroy(&attr);
    if (st != SP_OK) {
        join_all(p, p->nthreads);
        free_pool(p);
    }
    return st;
}

sp_status sp_pool_submit(struct sp_pool *p, void *task)
{
    sp_status st = SP_OK;

    pthread_mutex_lock(&p->mu);
    /* A task is taken when the queue has room beside those the idle
     * workers are about to take. */
    if (p->stopping)
        st = ESHUTDOWN;
    else if (p->count >= p->cap || p->busy + p->count >= p->cap)
        st = EAGAIN;
    else {
        p->ring[(p->head + p->count) % p->cap] = task;
        p->count++;
        atomic_fetch_add(&p->signalling, 1);
    }
    pthread_mutex_unlock(&p->mu);
    /* Signalled after the unlock: a worker woken under the lock would
     * find it held and sleep again (a context switch a request).  A stop
     * meanwhile waits for the signal before it destroys READY. */
    if (st == SP_OK) {
        pthread_cond_signal(&p->ready);
        atomic_fetch_sub(&p->signalling, 1);
    }
    return st;
}

void sp_pool_load(struct sp_pool *p, unsigned *busy, size_t *queued)
{
    pthread_mutex_lock(&p->mu);
    *busy = p->busy;
    *queued = p->count;
    pthread_mutex_unlock(&p->mu);
}

void sp_pool_stop(struct sp_pool *p)
{
    join_all(p, p->nthreads);
    free_pool(p);
}
