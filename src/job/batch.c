#include "batch.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "parallel.h"
#include "report.h"
#include "timing.h"
#include "write.h"

/* A batch in progress. */
struct run {
    const struct sp_batch *b;
    unsigned workers;       /* the threads taking files */
    unsigned running;       /* of them, those started (under the lock) */
    atomic_uint tickets;    /* handed to the workers as they start */
    int progress;           /* b->reporter.progress is called */
    struct sp_cancel own;   /* the batch's token, when the caller gave
                               none */
    struct sp_cancel *cancel;  /* the jobs' token: the caller's, or own */
    pthread_mutex_t lock;   /* next, the tally, status, the reporter's
                               calls, and the figures of the estimate
                               below */
    size_t next;            /* the next file to take */
    struct sp_tally *t;
    sp_status status;       /* of the first file that failed */
    int over;               /* the workers are done: no more progress */
    uint64_t t0;
    sigset_t signals;       /* those the watcher waits for */
    /* The time-left estimate's figures, with progress only (else NULL). */
    uint64_t *size;         /* each input's size, taken at the start */
    struct sp_eta_file *fly;  /* a worker's (by ticket) file in progress */
    uint64_t left;          /* the bytes of the files not yet taken */
    uint64_t done_bytes, done_ns;  /* of the files ended, and their jobs'
                                      time, summed */
};

/* stop: no more files taken, and the jobs in progress stopped. */
static void stop(struct run *r)
{
    sp_cancel_set(r->cancel);
}

/* report_file: file I ended with ST, told to the reporter (under the
 * lock). */
static void report_file(struct run *r, size_t i, sp_status st,
                        const struct sp_report *rep)
{
    if (r->b->reporter.file != NULL)
        r->b->reporter.file(r->b->reporter.arg, i, st, rep);
}

/* report_over: no more progress (under the lock). */
static void report_over(struct run *r)
{
    if (r->b->reporter.over != NULL)
        r->b->reporter.over(r->b->reporter.arg);
}

/* done_file: file I's job, which worker TICKET took at START (since
 * the batch began), ended with ST (under the lock). */
static void done_file(struct run *r, unsigned ticket, size_t i,
                      uint64_t start, sp_status st, struct sp_report *rep)
{
    struct sp_tally *t = r->t;

    rep->in_batch = 1;
    rep->worker = ticket;
    rep->start_ns = start;
    rep->end_ns = sp_now_ns() - r->t0;

    if (r->fly != NULL) {
        r->done_bytes += r->fly[ticket].bytes;
        r->done_ns += sp_now_ns() - r->fly[ticket].start_ns;
        r->fly[ticket] = (struct sp_eta_file){0, 0};
    }
    if (st == EINTR && sp_cancelled(r->cancel))
        return;  /* stopped, not failed: the batch says why */
    if (st == SP_OK) {
        t->scaled++;
        t->bytes += rep->load.input_bytes;
    } else {
        t->failed++;
        if (r->status == SP_OK)
            r->status = st;
        if (r->b->fail_fast)
            stop(r);
    }
    report_file(r, i, st, rep);
}

/* whole: whether PATH is already a whole output (write.h), which
 * --skip-existing leaves alone; one a crash left empty or short is made
 * again. */
static int whole(const char *path)
{
    enum sp_outfmt fmt;

    return sp_outfmt_for(path, &fmt, NULL) == SP_OK &&
           sp_output_whole(path, fmt);
}

/* skipped: file I, whose output was whole already, reported as skipped
 * by worker TICKET (under the lock). */
static void skipped(struct run *r, unsigned ticket, size_t i)
{
    uint64_t now = sp_now_ns() - r->t0;
    struct sp_report rep = {.input = r->b->in[i], .output = r->b->out[i],
                            .skipped = 1, .factor = r->b->job.factor,
                            .filter = sp_filter_of(r->b->job.filter)->name,
                            .load.io_used = r->b->job.io, .in_batch = 1,
                            .worker = ticket, .start_ns = now,
                            .end_ns = now};

    report_file(r, i, SP_OK, &rep);
}

