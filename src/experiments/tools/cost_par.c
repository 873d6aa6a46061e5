/* The cost probes under the conditions of the Sun study's runs (cost.h):
 * SP_COST_THREADS threads at once on the CPUs the process has, each its
 * share of the work, timed from the gate's opening to the last one's end
 * (the wall time a run's scale phase pays for that work, whatever the
 * CPUs give it); the TLB flush of a madvise while the other CPU is busy;
 * and the reads of a file the page cache does not hold. */
#include "cost.h"
#include "cost_probe.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "image.h"
#include "scale.h"

#define ROW_PX 1280  /* the study's image's width */
#define CHUNK ((size_t)512 << 10)  /* SP_CHUNK (job.h) */
#define HUGE ((size_t)2 << 20)

enum work { W_NONE, W_REDUCE, W_ENLARGE, W_TOUCH, W_WRITE };

/* share: one thread's part of a parallel probe. */
struct share {
    pthread_barrier_t *gate;
    const cpu_set_t *allowed;     /* the pin let go of past the gate */
    enum work what;
    int by;                       /* the kernel's factor */
    const unsigned char *in;      /* the rows or pages read */
    unsigned char *out;           /* the kernel's output, or the pages
                                     written (W_WRITE) */
    size_t from, to;              /* rows (kernels) or bytes (pages) */
    size_t page;
    long faults;                  /* the thread's own, while working */
    uint64_t start, end;
};

static struct sp_image row_view(const unsigned char *p)
{
    return (struct sp_image){.backing = SP_BACKING_NONE,
                             .pixels = (unsigned char *)p, .width = ROW_PX,
                             .height = 1, .stride = ROW_PX * 3,
                             .channels = 3, .sample_size = 1,
                             .maxval = 255};
}

/* work: S's share.  A reduce's output row Y samples input row Y * BY; an
 * enlarge's input row Y fills a row of the thread's own chunk, as
 * item.c's calls do. */
static void work(struct share *s)
{
    const volatile unsigned char *v = s->in;
    volatile unsigned char *w = s->out;
    size_t by = s->by > 0 ? (size_t)s->by : 1;
    size_t px = ROW_PX / by, orow = ROW_PX * 3 * by;

    for (size_t y = s->from; s->what == W_REDUCE && y < s->to; y++) {
        struct sp_image band = row_view(s->in + y * by * ROW_PX * 3);

        sp_scale_rows(&band, -s->by, SP_REDUCE_SAMPLE, 0, 1,
                      s->out + y * px * 3);
    }
    for (size_t y = s->from; s->what == W_ENLARGE && y < s->to; y++) {
        struct sp_image band = row_view(s->in + y * ROW_PX * 3);

        sp_scale_rows(&band, s->by, SP_REDUCE_SAMPLE, 0, 1,
                      s->out + y % (CHUNK / orow) * orow);
    }
    for (size_t at = s->from; s->what == W_TOUCH && at < s->to;
         at += s->page)
        (void)v[at];
    for (size_t at = s->from; s->what == W_WRITE && at < s->to;
         at += s->page)
        w[at] = 1;
}

static void *share_main(void *arg)
{
    struct share *s = arg;
    long f0;

    pthread_barrier_wait(s->gate);
    if (s->allowed != NULL)
        (void)pthread_setaffinity_np(pthread_self(), sizeof *s->allowed,
                                     s->allowed);
    s->start = sp_now_ns();
    f0 = sp_minflt();
    work(s);
    s->faults = sp_minflt() - f0;
    s->end = sp_now_ns();
    return NULL;
}

/* place: ATTR pins share I to the I-th of the ALLOWED CPUs after the
 * caller's, round, as the job's workers are started (parallel.c's
 * place): new threads spread over the CPUs from the start, rather than
 * queued on their creator's until the scheduler moves them, which a
 * scale phase of a few hundred microseconds never waits for.  Each lets
 * go of the pin once through the gate (share_main). */
