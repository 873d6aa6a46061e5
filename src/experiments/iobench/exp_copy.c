/* exp_copy.c: the file-copy experiment (seed 004).
 *
 * The seed copied a 3 GB file with cp, with read/write, and with two mmap
 * programs: mmap_copy (map the source and a destination stretched to the
 * same size, memcpy between them) and mmap_write (map the source, write()
 * from the mapping).  Run one at a time, cp took 4.57 s, read/write 4.79 s,
 * mmap_copy 12.96 s and mmap_write 12.81 s; it blamed page faults and
 * suggested madvise(MADV_SEQUENTIAL or MADV_WILLNEED).  Here each of those
 * runs, the two mmap programs also with that advice, and copy_file_range(),
 * which copies inside the kernel and never brings the bytes to user space.
 *
 * Every method copies the same source (o->size bytes, default 1 GiB; the
 * seed's was 3 GB) to a new destination.  Case "copy" ends each method
 * with fsync() of the destination inside the timed span (cp's after it
 * exits): each method pays for the same complete writeback.  Case
 * "copy-nofsync" leaves it out, as the seed did: its times hold whatever
 * writeback happened to run.  The source is evicted before every method
 * (the seed's disk had to be read too, and a warm source would favour
 * whichever ran later); where eviction fails, stderr says so.  The
 * destination is checked against the source's checksum, then deleted.
 *
 * real is CLOCK_MONOTONIC around the method, user and sys bench_cpu() over
 * it.  Each method runs o->reps times (default REPS, once with --quick),
 * in whole rounds of all methods and both cases, one row each. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "sys.h"
#include "timing.h"

#define DEFAULT_SIZE (1ull << 30)
#define QUICK_SIZE (16ull << 20)
#define DEFAULT_BUF (1u << 20)
#define REPS 3  /* runs of each method without --reps */

struct job {
    const char *src, *dst;
    size_t size;
    unsigned char *buf;  /* bufsize bytes, for read_write */
    size_t bufsize;      /* also the write() size of mmap_write */
    int advice;          /* madvise on the source mapping, or -1 */
    int sync;            /* fsync the destination before it is done */
};

static int fail(const char *call, const char *path, int err)
{
    bench_warn("copy: %s %s: %s\n", call, path, strerror(err));
    return 1;
}

/* write_all: LEN bytes of P to FD in write()s of CHUNK bytes. */
static int write_all(int fd, const unsigned char *p, size_t len,
                     size_t chunk, const char *path)
{
    while (len > 0) {
        size_t n = len < chunk ? len : chunk;
        int err = sp_sys_write_full(fd, p, n);

        if (err != 0)
            return fail("write", path, err);
        p += n;
        len -= n;
    }
    return 0;
}

/* fsync (when J says so) and close FD (open on PATH); returns 0 or 1
 * after a message. */
static int finish(const struct job *j, int fd, const char *path)
{
    int rc = j->sync && fsync(fd) != 0 ? fail("fsync", path, errno) : 0;

    if (close(fd) != 0 && rc == 0)
        rc = fail("close", path, errno);
    return rc;
}

static int open_dst(const char *path, int rw, int *fd)
{
    *fd = open(path, (rw ? O_RDWR : O_WRONLY) | O_CREAT | O_TRUNC | O_CLOEXEC,
               0644);
    return *fd < 0 ? fail("open", path, errno) : 0;
}

/* Map the whole source read-only (the descriptor is closed once mapped)
 * and give it the job's advice; advice that fails is noted, not fatal. */
static int map_src(const struct job *j, unsigned char **map)
{
    int fd = open(j->src, O_RDONLY | O_CLOEXEC), err;
    void *p;

    if (fd < 0)
        return fail("open", j->src, errno);
    p = mmap(NULL, j->size, PROT_READ, MAP_SHARED, fd, 0);
    err = errno;
    close(fd);
    if (p == MAP_FAILED)
        return fail("mmap", j->src, err);
    if (j->advice >= 0 && madvise(p, j->size, j->advice) != 0)
        bench_warn("copy: madvise %s: %s (ignored)\n", j->src,
                   strerror(errno));
    *map = p;
    return 0;
}

static int m_cp(const struct job *j)
{
    char *argv[] = {"cp", (char *)j->src, (char *)j->dst, NULL};
    pid_t pid;
    int status, err, fd;

    err = posix_spawnp(&pid, "cp", NULL, NULL, argv, environ);
    if (err != 0)
        return fail("posix_spawnp cp", j->dst, err);
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return fail("waitpid cp", j->dst, errno);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        bench_warn("copy: cp %s %s failed (status %d)\n",
                   j->src, j->dst, status);
        return 1;
    }
    if (!j->sync)
        return 0;
    fd = open(j->dst, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return fail("open", j->dst, errno);
    return finish(j, fd, j->dst);
}

