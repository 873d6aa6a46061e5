/* exp_random.c: random-access, after a Go article on memory maps (seed
 * 003): 8-byte reads and writes at random offsets of a file, with a system
 * call each (pread, pwrite: Go's ReaderAt and WriterAt) or as loads and
 * stores in a shared mapping of it, and through stdio (fseeko and fread,
 * fseeko, fwrite and fflush: the buffered I/O the article's readers asked
 * about).  Its figures, in ns/op: random reads pread 416.4, mmap 3.3;
 * iterating over the file pread 333.3, mmap 1.3; writes through the
 * mapping 1870 with the pages not resident, 79 with them resident, pwrite
 * 303.  The writes are in exp_random_write.c.
 *
 * The mappings are faulted in before the timed loads and stores of the
 * resident cases: those figures are the steady state of a long-running
 * benchmark loop, where each page's first-touch fault is long paid for.
 * The non-resident case is the opposite: a fresh mapping of an evicted
 * file, and every store goes to a page no earlier store touched.  Every
 * case runs o->reps times, one row each, with fresh random offsets. */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "exp_random.h"
#include "sys.h"
#include "timing.h"

#define MIB ((uint64_t)1 << 20)

/* The iterate case's span: 8-byte preads over 64 MiB take seconds. */
#define ITERATE_MAX (64 * MIB)

/* Where the loads' sums go, so no load is optimised away. */
static volatile uint64_t sink;

int ra_fail(const char *call, const char *path, int err)
{
    bench_warn(EXP ": %s %s: %s\n", call, path,
               strerror(err));
    return 1;
}

int ra_pread8(int fd, uint64_t off, uint64_t *v)
{
    size_t got;
    int err = sp_sys_pread_full(fd, v, 8, (off_t)off, &got);

    return err != 0 ? err : got == 8 ? 0 : EIO;
}

int ra_map(struct ctx *c, int prot)
{
    void *p = mmap(NULL, (size_t)c->size, prot, MAP_SHARED, c->fd, 0);

    if (p == MAP_FAILED)
        return ra_fail("mmap", c->path, errno);
    c->map = p;
    return 0;
}

int ra_unmap(struct ctx *c)
{
    void *p = c->map;

    c->map = NULL;
    if (p != NULL && munmap(p, (size_t)c->size) != 0)
        return ra_fail("munmap", c->path, errno);
    return 0;
}

void ra_random_offsets(struct ctx *c, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        c->offs[i] = bench_random(&c->state) % (c->size / 8) * 8;
}

double ra_per_op(uint64_t ns, uint64_t n)
{
    return (double)ns / (double)(n > 0 ? n : 1);
}

void ra_row(const struct ctx *c, FILE *out, const char *kase,
            const char *method, double ns, double seed)
{
    struct bench_row r = {EXP, kase, method, "latency", "ns/op", 0, ns, seed,
                          1, c->size};
    bench_print(out, &r);
}

void ra_ratio(const struct ctx *c, FILE *out, const char *kase,
              const char *method, double x, double seed)
{
    struct bench_row r = {EXP, kase, method, "ratio", "x", 0, x, seed, 1,
                          c->size};
    bench_print(out, &r);
}

/* get: N 8-byte reads at c->offs, or at 0, 8, 16, ... when SEQ, with pread
 * (STREAM NULL) or with fseeko and fread from STREAM; their sum in *SUM,
 * their time in *NS. */
static int get(struct ctx *c, FILE *stream, uint64_t n, int seq,
               uint64_t *sum, uint64_t *ns)
{
    uint64_t t0 = sp_now_ns(), v;

    for (uint64_t i = 0; i < n; i++) {
        uint64_t off = seq ? i * 8 : c->offs[i];
        int err = 0;

        if (stream == NULL)
            err = ra_pread8(c->fd, off, &v);
        else if (fseeko(stream, (off_t)off, SEEK_SET) != 0 ||
                 fread(&v, 8, 1, stream) != 1)
            err = EIO;
        if (err != 0)
            return ra_fail(stream == NULL ? "pread" : "fread", c->path, err);
        *sum += v;
    }
    *ns = sp_now_ns() - t0;
    return 0;
}

/* load: the same N reads as loads from the mapping at W; as get. */
static void load(const struct ctx *c, const volatile uint64_t *w,
                 uint64_t n, int seq, uint64_t *sum, uint64_t *ns)
{
    uint64_t t0 = sp_now_ns();

    if (seq) {
        for (uint64_t i = 0; i < n; i++)
            *sum += w[i];
    } else {
        for (uint64_t i = 0; i < n; i++)
            *sum += w[c->offs[i] / 8];
    }
    *ns = sp_now_ns() - t0;
}

/* reads: N 8-byte reads at c->offs, or at 0, 8, 16, ... when SEQ, with
 * pread, with stdio and as loads from a mapping faulted in first; their
 * sums must agree. */