static void place(pthread_attr_t *attr, const cpu_set_t *allowed, int i)
{
    int n = CPU_COUNT(allowed), here = sched_getcpu(), k = 0, cpu;
    int skip;
    cpu_set_t one;

    if (here < 0)
        here = 0;
    for (cpu = 0; cpu < here && cpu < CPU_SETSIZE; cpu++)
        k += CPU_ISSET(cpu, allowed);
    skip = (k + i + 1) % n;
    for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, allowed) && skip-- == 0)
            break;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    (void)pthread_attr_setaffinity_np(attr, sizeof one, &one);
}

/* run_shares: the SP_COST_THREADS shares S at once, placed on the CPUs
 * as a run's threads are; the wall ns from the first one's start to the
 * last one's end, and their faults in *FAULTS.  0 when a thread could
 * not start. */
static uint64_t run_shares(struct share *s, long *faults)
{
    pthread_t tid[SP_COST_THREADS];
    pthread_barrier_t gate;
    uint64_t t0 = UINT64_MAX, end = 0;
    cpu_set_t allowed;
    int n = 0, placed = sched_getaffinity(0, sizeof allowed, &allowed) == 0
                        && CPU_COUNT(&allowed) > 1;

    pthread_barrier_init(&gate, NULL, SP_COST_THREADS + 1);
    for (; n < SP_COST_THREADS; n++) {
        pthread_attr_t attr;
        int rc;

        s[n].gate = &gate;
        s[n].allowed = placed ? &allowed : NULL;
        pthread_attr_init(&attr);
        if (placed)
            place(&attr, &allowed, n);
        rc = pthread_create(&tid[n], &attr, share_main, &s[n]);
        pthread_attr_destroy(&attr);
        if (rc != 0)
            break;
    }
    if (n < SP_COST_THREADS) {
        /* The gate never opens: the started threads are left waiting. */
        return 0;
    }
    pthread_barrier_wait(&gate);
    *faults = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(tid[i], NULL);
        *faults += s[i].faults;
        if (s[i].start < t0)
            t0 = s[i].start;
        if (s[i].end > end)
            end = s[i].end;
    }
    pthread_barrier_destroy(&gate);
    return end > t0 ? end - t0 : 1;
}

/* split: COUNT units of work (rows, or pages of PAGE bytes) dealt out
 * to the shares in runs of one a thread, as the study's threads take
 * their items; each share's [from, to) in units, scaled by UNIT. */
static void split(struct share *s, size_t count, size_t unit)
{
    for (int i = 0; i < SP_COST_THREADS; i++) {
        s[i].from = count * (size_t)i / SP_COST_THREADS * unit;
        s[i].to = count * (size_t)(i + 1) / SP_COST_THREADS * unit;
    }
}

/* gate: the wall ns of SP_COST_THREADS threads that do nothing once the
 * gate opens (its wake-ups and switches on the CPUs there are); 0 when a
 * thread could not start.  Each probe below gives its wall time less
 * this, measured just before it: the work's own, which a run pays on
 * top of its one gate. */
static uint64_t gate(void)
{
    struct share s[SP_COST_THREADS];
    long faults;

    for (int i = 0; i < SP_COST_THREADS; i++)
        s[i] = (struct share){.what = W_NONE};
    return run_shares(s, &faults);
}

/* net: wall ns DT less the gate's G, over COUNT. */
static double net(uint64_t dt, uint64_t g, double count)
{
    return ((double)dt - (double)g) / count;
}

/* The gate alone: wall ns. */
sp_status sp_cost_gate(const struct sp_cost_env *env, double *out)
{
    uint64_t g = gate();

    (void)env;
    out[0] = (double)g;
    return g > 0 ? SP_OK : EAGAIN;
}

/* The reduce kernel by 2 and by 8, SP_COST_THREADS threads at once each
 * its band of output rows of the buffer (out of the caches, as a run's
 * input is): wall ns an output pixel. */
