/* The cost probes of a mapped file's faults and release, of single calls
 * and threads, and of the scale kernels (cost.h). */
#include "cost.h"
#include "cost_probe.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "image.h"
#include "scale.h"

/* The scaleppm workers' stack (parallel.c). */
#define STACK ((size_t)512 * 1024)
/* DROP_BLOCK: the input the scale gives back at once, about (an item's
 * rows of the study's image, by 2 to 8), in large enough blocks that
 * the call's own cost (sp_cost_madvise_call) is a small part. */
#define DROP_BLOCK ((size_t)256 << 10)
#define CALLS 1000
#define THREADS 20
#define ROW_PX 1280  /* the study's image's width */
/* FLUSH: more than a last-level cache holds; CHUNK: the output bytes an
 * item (SP_CHUNK, job.h). */
#define FLUSH ((size_t)64 << 20)
#define CHUNK ((size_t)512 << 10)

/* map_cached: FD's first SIZE bytes mapped as scaleppm maps its input,
 * after a read of them that leaves them in the page cache. */
static const unsigned char *map_cached(const struct sp_cost_env *env,
                                       int fd, sp_status *st)
{
    void *m;

    *st = sp_cost_read_all(fd, env->buf2, env->size);
    if (*st != SP_OK)
        return NULL;
    m = mmap(NULL, env->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
        *st = errno;
        return NULL;
    }
    return m;
}

static unsigned touch_all(const struct sp_cost_env *env,
                          const volatile unsigned char *m)
{
    unsigned sum = 0;

    for (size_t i = 0; i < env->size; i += env->page)
        sum += m[i];
    return sum;
}

/* Every page of a cached file's private read-only mapping read once: ns a
 * fault, pages mapped a fault (fault-around, or a large folio mapped
 * whole), ns a page. */
static sp_status file_fault(const struct sp_cost_env *env, int fd,
                            double *out)
{
    const unsigned char *m = map_cached(env, fd, &(sp_status){0});
    double pages = (double)(env->size / env->page);
    long f0, faults;
    uint64_t t0, dt;

    if (m == NULL)
        return EIO;
    f0 = sp_minflt();
    t0 = sp_now_ns();
    (void)touch_all(env, m);
    dt = sp_now_ns() - t0;
    faults = sp_minflt() - f0;
    munmap((void *)m, env->size);
    if (faults < 1)
        faults = 1;
    out[0] = (double)dt / (double)faults;
    out[1] = pages / (double)faults;
    out[2] = (double)dt / pages;
    return SP_OK;
}

sp_status sp_cost_file_fault_large(const struct sp_cost_env *env,
                                   double *out)
{
    return file_fault(env, env->fd_large, out);
}

sp_status sp_cost_file_fault_small(const struct sp_cost_env *env,
                                   double *out)
{
    return file_fault(env, env->fd_small, out);
}

/* madvise(MADV_DONTNEED) of a mapping whose every page is mapped, in
 * blocks of DROP_BLOCK as the scale gives its input back (a large folio
 * mapped whole is split on the first), then munmap: ns a page, large
 * folios and base pages. */
sp_status sp_cost_madvise_file(const struct sp_cost_env *env, double *out)
{
    int fds[2] = {env->fd_large, env->fd_small};
    sp_status st = SP_OK;

    for (int k = 0; k < 2; k++) {
        const unsigned char *m = map_cached(env, fds[k], &st);
        uint64_t t0;

        if (m == NULL)
            return st;
        (void)touch_all(env, m);
        t0 = sp_now_ns();
        for (size_t at = 0; at < env->size; at += DROP_BLOCK)
            (void)madvise((void *)(m + at), env->size - at < DROP_BLOCK
                                                ? env->size - at
                                                : DROP_BLOCK,
                          MADV_DONTNEED);
        munmap((void *)m, env->size);
        out[k] = (double)(sp_now_ns() - t0) /
                 (double)(env->size / env->page);
    }
    return SP_OK;
}

static volatile int spin_stop;

static void *spin(void *arg)
{
    (void)arg;
    while (!spin_stop)
        ;
    return NULL;
}

/* start_spinner: a thread of this process busy on a CPU other than the
 * caller's, so that each madvise must flush that CPU's TLB too, as it
 * must while scaleppm's other threads run.  0 when there is no other
 * CPU or no thread. */
static int start_spinner(pthread_t *tid)
{
    cpu_set_t allowed, one;
    pthread_attr_t attr;
    int here = sched_getcpu(), ok;

    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 ||
        CPU_COUNT(&allowed) < 2)
        return 0;
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (cpu != here && CPU_ISSET(cpu, &allowed)) {
            CPU_SET(cpu, &one);
            break;
        }
    pthread_attr_init(&attr);
    (void)pthread_attr_setaffinity_np(&attr, sizeof one, &one);
    spin_stop = 0;
    ok = pthread_create(tid, &attr, spin, NULL) == 0;
    pthread_attr_destroy(&attr);
    return ok;
}

static pthread_t spinner;

int sp_cost_spin_start(void)
{
    return start_spinner(&spinner);
}

void sp_cost_spin_stop(void)
{
    spin_stop = 1;
    pthread_join(spinner, NULL);
}

/* One madvise(MADV_DONTNEED) call a mapped page of a cached file: ns a
 * call, alone and with another thread of the process running. */