static int m_read_write(const struct job *j)
{
    int in = open(j->src, O_RDONLY | O_CLOEXEC), out, err, rc = 0;
    size_t got;

    if (in < 0)
        return fail("open", j->src, errno);
    if (open_dst(j->dst, 0, &out) != 0) {
        close(in);
        return 1;
    }
    do {
        err = sp_sys_read_full(in, j->buf, j->bufsize, &got);
        if (err != 0)
            rc = fail("read", j->src, err);
        else
            rc = write_all(out, j->buf, got, got, j->dst);
    } while (rc == 0 && got == j->bufsize);
    close(in);
    if (rc != 0) {
        close(out);
        return rc;
    }
    return finish(j, out, j->dst);
}

static int m_mmap_copy(const struct job *j)
{
    unsigned char *src;
    void *dst = MAP_FAILED;
    const char *call = "ftruncate";
    int out, err;

    if (map_src(j, &src) != 0)
        return 1;
    if (open_dst(j->dst, 1, &out) != 0) {
        munmap(src, j->size);
        return 1;
    }
    if (ftruncate(out, (off_t)j->size) == 0) {
        call = "mmap";
        dst = mmap(NULL, j->size, PROT_WRITE, MAP_SHARED, out, 0);
    }
    if (dst == MAP_FAILED) {
        err = errno;
        munmap(src, j->size);
        close(out);
        return fail(call, j->dst, err);
    }
    memcpy(dst, src, j->size);
    munmap(dst, j->size);
    munmap(src, j->size);
    /* the dirty pages of a shared mapping are the file's page cache:
     * fsync writes them back, no msync needed */
    return finish(j, out, j->dst);
}

static int m_mmap_write(const struct job *j)
{
    unsigned char *src;
    int out, rc;

    if (map_src(j, &src) != 0)
        return 1;
    if (open_dst(j->dst, 0, &out) != 0) {
        munmap(src, j->size);
        return 1;
    }
    rc = write_all(out, src, j->size, j->bufsize, j->dst);
    munmap(src, j->size);
    if (rc != 0) {
        close(out);
        return rc;
    }
    return finish(j, out, j->dst);
}

static int m_copy_file_range(const struct job *j)
{
    int in = open(j->src, O_RDONLY | O_CLOEXEC), out, rc = 0;
    size_t left = j->size;

    if (in < 0)
        return fail("open", j->src, errno);
    if (open_dst(j->dst, 0, &out) != 0) {
        close(in);
        return 1;
    }
    while (left > 0 && rc == 0) {
        ssize_t n = copy_file_range(in, NULL, out, NULL, left, 0);
        if (n < 0 && errno != EINTR)
            rc = fail("copy_file_range", j->dst, errno);
        else if (n == 0)
            rc = fail("copy_file_range", j->src, EIO);  /* source shrank */
        else if (n > 0)
            left -= (size_t)n;
    }
    close(in);
    if (rc != 0) {
        close(out);
        return rc;
    }
    return finish(j, out, j->dst);
}

static const struct method {
    const char *name;
    int (*run)(const struct job *j);
    int advice;
    int buffered;          /* param is the buffer size */
    double real, user, sys;  /* the seed's figures, NaN: none */
} methods[] = {
    {"cp", m_cp, -1, 0, 4.57, 0.00, 0.92},
    {"read_write", m_read_write, -1, 1, 4.79, 0.03, 0.90},
    {"mmap_copy", m_mmap_copy, -1, 0, 12.96, 0.38, 2.45},
    {"mmap_write", m_mmap_write, -1, 1, 12.81, 0.02, 1.33},
    {"mmap_copy_seq", m_mmap_copy, MADV_SEQUENTIAL, 0, NAN, NAN, NAN},
    {"mmap_write_seq", m_mmap_write, MADV_SEQUENTIAL, 1, NAN, NAN, NAN},
    {"mmap_copy_willneed", m_mmap_copy, MADV_WILLNEED, 0, NAN, NAN, NAN},
    {"copy_file_range", m_copy_file_range, -1, 0, NAN, NAN, NAN},
};
#define NMETHODS (sizeof methods / sizeof methods[0])
#define RW 1  /* methods[RW] is read_write, the ratios' reference */

static void row(FILE *out, const struct job *j, const char *method,
                double param, const char *metric, double value,
                const char *unit, double seed)
{
    struct bench_row r = {
        .experiment = "copy", .kase = j->sync ? "copy" : "copy-nofsync",
        .param = param, .method = method, .metric = metric, .value = value,
        .unit = unit, .seed = seed, .checked = 1, .file_bytes = j->size,
    };
    bench_print(out, &r);
}

