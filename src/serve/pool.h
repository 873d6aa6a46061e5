/* pool.h: the server's workers and their queue: a fixed number of
 * threads, each running one task at a time, and a bounded queue of tasks
 * waiting for them.  A task that finds the queue full is refused at once
 * (the server answers 503), never waited for, so that a burst of
 * requests cannot pile up memory or time without bound. */
#ifndef SP_SERVE_POOL_H
#define SP_SERVE_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "status.h"

struct sp_pool {
    pthread_mutex_t mu;
    pthread_cond_t ready;   /* a task queued, or stopping */
    void **ring;            /* the queue: CAP tasks, COUNT from HEAD */
    size_t cap, head, count;
    unsigned busy;          /* tasks running */
    int stopping;
    atomic_uint signalling;  /* submitters past the unlock, not yet past
                                their signal: the stop waits for them */
    void (*run)(void *task);
    pthread_t *threads;
    unsigned nthreads;
};

/* sp_pool_start: POOL with WORKERS threads (each with a stack of STACK
 * bytes) running RUN on each task, and a queue of QUEUE tasks (0: none
 * waits; a task is taken only by an idle worker).  The threads start
 * with every signal blocked but the faults' (SIGBUS, SIGSEGV, SIGFPE,
 * SIGILL), which a job's guarded read of a mapping must take.  Returns 0, or an errno value with nothing
 * started. */
sp_status sp_pool_start(struct sp_pool *pool, unsigned workers, size_t queue,
                        size_t stack, void (*run)(void *task));

/* sp_pool_submit: TASK to run on POOL's next idle worker.  Returns 0;
 * EAGAIN when every worker is busy and the queue is full; ESHUTDOWN when
 * the pool is stopping.  On failure TASK is still the caller's. */
sp_status sp_pool_submit(struct sp_pool *pool, void *task);

/* sp_pool_load: the tasks running and those waiting, as a snapshot. */
void sp_pool_load(struct sp_pool *pool, unsigned *busy, size_t *queued);

/* sp_pool_stop: run every task queued, then end the threads and free
 * POOL.  No task may be submitted after (ESHUTDOWN). */
void sp_pool_stop(struct sp_pool *pool);

#endif