sp_status sp_cost_madvise_call(const struct sp_cost_env *env, double *out)
{
    size_t pages = env->size / env->page;
    sp_status st = SP_OK;
    pthread_t tid;

    for (int k = 0; k < 2; k++) {
        const unsigned char *m = map_cached(env, env->fd_large, &st);
        int spinning = 0;
        uint64_t t0;

        if (m == NULL)
            return st;
        (void)touch_all(env, m);
        if (k == 1)
            spinning = start_spinner(&tid);
        t0 = sp_now_ns();
        for (size_t i = 0; i < pages; i++)
            (void)madvise((void *)(m + i * env->page), env->page,
                          MADV_DONTNEED);
        out[k] = (double)(sp_now_ns() - t0) / (double)pages;
        if (spinning) {
            spin_stop = 1;
            pthread_join(tid, NULL);
        }
        munmap((void *)m, env->size);
    }
    return SP_OK;
}

/* A system call that does nothing (getppid), a 1-byte pread of a cached
 * file, and mmap+munmap of the file untouched: ns a call. */
sp_status sp_cost_calls(const struct sp_cost_env *env, double *out)
{
    unsigned char byte;
    uint64_t t0 = sp_now_ns(), t1, t2;

    for (int i = 0; i < CALLS; i++)
        (void)syscall(SYS_getppid);
    t1 = sp_now_ns();
    for (int i = 0; i < CALLS; i++)
        if (pread(env->fd_large, &byte, 1, i) != 1)
            return errno ? errno : EIO;
    t2 = sp_now_ns();
    for (int i = 0; i < CALLS / 10; i++) {
        void *m = mmap(NULL, env->size, PROT_READ, MAP_PRIVATE,
                       env->fd_large, 0);

        if (m == MAP_FAILED)
            return errno;
        munmap(m, env->size);
    }
    out[0] = (double)(t1 - t0) / CALLS;
    out[1] = (double)(t2 - t1) / CALLS;
    out[2] = (double)(sp_now_ns() - t2) / (CALLS / 10);
    return SP_OK;
}

static void *nothing(void *arg)
{
    return arg;
}

/* pthread_create + pthread_join of a thread with scaleppm's stack size
 * that does nothing: ns a thread. */
sp_status sp_cost_thread(const struct sp_cost_env *env, double *out)
{
    pthread_attr_t attr;
    uint64_t t0;
    int err = 0;

    (void)env;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, STACK);
    t0 = sp_now_ns();
    for (int i = 0; i < THREADS && err == 0; i++) {
        pthread_t tid;

        err = pthread_create(&tid, &attr, nothing, NULL);
        if (err == 0)
            pthread_join(tid, NULL);
    }
    out[0] = (double)(sp_now_ns() - t0) / THREADS;
    pthread_attr_destroy(&attr);
    return err;
}

/* row_view: one row of ROW_PX 8-bit RGB pixels at P. */
static struct sp_image row_view(unsigned char *p)
{
    return (struct sp_image){.backing = SP_BACKING_NONE,
                             .pixels = p, .width = ROW_PX, .height = 1,
                             .stride = ROW_PX * 3, .channels = 3,
                             .sample_size = 1, .maxval = 255};
}

sp_status sp_cost_flush_caches(void)
{
    unsigned char *f = malloc(FLUSH);

    if (f == NULL)
        return ENOMEM;
    memset(f, 1, FLUSH);
    free(f);
    return SP_OK;
}

/* The reduce kernel as item.c calls it, an output row a call from the
 * one row it samples, over the whole buffer read as rows of the study's
 * image, out of the caches: ns an output pixel, by 2 and by 8. */
sp_status sp_cost_reduce(const struct sp_cost_env *env, double *out)
{
    static const int by[2] = {2, 8};
    const size_t h = env->size / (ROW_PX * 3);

    for (int k = 0; k < 2; k++) {
        size_t n = (size_t)by[k], rows = h / n, px = ROW_PX / n;
        uint64_t t0;

        if (sp_cost_flush_caches() != SP_OK)
            return ENOMEM;
        t0 = sp_now_ns();
        for (size_t y = 0; y < rows; y++) {
            struct sp_image band = row_view(env->buf + y * n * ROW_PX * 3);

            sp_scale_rows(&band, -by[k], SP_REDUCE_SAMPLE, 0, 1,
                          env->buf2 + y * px * 3);
        }
        out[k] = (double)(sp_now_ns() - t0) / (double)(rows * px);
    }
    return SP_OK;
}

/* The enlarge kernel as item.c calls it into a chunk, each distinct
 * output row expanded once from its source row, every row of the buffer
 * out of the caches, into the first CHUNK bytes of the other buffer over
 * and over (a slot's chunk): ns an output byte, by 2 and by 8. */
sp_status sp_cost_enlarge(const struct sp_cost_env *env, double *out)
{
    static const int by[2] = {2, 8};
    const size_t h = env->size / (ROW_PX * 3);

    for (int k = 0; k < 2; k++) {
        size_t orow = ROW_PX * 3 * (size_t)by[k], per = CHUNK / orow;
        uint64_t t0;

        if (sp_cost_flush_caches() != SP_OK)
            return ENOMEM;
        t0 = sp_now_ns();
        for (size_t y = 0; y < h; y++) {
            struct sp_image band = row_view(env->buf + y * ROW_PX * 3);

            sp_scale_rows(&band, by[k], SP_REDUCE_SAMPLE, 0, 1,
                          env->buf2 + y % per * orow);
        }
        out[k] = (double)(sp_now_ns() - t0) / (double)(h * orow);
    }
    return SP_OK;
}