sp_status sp_cost_reduce_par(const struct sp_cost_env *env, double *out)
{
    static const int by[2] = {2, 8};
    const size_t h = env->size / (ROW_PX * 3);

    for (int k = 0; k < 2; k++) {
        struct share s[SP_COST_THREADS];
        size_t rows = h / (size_t)by[k];
        uint64_t dt, g;
        long faults;

        if (sp_cost_flush_caches() != SP_OK)
            return ENOMEM;
        for (int i = 0; i < SP_COST_THREADS; i++)
            s[i] = (struct share){.what = W_REDUCE, .by = by[k],
                                  .in = env->buf, .out = env->buf2};
        split(s, rows, 1);
        g = gate();
        dt = run_shares(s, &faults);
        if (dt == 0 || g == 0)
            return EAGAIN;
        out[k] = net(dt, g, (double)(rows * (ROW_PX / (size_t)by[k])));
    }
    return SP_OK;
}

/* The enlarge kernel by 2 and by 8, SP_COST_THREADS threads at once each
 * its band of the buffer's rows into a chunk of its own (touched before):
 * wall ns an output byte. */
sp_status sp_cost_enlarge_par(const struct sp_cost_env *env, double *out)
{
    static const int by[2] = {2, 8};
    const size_t h = env->size / (ROW_PX * 3);
    unsigned char *chunks = malloc(CHUNK * SP_COST_THREADS);

    if (chunks == NULL)
        return ENOMEM;
    memset(chunks, 1, CHUNK * SP_COST_THREADS);
    for (int k = 0; k < 2; k++) {
        struct share s[SP_COST_THREADS];
        uint64_t dt, g;
        long faults;

        if (sp_cost_flush_caches() != SP_OK) {
            free(chunks);
            return ENOMEM;
        }
        for (int i = 0; i < SP_COST_THREADS; i++)
            s[i] = (struct share){.what = W_ENLARGE, .by = by[k],
                                  .in = env->buf,
                                  .out = chunks + (size_t)i * CHUNK};
        split(s, h, 1);
        g = gate();
        dt = run_shares(s, &faults);
        if (dt == 0 || g == 0) {
            free(chunks);
            return EAGAIN;
        }
        out[k] = net(dt, g, (double)(h * ROW_PX * 3 * (size_t)by[k]));
    }
    free(chunks);
    return SP_OK;
}

static volatile int writing;

/* writer: write() ARG's env's buffer into its empty file over and over
 * until WRITING is 0, as the finisher writes the items out meanwhile. */
static void *writer(void *arg)
{
    const struct sp_cost_env *env = arg;

    while (writing) {
        if (ftruncate(env->fd_out, 0) != 0 ||
            lseek(env->fd_out, 0, SEEK_SET) < 0 ||
            write(env->fd_out, env->buf2, env->size) < 0)
            break;
    }
    return NULL;
}

/* The enlarge kernel by 2 and by 8 on one thread, into a chunk, while
 * another writes a file, as the items past the slots are scaled one at a
 * time while the finisher writes (work.c): ns an output byte. */
sp_status sp_cost_enlarge_writing(const struct sp_cost_env *env,
                                  double *out)
{
    static const int by[2] = {2, 8};
    const size_t h = env->size / (ROW_PX * 3);
    unsigned char *chunk = malloc(CHUNK);
    pthread_t tid;
    sp_status st = SP_OK;

    if (chunk == NULL)
        return ENOMEM;
    memset(chunk, 1, CHUNK);
    writing = 1;
    if (pthread_create(&tid, NULL, writer, (void *)env) != 0) {
        free(chunk);
        return EAGAIN;
    }
    for (int k = 0; st == SP_OK && k < 2; k++) {
        struct share s = {.what = W_ENLARGE, .by = by[k], .in = env->buf,
                          .out = chunk, .from = 0, .to = h};
        uint64_t t0;

        st = sp_cost_flush_caches();
        t0 = sp_now_ns();
        work(&s);
        out[k] = (double)(sp_now_ns() - t0) /
                 (double)(h * ROW_PX * 3 * (size_t)by[k]);
    }
    writing = 0;
    pthread_join(tid, NULL);
    free(chunk);
    return st;
}