static int reads(struct ctx *c, FILE *out, const char *kase, uint64_t n,
                 int seq, double seed_pread, double seed_mmap)
{
    const volatile uint64_t *w;
    uint64_t sum[3] = {0}, ns[3], pages = 0;
    FILE *stream;
    int rc;

    if (ra_map(c, PROT_READ) != 0)
        return 1;
    w = (const volatile uint64_t *)c->map;
    for (uint64_t off = 0; off < c->size; off += c->page)
        pages += w[off / 8];
    sink = pages;
    if ((stream = fopen(c->path, "rbe")) == NULL) {
        ra_unmap(c);
        return ra_fail("fopen", c->path, errno);
    }
    rc = get(c, NULL, n, seq, &sum[0], &ns[0]);
    if (rc == 0)
        rc = get(c, stream, n, seq, &sum[2], &ns[2]);
    fclose(stream);
    load(c, w, n, seq, &sum[1], &ns[1]);
    sink = sum[1];
    if (ra_unmap(c) != 0 || rc != 0)
        return 1;
    if (sum[0] != sum[1] || sum[2] != sum[1]) {
        bench_warn(EXP ": %s: pread, fread and mmap read "
                   "different data from %s\n", kase, c->path);
        return 1;
    }
    ra_row(c, out, kase, "pread", ra_per_op(ns[0], n), seed_pread);
    ra_row(c, out, kase, "mmap", ra_per_op(ns[1], n), seed_mmap);
    ra_row(c, out, kase, "fread", ra_per_op(ns[2], n), NAN);
    ra_ratio(c, out, kase, "pread/mmap", (double)ns[0] / (double)ns[1],
             seed_pread / seed_mmap);
    return 0;
}

static int run(struct ctx *c, FILE *out, int reps)
{
    uint64_t n = c->quick ? 100000 : 2000000, span, sum;
    int err;

    /* Cached by a read, as in syscall-vs-mmap: in readahead's folios of
     * up to 2 MiB, not the 1 MiB writes'.  A fault maps a 2 MiB folio with
     * one PMD entry, which helps the loads; but ext4 walks all of a
     * folio's buffer heads (one per 4 KiB block) on each buffered write
     * and each page_mkwrite, so an 8-byte pwrite into a 2 MiB folio costs
     * microseconds where one into a 4 KiB page costs well under one. */
    bench_evict(c->path);
    if ((err = bench_file_sum(c->path, &sum)) != 0)
        return ra_fail("read", c->path, err);
    sink = sum;

    span = c->size < ITERATE_MAX ? c->size : ITERATE_MAX;
    for (int r = 0; r < reps; r++) {
        ra_random_offsets(c, n);
        if (reads(c, out, "random-read", n, 0, 416.4, 3.3) != 0 ||
            reads(c, out, "iterate", span / 8, 1, 333.3, 1.3) != 0 ||
            ra_write_resident(c, out) != 0 ||
            ra_write_nonresident(c, out) != 0)
            return 1;
    }
    return 0;
}

int exp_random_access(const struct bench_opts *o, FILE *out)
{
    char path[PATH_MAX], name[64];
    struct ctx c = {.path = path, .fd = -1, .quick = o->quick,
                    .state = o->seed};
    int err, rc = 1;

    c.size = o->size != 0 ? o->size : o->quick ? 8 * MIB : 256 * MIB;
    c.page = (uint64_t)sysconf(_SC_PAGESIZE);
    if (c.size < c.page || (uint64_t)(size_t)c.size != c.size) {
        bench_warn(EXP ": --size must be one page or more "
                   "and mappable\n");
        return 1;
    }
    /* room for the reads' offsets, the writes' and the page shuffle */
    c.cap = o->quick ? 100000 : 2000000;
    if (c.cap < c.size / c.page)
        c.cap = c.size / c.page;
    snprintf(name, sizeof name, "iobench-random-%ld.dat", (long)getpid());
    bench_path(path, o, name);
    if ((c.offs = malloc(c.cap * sizeof *c.offs)) == NULL) {
        bench_warn(EXP ": out of memory\n");
        return 1;
    }
    if ((err = bench_file(path, c.size, o->seed)) != 0)
        ra_fail("creating", path, err);
    else if ((c.fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
        ra_fail("open", path, errno);
    else
        rc = run(&c, out, bench_reps(o, 1));
    if (c.map != NULL)
        munmap(c.map, (size_t)c.size);
    if (c.fd >= 0 && close(c.fd) != 0 && rc == 0)
        rc = ra_fail("close", path, errno);
    free(c.offs);
    if ((err = bench_remove(o, path)) != 0 && rc == 0)
        rc = ra_fail("unlink", path, err);
    return rc;
}
