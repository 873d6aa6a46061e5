#include "parallel.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#define WORKER_STACK ((size_t)512 * 1024)

SP_INTERNAL sp_thread_create_fn sp_run_thread_create = pthread_create;

/* The run's shared state, under MU.  Every item taken and not finished
 * holds one of the SLOTS = threads * SP_RUN_DEPTH slots, so such items
 * have distinct numbers modulo SLOTS: item i's slot and readiness are
 * kept at i % SLOTS.  That holds however few of the threads started: the items
 * taken and not finished are always consecutive, and no more than the
 * slots in use.  Whenever MU is free, either a thread is finishing or the
 * first unfinished item is not ready: whoever makes an item ready with
 * nobody finishing finishes it (and the ready ones after it) itself. */
struct run {
    pthread_mutex_t mu;
    pthread_cond_t gate;       /* every thread that could start has */
    int open;                  /* the gate: 1 go */
    size_t count;
    size_t next_take;          /* the next item to take */
    size_t next_finish;        /* items below it are finished */
    int finishing;             /* a thread is in finish_ready() */
    size_t failed_item;        /* the lowest item that failed, or count */
    sp_status failed;          /* its status, or 0 */
    sp_item_fn work, finish;
    void *arg;
    unsigned threads, slots;
    unsigned *slot_of;         /* [slots]: the slot of item i at i % slots */
    unsigned char *ready;      /* [slots]: item i worked, not finished */
    unsigned char *busy;       /* [slots]: the slot holds an unfinished item */
    pthread_cond_t *freed;     /* [threads]: a slot of the thread's came
                                  free, or the run stopped */
    int placed;                /* the threads started on CPUs of ALLOWED */
    cpu_set_t allowed;         /* the CPUs the caller may run on */
};

struct worker {
    struct run *run;
    unsigned thread;
    pthread_t tid;
};

/* fail: record item I's status ST and wake every thread; the caller holds
 * mu. */
static void fail(struct run *r, size_t i, sp_status st)
{
    if (r->failed == SP_OK || i < r->failed_item) {
        r->failed = st;
        r->failed_item = i;
    }
    for (unsigned t = 0; t < r->threads; t++)
        pthread_cond_signal(&r->freed[t]);
}

/* free_slot: a slot of THREAD's that holds nothing unfinished, or
 * r->slots if there is none. */
static unsigned free_slot(const struct run *r, unsigned thread)
{
    for (unsigned k = 0; k < SP_RUN_DEPTH; k++) {
        unsigned s = thread * SP_RUN_DEPTH + k;
        if (!r->busy[s])
            return s;
    }
    return r->slots;
}

/* finish_ready: finish the ready items from the first unfinished one on,
 * in order, until one is not ready; the caller holds mu and nobody else
 * is finishing. */
static void finish_ready(struct run *r)
{
    r->finishing = 1;
    while (r->failed == SP_OK && r->next_finish < r->count &&
           r->ready[r->next_finish % r->slots]) {
        size_t i = r->next_finish;
        unsigned slot = r->slot_of[i % r->slots];
        sp_status st;

        pthread_mutex_unlock(&r->mu);
        st = r->finish(r->arg, slot, i);
        pthread_mutex_lock(&r->mu);
        r->ready[i % r->slots] = 0;
        if (st != SP_OK) {
            fail(r, i, st);
            break;
        }
        r->next_finish = i + 1;
        r->busy[slot] = 0;
        pthread_cond_signal(&r->freed[slot / SP_RUN_DEPTH]);
    }
    r->finishing = 0;
}

static void run_items(struct run *r, unsigned thread)
{
    pthread_mutex_lock(&r->mu);
    while (r->open == 0)
        pthread_cond_wait(&r->gate, &r->mu);
    /* A worker is through the gate where place() put it; from here on
     * the scheduler decides. */
    if (thread > 0 && r->placed) {
        pthread_mutex_unlock(&r->mu);
        (void)pthread_setaffinity_np(pthread_self(), sizeof r->allowed,
                                     &r->allowed);
        pthread_mutex_lock(&r->mu);
    }
    while (r->failed == SP_OK && r->next_take < r->count) {
        unsigned slot = free_slot(r, thread);
        size_t i;
        sp_status st;

        if (slot == r->slots) {
            pthread_cond_wait(&r->freed[thread], &r->mu);
            continue;
        }
        i = r->next_take++;
        r->busy[slot] = 1;
        r->slot_of[i % r->slots] = slot;
        pthread_mutex_unlock(&r->mu);
        st = r->work(r->arg, slot, i);
        pthread_mutex_lock(&r->mu);
        if (st != SP_OK) {
            fail(r, i, st);
            break;
        }
        r->ready[i % r->slots] = 1;
        if (!r->finishing)
            finish_ready(r);
    }
    pthread_mutex_unlock(&r->mu);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;

    run_items(w->run, w->thread);
    return NULL;
}