/* par_pages: COUNT blocks of UNIT bytes of the mapping M read (W_TOUCH)
 * or written (W_WRITE) a PAGE at a time, SP_COST_THREADS threads at once
 * each its band: in *NS the wall ns less the gate's, in *FAULTS theirs. */
static sp_status par_pages(enum work what, unsigned char *m, size_t count,
                           size_t unit, size_t page, double *ns,
                           long *faults)
{
    struct share s[SP_COST_THREADS];
    uint64_t dt, g;

    for (int i = 0; i < SP_COST_THREADS; i++)
        s[i] = (struct share){.what = what, .in = m, .out = m,
                              .page = page};
    split(s, count, unit);
    g = gate();
    dt = run_shares(s, faults);
    if (dt == 0 || g == 0)
        return EAGAIN;
    *ns = (double)dt - (double)g;
    return SP_OK;
}

/* file_fault_par: every page of FD's cached mapping read once,
 * SP_COST_THREADS threads at once each its band: wall ns a fault. */
static sp_status file_fault_par(const struct sp_cost_env *env, int fd,
                                double *out)
{
    sp_status st = sp_cost_read_all(fd, env->buf2, env->size);
    unsigned char *m;
    double ns = 0;
    long faults = 0;

    if (st != SP_OK)
        return st;
    m = mmap(NULL, env->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED)
        return errno;
    st = par_pages(W_TOUCH, m, env->size / env->page, env->page, env->page,
                   &ns, &faults);
    munmap(m, env->size);
    out[0] = ns / (double)(faults > 0 ? faults : 1);
    return st;
}

sp_status sp_cost_file_fault_par(const struct sp_cost_env *env,
                                 double *out)
{
    sp_status st = file_fault_par(env, env->fd_large, out);

    return st == SP_OK ? file_fault_par(env, env->fd_small, out + 1) : st;
}

/* SP_COST_THREADS aligned 2 MiB anonymous regions advised MADV_HUGEPAGE
 * (the output chunks' mapping, plan.c), each written by a thread of its
 * own, all at once: wall ns a region. */