static void *worker(void *arg)
{
    struct run *r = arg;
    const struct sp_batch *b = r->b;
    /* the batch's threads shared out: the first workers one more each */
    unsigned ticket = atomic_fetch_add(&r->tickets, 1);
    unsigned share = b->job.threads / r->workers +
                     (ticket < b->job.threads % r->workers);
    struct sp_reuse reuse = {0};  /* this worker's, under REUSE */

    for (;;) {
        struct sp_job job = b->job;
        struct sp_report rep;
        sp_status st;
        uint64_t start;
        size_t i;

        pthread_mutex_lock(&r->lock);
        start = sp_now_ns() - r->t0;
        i = r->next;
        if (i < b->n && !sp_cancelled(r->cancel))
            r->next++;
        else
            i = b->n;
        if (i < b->n && r->fly != NULL) {
            r->left -= r->size[i];
            r->fly[ticket] = (struct sp_eta_file){r->size[i], sp_now_ns()};
        }
        pthread_mutex_unlock(&r->lock);
        if (i == b->n)
            break;
        if (b->skip_existing && whole(b->out[i])) {
            pthread_mutex_lock(&r->lock);
            r->t->skipped++;
            if (r->fly != NULL)  /* no work: out of the estimate */
                r->fly[ticket] = (struct sp_eta_file){0, 0};
            skipped(r, ticket, i);
            pthread_mutex_unlock(&r->lock);
            continue;
        }
        job.in = sp_src_path(b->in[i]);
        job.out = sp_target_path(b->out[i]);
        /* the names were checked (outnames.h): each asks for a format */
        (void)sp_outfmt_for(b->out[i], &job.fmt, &job.pnm_type);
        job.threads = share;
        job.reuse = b->buffers == SP_BUFFER_REUSE ? &reuse : NULL;
        job.cancel = r->cancel;
        job.open_nowait = 1;  /* no input may hold a worker in open() */
        st = sp_job_exec(&job, &rep);
        pthread_mutex_lock(&r->lock);
        done_file(r, ticket, i, start, st, &rep);
        pthread_mutex_unlock(&r->lock);
    }
    sp_reuse_drop(&reuse);
    return NULL;
}

double sp_batch_eta(uint64_t left, uint64_t done_bytes, uint64_t done_ns,
                    const struct sp_eta_file *fly, size_t nfly,
                    uint64_t now_ns, unsigned workers)
{
    double rate, work = (double)left, longest = 0;

    if (done_bytes == 0 || done_ns == 0 || workers == 0)
        return -1;
    rate = (double)done_bytes / (double)done_ns;  /* a job's bytes a ns */
    for (size_t k = 0; k < nfly; k++) {
        double rest = (double)fly[k].bytes;

        if (fly[k].bytes == 0)
            continue;
        /* credit what the job would have done so far at the rate */
        if (now_ns > fly[k].start_ns)
            rest -= rate * (double)(now_ns - fly[k].start_ns);
        if (rest < 0)
            rest = 0;
        work += rest;
        if (rest > longest)
            longest = rest;
    }
    /* the workers share the work, but a file is one job's to finish */
    work /= (double)workers;
    return (work > longest ? work : longest) / rate / 1e9;
}

/* show: the progress (files done of all, bytes, time, time left) told
 * to the reporter (under the lock). */
static void show(struct run *r)
{
    const struct sp_tally *t = r->t;
    uint64_t now = sp_now_ns();
    struct sp_progress p = {.done = t->scaled + t->failed + t->skipped,
                            .files = r->b->n, .bytes = t->bytes,
                            .ns = now - r->t0};

    p.eta = r->fly == NULL ? -1
                           : sp_batch_eta(r->left, r->done_bytes,
                                          r->done_ns, r->fly, r->workers,
                                          now, r->running);
    r->b->reporter.progress(r->b->reporter.arg, &p);
}

