/* exp_syscall.c: syscall-vs-mmap, after Fedorova, "Why mmap is faster than
 * system calls" (seed 000).  One thread reads a whole file in blocks, in
 * file order or in a random order, either with pread() into a buffer or
 * with memcpy() from a mapping of the file into a buffer of the same size,
 * or with stdio's fread() (the method her readers asked about), with the
 * file in the page cache (warm) or evicted before each pass (cold).  Her
 * 4 GB file, 4-16 KiB blocks, warm and cold: mmap 2-6x faster.  Her
 * caveats: not when the data does not fit in memory, nor with much larger
 * blocks; the 64 KiB and 1 MiB blocks test the second.  The first needs a
 * memory limit on the process (scripts/seeds.sh runs this experiment in a
 * memory-limited cgroup): when its limit is below the file's size, the
 * case names end in "-memlimit" and a row gives the limit.
 *
 * Her explanation (the kernel's copy to user space forgoes the vector
 * instructions a user memcpy uses) is tested by exp_syscall_bw.c's
 * bandwidth rows.  Each cell runs o->reps times, one row a repeat. */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sys.h"
#include "timing.h"

#define EXP "syscall-vs-mmap"

/* bench_sum's starting value, as bench_file_sum uses it */
#define SUM_BASIS 0xcbf29ce484222325u

/* The reference read's piece and the destination buffer: the largest
 * block.  Every block size divides it, so no block straddles two pieces. */
#define CHUNK ((size_t)1 << 20)

/* The blocks a random pass reads under a memory limit below the file's
 * size, at most. */
#define RAND_LIMITED 256

static const size_t block_sizes[] = {4096, 8192, 16384, 65536, CHUNK};
#define NBLOCK (sizeof block_sizes / sizeof block_sizes[0])

enum method { M_READ, M_MMAP, M_FREAD, NMETHOD };
static const char *const method_name[] = {"read", "mmap", "fread"};

struct file {
    const char *path;
    int fd;
    uint64_t size;
    unsigned char *buf;  /* CHUNK bytes, page-aligned */
    const char *suffix;  /* of every case name: "" or "-memlimit" */
    uint64_t rand_max;   /* blocks a random pass reads, at most */
    uint64_t *state;     /* bench_random's, for the samples */
};

static int fail(const char *call, const char *path, int err)
{
    bench_warn(EXP ": %s %s: %s\n", call, path,
               strerror(err));
    return 1;
}

static uint64_t nblocks(uint64_t size, size_t block)
{
    return (size + block - 1) / block;
}

/* fingerprint: bench_sum of a block's first, middle and last 8 bytes.  A
 * block read from the wrong offset, not read at all (its slot stays 0) or
 * cut short changes it; three loads cost nothing next to the copy being
 * timed, where bench_sum of every byte would cost more than the copy. */
static uint64_t fingerprint(const unsigned char *b, size_t len)
{
    size_t n = len < 8 ? len : 8;
    uint64_t s = bench_sum(SUM_BASIS, b, n);

    s = bench_sum(s, b + (len - n) / 2, n);
    return bench_sum(s, b + len - n, n);
}

static int pread_full(int fd, unsigned char *buf, size_t len, uint64_t off)
{
    size_t got;
    int err = sp_sys_pread_full(fd, buf, len, (off_t)off, &got);

    if (err == 0 && got < len)
        err = EIO;  /* the file shrank under us */
    return err;
}

/* reference: REF[b][i], the fingerprint of block i of size block_sizes[b],
 * from one plain read of the file in CHUNK pieces, whose bench_sum must be
 * FILE_SUM (bench_file_sum's).  Leaves the file in the page cache. */
