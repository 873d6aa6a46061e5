/* The watch over running jobs' deadlines (deadline.h). */
#include "deadline.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "timing.h"

struct slot {
    struct sp_cancel *c;  /* the job's token; NULL: a socket's, or free */
    int fd;               /* the socket shut down at the deadline; -1:
                             none */
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

/* sweep: every token in W whose deadline is past NOW set, every such
 * socket shut down (W locked). */
static void sweep(struct sp_watch *w, uint64_t now)
{
    for (unsigned i = 0; i < w->n; i++) {
        if (now < w->slots[i].deadline)
            continue;
        if (w->slots[i].c != NULL)
            sp_cancel_set(w->slots[i].c);
        else if (w->slots[i].fd >= 0)
            (void)shutdown(w->slots[i].fd, SHUT_RDWR);
    }
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
    for (unsigned i = 0; i < slots; i++)
        w->slots[i] = (struct slot){NULL, -1, UINT64_MAX};
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

/* enter: ENTRY in a free slot of W: the slot, or -1. */
static int enter(struct sp_watch *w, struct slot entry)
{
    int slot = -1;

    pthread_mutex_lock(&w->mu);
    for (unsigned i = 0; i < w->n && slot < 0; i++)
        if (w->slots[i].c == NULL && w->slots[i].fd < 0) {
            w->slots[i] = entry;
            slot = (int)i;
        }
    pthread_mutex_unlock(&w->mu);
    return slot;
}

int sp_watch_enter(struct sp_watch *w, struct sp_cancel *c,
                   uint64_t deadline_ns)
{
    return enter(w, (struct slot){c, -1, deadline_ns});
}

int sp_watch_enter_socket(struct sp_watch *w, int fd, uint64_t deadline_ns)
{
    return enter(w, (struct slot){NULL, fd, deadline_ns});
}

void sp_watch_leave(struct sp_watch *w, int slot)
{
    if (slot < 0)
        return;
    pthread_mutex_lock(&w->mu);
    w->slots[slot] = (struct slot){NULL, -1, UINT64_MAX};
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
