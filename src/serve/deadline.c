/* The watch over running jobs' deadlines (deadline.h). */
#include "deadline.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "timing.h"

struct slot {
    struct sp_cancel *c;  /* NULL: free */
    uint64_t deadline;
};

struct sp_watch {
    pthread_mutex_t mu;
    pthread_cond_t cv;    /* stopping */
    int stop;
    unsigned tick_ms, n;
    pthread_t thread;
    struct slot slots[];
};

/* sweep: every token in W whose deadline is past NOW set (W locked). */
static void sweep(struct sp_watch *w, uint64_t now)
{
    for (unsigned i = 0; i < w->n; i++)
        if (w->slots[i].c != NULL && now >= w->slots[i].deadline)
            sp_cancel_set(w->slots[i].c);
}

static void *watch(void *arg)
{
    struct sp_watch *w = arg;
    struct timespec at;

    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        clock_gettime(CLOCK_MONOTONIC, &at);
        at.tv_nsec += (long)w->tick_ms * 1000000L;
        at.tv_sec += at.tv_nsec / 1000000000L;
        at.tv_nsec %= 1000000000L;
        (void)pthread_cond_timedwait(&w->cv, &w->mu, &at);
        sweep(w, sp_now_ns());
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

sp_status sp_watch_start(struct sp_watch **out, unsigned slots,
                         unsigned tick_ms)
{
    struct sp_watch *w = calloc(1, sizeof *w + slots * sizeof *w->slots);
    pthread_condattr_t ca;
    sigset_t all, was;
    sp_status st;

    if (w == NULL)
        return ENOMEM;
    w->n = slots;
    w->tick_ms = tick_ms ? tick_ms : 1;
    pthread_mutex_init(&w->mu, NULL);
    /* the waits are timed on the monotonic clock, as sp_now_ns() */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &was);
    st = pthread_create(&w->thread, NULL, watch, w);
    pthread_sigmask(SIG_SETMASK, &was, NULL);
    if (st != 0) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return st;
    }
    *out = w;
    return SP_OK;
}

int sp_watch_enter(struct sp_watch *w, struct sp_cancel *c,
                   uint64_t deadline_ns)
{
    int slot = -1;

    pthread_mutex_lock(&w->mu);
    for (unsigned i = 0; i < w->n && slot < 0; i++)
        if (w->slots[i].c == NULL) {
            w->slots[i] = (struct slot){c, deadline_ns};
            slot = (int)i;
        }
    pthread_mutex_unlock(&w->mu);
    return slot;
}

void sp_watch_leave(struct sp_watch *w, int slot)
{
    if (slot < 0)
        return;
    pthread_mutex_lock(&w->mu);
    w->slots[slot].c = NULL;
    pthread_mutex_unlock(&w->mu);
}

void sp_watch_stop(struct sp_watch *w)
{
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