static int reference(const struct file *f, uint64_t *ref[NBLOCK],
                     uint64_t file_sum)
{
    uint64_t sum = SUM_BASIS;

    for (uint64_t off = 0; off < f->size; off += CHUNK) {
        size_t len = f->size - off < CHUNK ? (size_t)(f->size - off) : CHUNK;
        int err = pread_full(f->fd, f->buf, len, off);

        if (err != 0)
            return fail("pread", f->path, err);
        sum = bench_sum(sum, f->buf, len);
        for (size_t b = 0; b < NBLOCK; b++) {
            size_t bs = block_sizes[b];
            for (size_t p = 0; p < len; p += bs)
                ref[b][(off + p) / bs] =
                    fingerprint(f->buf + p, len - p < bs ? len - p : bs);
        }
    }
    if (sum != file_sum) {
        bench_warn(EXP ": %s reads back with another "
                   "checksum than bench_file_sum's\n", f->path);
        return 1;
    }
    return 0;
}

/* shuffle: ORDER[0..n) = a Fisher-Yates permutation of 0..n-1. */
static void shuffle(uint64_t *order, uint64_t n, uint64_t *state)
{
    for (uint64_t i = 0; i < n; i++)
        order[i] = i;
    for (uint64_t i = n; i > 1; i--) {
        uint64_t j = bench_random(state) % i, t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

/* visits: how many blocks of size BLOCK a pass in ORDER reads: all of
 * them, but at most f->rand_max in a random order (see exp_syscall_vs_mmap
 * for why). */
static uint64_t visits(const struct file *f, size_t block,
                       const uint64_t *order)
{
    uint64_t n = nblocks(f->size, block);

    return order != NULL && n > f->rand_max ? f->rand_max : n;
}

/* stdio_block: LEN bytes at OFF from stream S into BUF, seeking only when
 * OFF is not where the stream stands (*POS), as a stdio reader would. */
static int stdio_block(FILE *s, unsigned char *buf, size_t len, uint64_t off,
                       uint64_t *pos)
{
    if (off != *pos && fseeko(s, (off_t)off, SEEK_SET) != 0)
        return errno;
    if (fread(buf, 1, len, s) != len)
        return EIO;  /* an error or the file shrank */
    *pos = off + len;
    return 0;
}

/* pass: read every block of F once (see visits), in ORDER (file order
 * when NULL), with method M, into F->buf; FP[i] gets block i's
 * fingerprint.  *NS: the time of the whole pass, mmap() and munmap()
 * (fopen() and fclose()) included. */
static int pass(const struct file *f, enum method m, size_t block,
                const uint64_t *order, uint64_t *fp, uint64_t *ns)
{
    uint64_t n = visits(f, block, order), pos = 0, t0 = sp_now_ns();
    const unsigned char *map = NULL;
    const char *call = m == M_READ ? "pread" : "fread";
    FILE *s = NULL;
    int err = 0;

    if (m == M_MMAP) {
        void *p = mmap(NULL, (size_t)f->size, PROT_READ, MAP_SHARED, f->fd, 0);
        if (p == MAP_FAILED)
            return fail("mmap", f->path, errno);
        map = p;
    } else if (m == M_FREAD && (s = fopen(f->path, "rbe")) == NULL) {
        return fail("fopen", f->path, errno);
    }
    for (uint64_t k = 0; k < n && err == 0; k++) {
        uint64_t i = order != NULL ? order[k] : k, off = i * block;
        size_t len = f->size - off < block ? (size_t)(f->size - off) : block;

        if (m == M_READ) {
            err = pread_full(f->fd, f->buf, len, off);
        } else if (m == M_FREAD) {
            err = stdio_block(s, f->buf, len, off, &pos);
        } else {
            memcpy(f->buf, map + off, len);
            /* the copy is the work: keep the compiler from shrinking it
             * to the bytes the fingerprint reads */
            __asm__ __volatile__("" : : "r"(f->buf) : "memory");
        }
        fp[i] = fingerprint(f->buf, len);
    }
    if (map != NULL && munmap((void *)map, (size_t)f->size) != 0 && err == 0) {
        err = errno;
        call = "munmap";
    }
    if (s != NULL && fclose(s) != 0 && err == 0) {
        err = errno;
        call = "fclose";
    }
    *ns = sp_now_ns() - t0;
    return err != 0 ? fail(call, f->path, err) : 0;
}

/* measure: one timed pass of method M after evicting the file when COLD;
 * its throughput in *GBS once every block read matches REF. */
static int measure(const struct file *f, enum method m, int cold,
                   size_t block, const uint64_t *order, const uint64_t *ref,
                   uint64_t *fp, double *gbs)
{
    uint64_t all = nblocks(f->size, block), n = visits(f, block, order);
    uint64_t ns, bytes = 0;

    /* a sample reads a stretch of the permutation that starts anywhere:
     * the same blocks every pass would be cached for all but the first */
    if (order != NULL && n < all)
        order += bench_random(f->state) % (all - n + 1);
    memset(fp, 0, all * sizeof *fp);
    if (cold && bench_evict(f->path) != 0) {
        bench_warn(EXP ": %s stays in the page cache\n",
                   f->path);
        return 1;
    }
    if (pass(f, m, block, order, fp, &ns) != 0)
        return 1;
    for (uint64_t k = 0; k < n; k++) {
        uint64_t i = order != NULL ? order[k] : k, off = i * block;

        bytes += f->size - off < block ? f->size - off : block;
        if (fp[i] != ref[i]) {
            bench_warn(EXP ": %s %s, %zu-byte blocks: "
                       "block %llu differs from the file\n", method_name[m],
                       order != NULL ? "random" : "sequential", block,
                       (unsigned long long)i);
            return 1;
        }
    }
    *gbs = (double)bytes / (double)(ns > 0 ? ns : 1);
    return 0;
}

/* cell: REPS rounds of a pass of each method over blocks of
 * block_sizes[B], one row per method and round, and the round's mmap/read
 * ratio.  The first method rotates from round to round and from block
 * size to block size, so none always inherits another's cache and TLB
 * state. */
static int cell(const struct file *f, FILE *out, int cold,
                const uint64_t *order, size_t b, const uint64_t *ref,
                uint64_t *fp, int reps)
{
    char kase[32];
    size_t bs = block_sizes[b];

    snprintf(kase, sizeof kase, "%s-%s%s", order != NULL ? "rand" : "seq",
             cold ? "cold" : "warm", f->suffix);
    for (int r = 0; r < reps; r++) {
        double gbs[NMETHOD];

        for (int j = 0; j < NMETHOD; j++) {
            enum method m = (enum method)((b + (size_t)r + (size_t)j) %
                                          NMETHOD);
            if (measure(f, m, cold, bs, order, ref, fp, &gbs[m]) != 0)
                return 1;
        }
        for (int m = 0; m < NMETHOD; m++) {
            struct bench_row row = {EXP, kase, method_name[m], "throughput",
                                    "GB/s", (double)bs, gbs[m], NAN, 1,
                                    f->size};
            bench_print(out, &row);
        }
        struct bench_row ratio = {EXP, kase, "mmap/read", "ratio", "x",
                                  (double)bs, gbs[M_MMAP] / gbs[M_READ], NAN,
                                  1, f->size};
        bench_print(out, &ratio);
    }
    return 0;
}

static int run(const struct bench_opts *o, FILE *out, struct file *f)
{
    uint64_t *ref[NBLOCK] = {0}, *perm[NBLOCK] = {0}, *fp, sum;
    uint64_t state = o->seed, n = nblocks(f->size, block_sizes[0]);
    int err, rc = 1, oom, evictable;

    f->state = &state;

    fp = malloc(n * sizeof *fp);
    oom = fp == NULL;
    for (size_t b = 0; b < NBLOCK && !oom; b++) {
        n = nblocks(f->size, block_sizes[b]);
        ref[b] = malloc(n * sizeof **ref);
        perm[b] = malloc(n * sizeof **perm);
        oom = ref[b] == NULL || perm[b] == NULL;
        if (!oom)
            shuffle(perm[b], n, &state);
    }
    if (oom) {
        bench_warn(EXP ": out of memory\n");
        goto out;
    }
    /* Warm means cached by an earlier read, as in the seed, not by the
     * writes that made the file: evict it and read it back.  Written in
     * 1 MiB writes the file sits in 1 MiB folios, mapped with page table
     * entries; read back by readahead, in folios up to 2 MiB, which a
     * fault can map with one PMD entry.  And the first read from the disk
     * after the write can be much the slowest (several times, in a VM:
     * the host's caches, presumably): this way no measured pass pays it. */
    evictable = bench_evict(f->path) == 0;
    if ((err = bench_file_sum(f->path, &sum)) != 0) {
        fail("read", f->path, err);
        goto out;
    }
    if (reference(f, ref, sum) != 0)
        goto out;
    /* the copy bandwidths are of cached data, which a memory limit below
     * the file's size does not leave: no bandwidth rows then */
    if (f->suffix[0] == '\0' &&
        exp_syscall_bandwidth(o, out, f->fd, f->path, f->size) != 0)
        goto out;

    for (int cold = 0; cold < 2; cold++) {
        if (cold && !evictable) {
            bench_warn(EXP ": cannot evict %s from the page "
                       "cache (tmpfs?): no cold rows\n", f->path);
            break;
        }
        for (int rnd = 0; rnd < 2; rnd++)
            for (size_t b = 0; b < NBLOCK; b++)
                if (cell(f, out, cold, rnd ? perm[b] : NULL, b, ref[b], fp,
                         bench_reps(o, 1)) != 0)
                    goto out;
    }
    rc = 0;
out:
    for (size_t b = 0; b < NBLOCK; b++) {
        free(ref[b]);
        free(perm[b]);
    }
    free(fp);
    return rc;
}

int exp_syscall_vs_mmap(const struct bench_opts *o, FILE *out)
{
    char path[PATH_MAX], name[64];
    struct file f = {.path = path, .fd = -1, .suffix = "",
                     .rand_max = UINT64_MAX};
    uint64_t limit = bench_memory_limit();
    void *buf = NULL;
    int err, rc = 1;

    f.size = o->size != 0 ? o->size : o->quick ? (uint64_t)16 << 20
                                               : (uint64_t)1 << 30;
    if ((uint64_t)(size_t)f.size != f.size) {
        bench_warn(EXP ": --size too large to map\n");
        return 1;
    }
    if (limit < f.size) {
        struct bench_row row = {EXP, "memlimit", "memory.max", "limit", "B",
                                0, (double)limit, NAN, 1, f.size};
        f.suffix = "-memlimit";
        /* Random faults on a mapping each read a readahead window that
         * the limit soon reclaims: a whole random pass can take minutes.
         * A sample of RAND_LIMITED blocks shows the same per-byte cost. */
        f.rand_max = RAND_LIMITED;
        bench_print(out, &row);
    }
    snprintf(name, sizeof name, "iobench-syscall-%ld.dat", (long)getpid());
    bench_path(path, o, name);
    if ((err = bench_file(path, f.size, o->seed)) != 0) {
        fail("creating", path, err);
        goto out;
    }
    if ((f.fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        fail("open", path, errno);
        goto out;
    }
    if ((err = posix_memalign(&buf, 4096, CHUNK)) != 0) {
        fail("allocating a buffer for", path, err);
        goto out;
    }
    f.buf = buf;
    memset(f.buf, 0, CHUNK);  /* fault it in before any pass */
    rc = run(o, out, &f);
out:
    if (f.fd >= 0)
        close(f.fd);
    free(buf);
    if ((err = bench_remove(o, path)) != 0 && rc == 0)
        rc = fail("unlink", path, err);
    return rc;
}