/* place: start worker THREAD on its own CPU in ATTR: the THREAD-th of the
 * allowed CPUs after the caller's, round, so that a new thread does not
 * wait on its creator's CPU for the creator to block (results/README.md,
 * "design notes").  The worker lets go of the pin once through the gate
 * (run_items), where it would otherwise be woken onto its waker's CPU. */
static void place(struct run *r, pthread_attr_t *attr, unsigned thread)
{
    int n = CPU_COUNT(&r->allowed), here = sched_getcpu(), k = 0, cpu;
    unsigned skip;
    cpu_set_t one;

    if (here < 0)
        here = 0;
    for (cpu = 0; cpu < here && cpu < CPU_SETSIZE; cpu++)
        k += CPU_ISSET(cpu, &r->allowed);
    skip = ((unsigned)k + thread) % (unsigned)n;
    for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &r->allowed) && skip-- == 0)
            break;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    (void)pthread_attr_setaffinity_np(attr, sizeof one, &one);
}

/* open_gate: let the threads go. */
static void open_gate(struct run *r)
{
    pthread_mutex_lock(&r->mu);
    r->open = 1;
    pthread_cond_broadcast(&r->gate);
    pthread_mutex_unlock(&r->mu);
}

sp_status sp_run_ordered(unsigned threads, size_t count, sp_item_fn work,
                         sp_item_fn finish, void *arg, unsigned *ran)
{
    struct run r = {.count = count, .failed_item = count, .work = work,
                    .finish = finish, .arg = arg};
    struct worker *w;
    pthread_attr_t attr;
    unsigned started = 0;
    sp_status st = SP_OK;

    if (threads < 1 || threads > SP_THREADS_MAX)
        return SP_E_USAGE;
    if (threads > count)
        threads = count > 0 ? (unsigned)count : 1;
    r.threads = threads;
    r.slots = threads * SP_RUN_DEPTH;
    r.slot_of = malloc(r.slots * sizeof *r.slot_of);
    r.ready = calloc(r.slots, 1);
    r.busy = calloc(r.slots, 1);
    r.freed = malloc(threads * sizeof *r.freed);
    w = malloc(threads * sizeof *w);
    if (r.slot_of == NULL || r.ready == NULL || r.busy == NULL ||
        r.freed == NULL || w == NULL ||
        pthread_mutex_init(&r.mu, NULL) != 0) {
        st = SP_E_THREAD;
        goto out;
    }
    pthread_cond_init(&r.gate, NULL);
    for (unsigned t = 0; t < threads; t++)
        pthread_cond_init(&r.freed[t], NULL);

    /* A thread needs little stack; the default 8 MiB of address space a
     * thread adds up under ulimit -v on a machine with many CPUs. */
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, WORKER_STACK);
    r.placed = threads > 1 &&
               sched_getaffinity(0, sizeof r.allowed, &r.allowed) == 0 &&
               CPU_COUNT(&r.allowed) > 1;
    for (; started + 1 < threads; started++) {
        w[started].run = &r;
        w[started].thread = started + 1;
        if (r.placed)
            place(&r, &attr, started + 1);
        /* Whatever stops a thread, the ones started do its share. */
        if (sp_run_thread_create(&w[started].tid, &attr, worker_main,
                                 &w[started]) != 0)
            break;
    }
    pthread_attr_destroy(&attr);
    if (ran != NULL)
        *ran = started + 1;

    open_gate(&r);
    run_items(&r, 0);
    for (unsigned t = 0; t < started; t++)
        pthread_join(w[t].tid, NULL);
    st = r.failed;

    for (unsigned t = 0; t < threads; t++)
        pthread_cond_destroy(&r.freed[t]);
    pthread_cond_destroy(&r.gate);
    pthread_mutex_destroy(&r.mu);
out:
    free(r.slot_of);
    free(r.ready);
    free(r.busy);
    free(r.freed);
    free(w);
    return st;
}
