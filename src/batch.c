#include "batch.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "msg.h"
#include "outfile.h"
#include "parallel.h"
#include "report.h"
#include "timing.h"

/* A batch in progress. */
struct run {
    const struct sp_batch *b;
    unsigned workers;       /* the threads taking files */
    atomic_uint tickets;    /* handed to the workers as they start */
    int progress;           /* b->progress */
    pthread_mutex_t lock;   /* next, the tally, status, shown, stderr */
    size_t next;            /* the next file to take */
    struct sp_tally *t;
    sp_status status;       /* of the first file that failed */
    int shown;              /* a progress line is on the terminal */
    int over;               /* the workers are done: no more progress */
    uint64_t t0;
    sigset_t signals;       /* those the watcher waits for */
};

/* stop: no more files taken, and the jobs in progress stopped. */
static void stop(void)
{
    atomic_store(&sp_job_cancel, 1);
}

/* unshow: the progress line, if one is shown, wiped (under the lock). */
static void unshow(struct run *r)
{
    if (r->shown)
        fputs("\r\033[K", stderr);
    r->shown = 0;
}

/* done_file: file I's job ended with ST (under the lock). */
static void done_file(struct run *r, size_t i, sp_status st,
                      const struct sp_report *rep)
{
    struct sp_tally *t = r->t;

    if (st == SP_OK) {
        t->scaled++;
        t->bytes += rep->load.input_bytes;
        if (r->b->timings) {
            unshow(r);
            sp_report_print(rep, r->b->json, stderr);
        }
        return;
    }
    if (st == EINTR && atomic_load(&sp_job_cancel))
        return;  /* stopped, not failed: the batch says why */
    t->failed++;
    if (r->status == SP_OK)
        r->status = st;
    unshow(r);
    sp_print_error(rep->failed_path != NULL ? rep->failed_path : r->b->in[i],
                   st, rep->why);
    if (r->b->fail_fast)
        stop();
}

/* exists: whether PATH names something already (a file, or a link to
 * one). */
static int exists(const char *path)
{
    struct stat sb;

    return stat(path, &sb) == 0;
}

static void *worker(void *arg)
{
    struct run *r = arg;
    const struct sp_batch *b = r->b;
    /* the batch's threads shared out: the first workers one more each */
    unsigned ticket = atomic_fetch_add(&r->tickets, 1);
    unsigned share = b->job.threads / r->workers +
                     (ticket < b->job.threads % r->workers);

    for (;;) {
        struct sp_job job = b->job;
        struct sp_report rep;
        sp_status st;
        size_t i;

        pthread_mutex_lock(&r->lock);
        i = r->next;
        if (i < b->n && !atomic_load(&sp_job_cancel))
            r->next++;
        else
            i = b->n;
        pthread_mutex_unlock(&r->lock);
        if (i == b->n)
            break;
        if (b->skip_existing && exists(b->out[i])) {
            pthread_mutex_lock(&r->lock);
            r->t->skipped++;
            pthread_mutex_unlock(&r->lock);
            continue;
        }
        job.in = b->in[i];
        job.out = b->out[i];
        job.threads = share;
        job.open_nowait = 1;  /* no input may hold a worker in open() */
        st = sp_job_run(&job, &rep);
        pthread_mutex_lock(&r->lock);
        done_file(r, i, st, &rep);
        pthread_mutex_unlock(&r->lock);
    }
    sp_buffer_drop();
    return NULL;
}

/* show: the progress line: files done of all, MB/s, time left (under the
 * lock). */
static void show(struct run *r)
{
    const struct sp_tally *t = r->t;
    size_t done = t->scaled + t->failed + t->skipped;
    double s = (double)(sp_now_ns() - r->t0) / 1e9;

    fprintf(stderr, "\r\033[Kscaleppm: %zu/%zu files, %.1f MB/s", done,
            r->b->n, s > 0 ? (double)t->bytes / 1e6 / s : 0.0);
    if (done > 0)
        fprintf(stderr, ", %.0f s left",
                s * (double)(r->b->n - done) / (double)done);
    fflush(stderr);
    r->shown = 1;
}

/* WAKE: the signal that tells the watcher the batch is over. */
#define WAKE SIGRTMIN