sp_status sp_cost_anon_par(const struct sp_cost_env *env, double *out)
{
    size_t len = HUGE * (SP_COST_THREADS + 1);
    unsigned char *m, *a;
    double ns = 0;
    long faults = 0;
    sp_status st;

    m = mmap(NULL, len, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return errno;
    a = (unsigned char *)(((uintptr_t)m + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
    (void)madvise(a, HUGE * SP_COST_THREADS, MADV_HUGEPAGE);
    st = par_pages(W_WRITE, a, SP_COST_THREADS, HUGE, env->page, &ns,
                   &faults);
    munmap(m, len);
    out[0] = ns / SP_COST_THREADS;
    return st;
}

/* Fresh anonymous base pages of one mapping (advised MADV_NOHUGEPAGE),
 * SP_COST_THREADS threads at once each writing its band, as the threads
 * fault in the chunks of a plan under 2 MiB: wall ns a fault. */
sp_status sp_cost_anon_4k_par(const struct sp_cost_env *env, double *out)
{
    unsigned char *m;
    double ns = 0;
    long faults = 0;
    sp_status st;

    m = mmap(NULL, env->size, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return errno;
    (void)madvise(m, env->size, MADV_NOHUGEPAGE);
    st = par_pages(W_WRITE, m, env->size / env->page, env->page, env->page,
                   &ns, &faults);
    munmap(m, env->size);
    out[0] = ns / (double)(faults > 0 ? faults : 1);
    return st;
}

/* madvise(MADV_DONTNEED) of a mapping of FD whose every page is mapped,
 * in one call (a call of the run's gives back an item's rows, many
 * grains; the call's own cost, with its TLB flush, is
 * madvise_call_shared), while another thread of the process runs on the
 * other CPU: ns a page. */
static sp_status madvise_busy(const struct sp_cost_env *env, int fd,
                              double *out)
{
    sp_status st = sp_cost_read_all(fd, env->buf2, env->size);
    const volatile unsigned char *v;
    unsigned char *m;
    uint64_t t0;
    int spinning;

    if (st != SP_OK)
        return st;
    m = mmap(NULL, env->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED)
        return errno;
    v = m;
    for (size_t i = 0; i < env->size; i += env->page)
        (void)v[i];
    spinning = sp_cost_spin_start();
    t0 = sp_now_ns();
    (void)madvise(m, env->size, MADV_DONTNEED);
    out[0] = (double)(sp_now_ns() - t0) / (double)(env->size / env->page);
    if (spinning)
        sp_cost_spin_stop();
    munmap(m, env->size);
    return SP_OK;
}

sp_status sp_cost_madvise_busy(const struct sp_cost_env *env, double *out)
{
    sp_status st = madvise_busy(env, env->fd_large, out);

    return st == SP_OK ? madvise_busy(env, env->fd_small, out + 1) : st;
}

/* HEADER: the header reader's first block (input_bytes.c). */
#define HEADER 8192

struct first {
    uint64_t ns;
    long faults;
    int ok;  /* the malloc gave a block */
};

/* first_malloc: into ARG, the time and faults of this thread's first
 * malloc() of the header's block, written. */
static void *first_malloc(void *arg)
{
    struct first *f = arg;
    long f0 = sp_minflt();
    uint64_t t0 = sp_now_ns();
    unsigned char *b = malloc(HEADER);

    if (b != NULL)
        memset(b, 1, HEADER);
    f->ns = sp_now_ns() - t0;
    f->faults = sp_minflt() - f0;
    f->ok = b != NULL;
    free(b);
    return NULL;
}

sp_status sp_cost_first_malloc(uint64_t *ns, long *faults)
{
    struct first f = {0, 0, 0};
    pthread_t tid;

    if (pthread_create(&tid, NULL, first_malloc, &f) != 0)
        return EAGAIN;
    pthread_join(tid, NULL);
    *ns = f.ns;
    *faults = f.faults;
    return f.ok ? SP_OK : ENOMEM;
}

static long majflt(void)
{
    struct rusage ru;

    return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_majflt : 0;
}

/* evict: FD's pages out of the page cache (the file is written back:
 * sp_cost_env_open fsyncs it). */
static sp_status evict(int fd)
{
    return posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

/* The cold input: read() of the whole file the page cache does not hold
 * (ns a byte: the device's bandwidth through readahead), and a mapping of
 * it read a page at a time in order, as the scale reads its rows (ns a
 * major fault, and the pages a major fault brings: the readahead
 * window); the file cached again after. */
sp_status sp_cost_cold(const struct sp_cost_env *env, double *out)
{
    const volatile unsigned char *v;
    unsigned char *m;
    uint64_t t0, dt;
    long f0, faults;
    sp_status st = evict(env->fd_large);

    if (st != SP_OK)
        return st;
    t0 = sp_now_ns();
    st = sp_cost_read_all(env->fd_large, env->buf2, env->size);
    out[0] = (double)(sp_now_ns() - t0) / (double)env->size;
    if (st == SP_OK)
        st = evict(env->fd_large);
    if (st != SP_OK)
        return st;
    m = mmap(NULL, env->size, PROT_READ, MAP_PRIVATE, env->fd_large, 0);
    if (m == MAP_FAILED)
        return errno;
    v = m;
    f0 = majflt();
    t0 = sp_now_ns();
    for (size_t i = 0; i < env->size; i += env->page)
        (void)v[i];
    dt = sp_now_ns() - t0;
    faults = majflt() - f0;
    munmap(m, env->size);
    if (faults < 1)
        faults = 1;
    out[1] = (double)dt / (double)faults;
    out[2] = (double)(env->size / env->page) / (double)faults;
    return sp_cost_read_all(env->fd_large, env->buf2, env->size);
}