struct cost { double real, user, sys; };  /* seconds */

/* Run method M into a fresh destination, verify and delete it, and leave
 * what it cost in *C.  Returns 0 or 1. */
static int run_one(const struct method *m, struct job *j, uint64_t want,
                   struct cost *c)
{
    uint64_t u0, s0, u1, s1, t0, sum;
    int err, rc;

    if (bench_evict(j->src) != 0)
        bench_warn("copy: cannot evict %s; %s reads it "
                   "warm\n", j->src, m->name);
    j->advice = m->advice;
    bench_cpu(&u0, &s0);
    t0 = sp_now_ns();
    rc = m->run(j);
    c->real = (double)(sp_now_ns() - t0) / 1e9;
    bench_cpu(&u1, &s1);
    c->user = (double)(u1 - u0) / 1e9;
    c->sys = (double)(s1 - s0) / 1e9;
    if (rc != 0)
        return 1;
    err = bench_file_sum(j->dst, &sum);
    if (err != 0)
        return fail("read", j->dst, err);
    if (sum != want) {
        bench_warn("copy: %s: %s differs from %s\n", m->name,
                   j->dst, j->src);
        return 1;
    }
    if (unlink(j->dst) != 0)
        return fail("unlink", j->dst, errno);
    return 0;
}

/* report: one round's rows, C[i] the cost of methods[i]. */
static void report(FILE *out, const struct job *j, const struct cost *c)
{
    for (size_t i = 0; i < NMETHODS; i++) {
        const struct method *m = &methods[i];
        double param = m->buffered ? (double)j->bufsize : 0;
        row(out, j, m->name, param, "real", c[i].real, "s", m->real);
        row(out, j, m->name, param, "user", c[i].user, "s", m->user);
        row(out, j, m->name, param, "sys", c[i].sys, "s", m->sys);
    }
    for (size_t i = 0; i < NMETHODS; i++) {
        char method[64];
        if (i == RW)
            continue;
        snprintf(method, sizeof method, "%s/read_write", methods[i].name);
        row(out, j, method, 0, "ratio", c[i].real / c[RW].real, "x",
            methods[i].real / methods[RW].real);
    }
}

/* rounds: REPS whole rounds of every method, with fsync and without as
 * FSYNC_MODE asks (0: both): a slow spell of the disk spreads over all. */
static int rounds(FILE *out, struct job *j, uint64_t want, int reps,
                  int fsync_mode)
{
    struct cost cost[NMETHODS];
    int rc = 0;

    for (int r = 0; r < reps && rc == 0; r++) {
        for (int sync = 1; sync >= 0 && rc == 0; sync--) {
            if (!(fsync_mode & (sync ? BENCH_FSYNC_YES : BENCH_FSYNC_NO)) &&
                fsync_mode != 0)
                continue;
            j->sync = sync;
            for (size_t i = 0; i < NMETHODS && rc == 0; i++)
                rc = run_one(&methods[i], j, want, &cost[i]);
            if (rc == 0)
                report(out, j, cost);
        }
    }
    return rc;
}

int exp_copy(const struct bench_opts *o, FILE *out)
{
    uint64_t size = o->size != 0 ? o->size
                  : o->quick     ? QUICK_SIZE
                                 : DEFAULT_SIZE;
    uint64_t bufsize = o->buf != 0 ? o->buf : DEFAULT_BUF;
    int reps = bench_reps(o, o->quick ? 1 : REPS);
    char src[PATH_MAX], dst[PATH_MAX], name[64];
    struct job j = {.src = src, .dst = dst};
    uint64_t want;
    int err, rc = 0;

    if (size > SIZE_MAX || size > (uint64_t)INT64_MAX || bufsize > SIZE_MAX) {
        bench_warn("copy: size or buffer too large\n");
        return 1;
    }
    j.size = (size_t)size;
    j.bufsize = (size_t)bufsize;
    j.buf = malloc(j.bufsize);
    if (j.buf == NULL)
        return fail("malloc", "(copy buffer)", ENOMEM);
    snprintf(name, sizeof name, "iobench-copy-src.%ld", (long)getpid());
    bench_path(src, o, name);
    snprintf(name, sizeof name, "iobench-copy-dst.%ld", (long)getpid());
    bench_path(dst, o, name);

    err = bench_file(src, size, o->seed);
    if (err != 0) {
        rc = fail("write", src, err);
        goto out;
    }
    err = bench_file_sum(src, &want);
    if (err != 0) {
        rc = fail("read", src, err);
        goto out;
    }
    rc = rounds(out, &j, want, reps, o->fsync);
out:
    unlink(dst);
    bench_remove(o, src);
    free(j.buf);
    return rc;
}