/* watcher: wait for the signals that stop the batch, and show the
 * progress while the workers work, until WAKE says the batch is over.  A
 * second signal ends the process at once (a job blocked on a FIFO would
 * not see the first), its outputs out of sight removed. */
static void *watcher(void *arg)
{
    struct run *r = arg;
    const struct timespec tick = {0, 250 * 1000 * 1000};
    int over = 0;

    while (!over) {
        int sig = r->progress ? sigtimedwait(&r->signals, NULL, &tick)
                              : sigwaitinfo(&r->signals, NULL);

        pthread_mutex_lock(&r->lock);
        over = r->over;
        if (sig > 0 && sig != WAKE && !over) {
            if (r->t->signal != 0) {
                (void)sp_outfile_discard_pending();
                _exit(1);
            }
            r->t->signal = sig;
            stop();
        }
        if (r->progress && !over && r->t->signal == 0)
            show(r);
        pthread_mutex_unlock(&r->lock);
    }
    return NULL;
}

/* start: the workers but the caller's, WANT of them at most: how many
 * started. */
static unsigned start(struct run *r, pthread_t *tid, unsigned want)
{
    pthread_attr_t attr;
    unsigned n = 0;

    if (pthread_attr_init(&attr) != 0)
        return 0;
    (void)pthread_attr_setstacksize(&attr, 512 * 1024);
    while (n < want && sp_run_thread_create(&tid[n], &attr, worker, r) == 0)
        n++;
    pthread_attr_destroy(&attr);
    return n;
}

sp_status sp_batch_run(const struct sp_batch *b, struct sp_tally *t)
{
    unsigned workers = b->n < b->job.threads ? (unsigned)b->n
                                             : b->job.threads;
    struct run r = {.b = b, .t = t, .lock = PTHREAD_MUTEX_INITIALIZER,
                    .progress = b->progress};
    pthread_t tid[SP_THREADS_MAX], watch;
    sigset_t old;
    unsigned started;

    memset(t, 0, sizeof *t);
    t->files = b->n;
    atomic_store(&sp_job_cancel, 0);
    r.workers = workers < 1 ? 1 : workers;
    r.t0 = sp_now_ns();
    sp_buffer_policy(b->buffers);
    r.signals = b->stop_signals;
    sigaddset(&r.signals, WAKE);
    pthread_sigmask(SIG_BLOCK, &r.signals, &old);
    if (pthread_create(&watch, NULL, watcher, &r) != 0) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return SP_E_THREAD;
    }
    started = start(&r, tid, r.workers - 1);
    worker(&r);
    for (unsigned k = 0; k < started; k++)
        pthread_join(tid[k], NULL);
    pthread_mutex_lock(&r.lock);
    r.over = 1;
    unshow(&r);
    t->ns = sp_now_ns() - r.t0;
    pthread_mutex_unlock(&r.lock);
    pthread_kill(watch, WAKE);
    pthread_join(watch, NULL);
    /* A stop signal that came once the batch was over ends it as it
     * would have ended a one-file run. */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (t->signal != 0)
        return EINTR;
    return r.status;
}

/* human: N bytes in decimal units, into BUF (LEN bytes). */
static const char *human(uint64_t n, char *buf, size_t len)
{
    static const char *const unit[] = {"kB", "MB", "GB", "TB"};
    double v = (double)n;
    int u = -1;

    while (v >= 1000 && u < 3) {
        v /= 1000;
        u++;
    }
    if (u < 0)
        snprintf(buf, len, "%llu B", (unsigned long long)n);
    else
        snprintf(buf, len, "%.1f %s", v, unit[u]);
    return buf;
}

void sp_tally_print(const struct sp_tally *t)
{
    size_t left = t->files - t->scaled - t->failed - t->skipped;
    char size[32];

    fprintf(stderr, "scaleppm: %zu scaled", t->scaled);
    if (t->failed > 0)
        fprintf(stderr, ", %zu failed", t->failed);
    if (t->skipped > 0)
        fprintf(stderr, ", %zu skipped", t->skipped);
    if (left > 0)
        fprintf(stderr, ", %zu not done", left);
    fprintf(stderr, ", %s in %.1f s%s\n", human(t->bytes, size, sizeof size),
            (double)t->ns / 1e9, t->signal != 0 ? ", interrupted" : "");
}