/* WAKE: the signal that tells the watcher the batch is over.  Sent only
 * once the batch is over: before that, one comes from outside, and stops
 * the batch as any other signal does when it is one of b->stop_signals. */
#define WAKE SIGRTMIN

/* GRACE_NS: how long the jobs have, after a signal, to stop at their next
 * item and remove their outputs themselves, so that the tally is exact;
 * a job blocked on a FIFO or a stalled filesystem never stops, and the
 * batch then ends without it (a person, timeout or Slurm sent one signal
 * and expects an end).  Shorter than the second a user waits. */
#define GRACE_NS (500 * 1000 * 1000ULL)

/* A thread of the batch's needs little stack: taken from RLIMIT_STACK,
 * the default would be too little under ulimit -s 32, and too much address
 * space under ulimit -v on a machine with many CPUs. */
#define STACK_SIZE (512 * 1024)

/* give_up: the jobs did not stop within GRACE_NS, or a second signal
 * came: b->stopped called with the tally as it stands (under the lock,
 * which no worker then takes again: no file ends or is reported in the
 * meantime); it removes the outputs out of sight (the program's registry,
 * pending.h).  Returns when b->stopped
 * does. */
static void give_up(struct run *r)
{
    report_over(r);
    r->t->ns = sp_now_ns() - r->t0;
    r->b->stopped(r->t->signal, r->t);
}

/* watcher: wait for the signals that stop the batch, and show the
 * progress while the workers work, until WAKE says the batch is over.
 * After a signal, the jobs have GRACE_NS to stop; a second signal ends
 * the batch at once. */
static void *watcher(void *arg)
{
    struct run *r = arg;
    const uint64_t tick = 250 * 1000 * 1000;
    uint64_t deadline = 0;  /* to give up by, once a signal came */

    for (;;) {
        uint64_t now = sp_now_ns(), wait = tick;
        struct timespec ts;
        int sig;

        if (deadline != 0)
            wait = deadline > now ? deadline - now : 0;
        if (wait > tick)
            wait = tick;
        ts.tv_sec = (time_t)(wait / 1000000000);
        ts.tv_nsec = (long)(wait % 1000000000);
        sig = r->progress || deadline != 0
                  ? sigtimedwait(&r->signals, NULL, &ts)
                  : sigwaitinfo(&r->signals, NULL);

        pthread_mutex_lock(&r->lock);
        if (r->over) {
            pthread_mutex_unlock(&r->lock);
            break;
        }
        if (sig > 0 &&
            (sig != WAKE || sigismember(&r->b->stop_signals, WAKE))) {
            if (r->t->signal == 0) {
                r->t->signal = sig;
                stop(r);
            }
            /* without b->stopped, the batch waits for its jobs */
            if (r->b->stopped != NULL)
                deadline = deadline == 0 ? sp_now_ns() + GRACE_NS
                                         : sp_now_ns();
        }
        if (deadline != 0 && sp_now_ns() >= deadline)
            give_up(r);
        if (r->progress && r->t->signal == 0)
            show(r);
        pthread_mutex_unlock(&r->lock);
    }
    return NULL;
}

/* start: WANT workers at most: how many started. */
static unsigned start(struct run *r, pthread_t *tid, unsigned want)
{
    pthread_attr_t attr;
    unsigned n = 0;

    if (pthread_attr_init(&attr) != 0)
        return 0;
    (void)pthread_attr_setstacksize(&attr, STACK_SIZE);
    while (n < want && sp_run_thread_create(&tid[n], &attr, worker, r) == 0)
        n++;
    pthread_attr_destroy(&attr);
    return n;
}

/* start_watcher: the watcher started into *TID: 0, or an error number. */
static int start_watcher(struct run *r, pthread_t *tid)
{
    pthread_attr_t attr;
    int err = pthread_attr_init(&attr);

    if (err != 0)
        return err;
    (void)pthread_attr_setstacksize(&attr, STACK_SIZE);
    err = sp_run_thread_create(tid, &attr, watcher, r);
    pthread_attr_destroy(&attr);
    return err;
}

/* sizes: with progress reported, each input's size (0 when it cannot be
 * had: a FIFO's is 0 too) for the estimate, and a slot a worker; without
 * (or without the memory), none, and no estimate. */
static void sizes(struct run *r)
{
    struct stat sb;

    if (!r->progress)
        return;
    r->size = calloc(r->b->n, sizeof *r->size);
    r->fly = calloc(r->workers, sizeof *r->fly);
    if (r->size == NULL || r->fly == NULL) {
        free(r->size);
        free(r->fly);
        r->size = NULL;
        r->fly = NULL;
        return;
    }
    for (size_t i = 0; i < r->b->n; i++) {
        if (stat(r->b->in[i], &sb) == 0 && S_ISREG(sb.st_mode))
            r->size[i] = (uint64_t)sb.st_size;
        r->left += r->size[i];
    }
}

sp_status sp_batch_run(const struct sp_batch *b, struct sp_tally *t)
{
    unsigned workers = b->n < b->job.threads ? (unsigned)b->n
                                             : b->job.threads;
    struct run r = {.b = b, .t = t, .lock = PTHREAD_MUTEX_INITIALIZER,
                    .progress = b->reporter.progress != NULL};
    pthread_t *tid = NULL, watch;
    sigset_t old;
    unsigned started = 0;

    memset(t, 0, sizeof *t);
    t->files = b->n;
    r.cancel = b->job.cancel != NULL ? b->job.cancel : &r.own;
    r.workers = workers < 1 ? 1 : workers;
    r.signals = b->stop_signals;
    sigaddset(&r.signals, WAKE);
    r.t0 = sp_now_ns();
    pthread_sigmask(SIG_BLOCK, &r.signals, &old);
    if (start_watcher(&r, &watch) != 0) {
        /* No thread for the signals: the process's handlers see them, and
         * the files are run here, one after another, as one-file runs. */
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        r.workers = 1;
        r.progress = 0;
        worker(&r);
        report_over(&r);
        t->ns = sp_now_ns() - r.t0;
        return r.status;
    }
    pthread_mutex_lock(&r.lock);
    sizes(&r);
    r.t0 = sp_now_ns();
    pthread_mutex_unlock(&r.lock);
    /* The jobs run on threads of STACK_SIZE, not on the caller's stack,
     * whose size is RLIMIT_STACK's and already holds the caller's frames
     * (ulimit -s 32 was too little); the caller runs one only when no
     * thread starts. */
    tid = calloc(r.workers, sizeof *tid);
    if (tid != NULL)
        started = start(&r, tid, r.workers);
    pthread_mutex_lock(&r.lock);
    r.running = started > 0 ? started : 1;
    pthread_mutex_unlock(&r.lock);
    if (started == 0)
        worker(&r);
    for (unsigned k = 0; k < started; k++)
        pthread_join(tid[k], NULL);
    free(tid);
    pthread_mutex_lock(&r.lock);
    r.over = 1;
    report_over(&r);
    t->ns = sp_now_ns() - r.t0;
    pthread_mutex_unlock(&r.lock);
    pthread_kill(watch, WAKE);
    pthread_join(watch, NULL);
    free(r.size);
    free(r.fly);
    if (t->signal != 0 && b->stopped != NULL)
        b->stopped(t->signal, t);
    /* A stop signal that came once the batch was over ends it as it
     * would have ended a one-file run. */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (t->signal != 0)
        return EINTR;
    /* the caller's token stopped it before every file was done */
    if (r.status == SP_OK && sp_cancelled(r.cancel) &&
        t->scaled + t->failed + t->skipped < t->files)
        return EINTR;
    return r.status;
}
