/* exp_random.c: random-access, after a Go article on memory maps (seed
 * 003): 8-byte reads and writes at random offsets of a file, with a system
 * call each (pread, pwrite: Go's ReaderAt and WriterAt) or as loads and
 * stores in a shared mapping of it.  Its figures, in ns/op: random reads
 * pread 416.4, mmap 3.3; iterating over the file pread 333.3, mmap 1.3;
 * writes through the mapping 1870 with the pages not resident, 79 with
 * them resident, pwrite 303.
 *
 * The mappings are faulted in before the timed loads and stores of the
 * resident cases: those figures are the steady state of a long-running
 * benchmark loop, where each page's first-touch fault is long paid for.
 * The non-resident case is the opposite: a fresh mapping of an evicted
 * file, and every store goes to a page no earlier store touched. */
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

#define EXP "random-access"
#define MIB ((uint64_t)1 << 20)

/* The iterate case's span: 8-byte preads over 64 MiB take seconds. */
#define ITERATE_MAX (64 * MIB)

/* What each write phase stores at OFF: a function of the offset and the
 * phase, so repeated offsets store the same value and every phase's
 * values differ from the file's and from every other phase's. */
enum tag {
    TAG_MMAP_RESIDENT = 1, TAG_PWRITE_RESIDENT, TAG_MMAP_COLD, TAG_PWRITE_COLD
};

struct ctx {
    const char *path;
    int fd;
    uint64_t size, page;
    int quick;
    uint64_t state;   /* bench_random's */
    uint64_t *offs;   /* the offsets of one case's operations */
    uint64_t cap;     /* ... of which there is room for this many */
    unsigned char *map;  /* the mapping in use (size bytes), or NULL */
};

/* Where the loads' sums go, so no load is optimised away. */
static volatile uint64_t sink;

static int fail(const char *call, const char *path, int err)
{
    fprintf(stderr, "iobench: " EXP ": %s %s: %s\n", call, path,
            strerror(err));
    return 1;
}

static uint64_t value_at(uint64_t off, enum tag tag)
{
    return (off + (uint64_t)tag) * 0x9e3779b97f4a7c15u ^
           ((uint64_t)tag << 56);
}

static int pread8(int fd, uint64_t off, uint64_t *v)
{
    size_t got;
    int err = sp_sys_pread_full(fd, v, 8, (off_t)off, &got);

    return err != 0 ? err : got == 8 ? 0 : EIO;
}

static int pwrite8(int fd, uint64_t off, uint64_t v)
{
    ssize_t r;

    do
        r = pwrite(fd, &v, 8, (off_t)off);
    while (r < 0 && errno == EINTR);
    return r == 8 ? 0 : r < 0 ? errno : EIO;
}

static int map_file(struct ctx *c, int prot)
{
    void *p = mmap(NULL, (size_t)c->size, prot, MAP_SHARED, c->fd, 0);

    if (p == MAP_FAILED)
        return fail("mmap", c->path, errno);
    c->map = p;
    return 0;
}

static int unmap_file(struct ctx *c)
{
    void *p = c->map;

    c->map = NULL;
    if (p != NULL && munmap(p, (size_t)c->size) != 0)
        return fail("munmap", c->path, errno);
    return 0;
}

/* random_offsets: N random 8-aligned offsets of whole words of the file. */
static void random_offsets(struct ctx *c, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        c->offs[i] = bench_random(&c->state) % (c->size / 8) * 8;
}

static double per_op(uint64_t ns, uint64_t n)
{
    return (double)ns / (double)(n > 0 ? n : 1);
}

static void row(FILE *out, const char *kase, const char *method, double ns,
                double seed, int checked)
{
    struct bench_row r = {EXP, kase, method, "latency", "ns/op", 0, ns, seed,
                          checked};
    bench_print(out, &r);
}

static void ratio(FILE *out, const char *kase, const char *method, double x,
                  double seed)
{
    struct bench_row r = {EXP, kase, method, "ratio", "x", 0, x, seed, 1};
    bench_print(out, &r);
}

/* reads: N 8-byte reads at c->offs, or at 0, 8, 16, ... when SEQ, with
 * pread and as loads from a mapping faulted in first; their sums must
 * agree. */
static int reads(struct ctx *c, FILE *out, const char *kase, uint64_t n,
                 int seq, double seed_pread, double seed_mmap)
{
    const volatile uint64_t *w;
    uint64_t sum_pread = 0, sum_mmap = 0, t0, ns_pread, ns_mmap, v;

    if (map_file(c, PROT_READ) != 0)
        return 1;
    w = (const volatile uint64_t *)c->map;
    for (uint64_t off = 0; off < c->size; off += c->page)
        sum_mmap += w[off / 8];
    sink = sum_mmap;
    sum_mmap = 0;

    t0 = sp_now_ns();
    for (uint64_t i = 0; i < n; i++) {
        int err = pread8(c->fd, seq ? i * 8 : c->offs[i], &v);
        if (err != 0)
            return fail("pread", c->path, err);
        sum_pread += v;
    }
    ns_pread = sp_now_ns() - t0;

    t0 = sp_now_ns();
    if (seq) {
        for (uint64_t i = 0; i < n; i++)
            sum_mmap += w[i];
    } else {
        for (uint64_t i = 0; i < n; i++)
            sum_mmap += w[c->offs[i] / 8];
    }
    ns_mmap = sp_now_ns() - t0;
    sink = sum_mmap;

    if (unmap_file(c) != 0)
        return 1;
    if (sum_pread != sum_mmap) {
        fprintf(stderr, "iobench: " EXP ": %s: pread and mmap read different "
                "data from %s\n", kase, c->path);
        return 1;
    }
    row(out, kase, "pread", per_op(ns_pread, n), seed_pread, 1);
    row(out, kase, "mmap", per_op(ns_mmap, n), seed_mmap, 1);
    ratio(out, kase, "pread/mmap", (double)ns_pread / (double)ns_mmap,
          seed_pread / seed_mmap);
    return 0;
}

/* verify: every offset of c->offs[0..n) reads back (pread) as TAG wrote
 * it. */
static int verify(struct ctx *c, const char *kase, const char *method,
                  uint64_t n, enum tag tag)
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v;
        int err = pread8(c->fd, c->offs[i], &v);

        if (err != 0)
            return fail("pread", c->path, err);
        if (v != value_at(c->offs[i], tag)) {
            fprintf(stderr, "iobench: " EXP ": %s %s: offset %llu of %s "
                    "does not hold the value written\n", kase, method,
                    (unsigned long long)c->offs[i], c->path);
            return 1;
        }
    }
    return 0;
}

/* store: N 8-byte stores at c->offs into a writable shared mapping of the
 * file (the caller's, faulted in, or a fresh one), flushed with msync
 * and unmapped after the clock stops; *NS is the stores' time. */
static int store(struct ctx *c, uint64_t n, enum tag tag, uint64_t *ns)
{
    volatile uint64_t *w;
    uint64_t t0;

    if (c->map == NULL && map_file(c, PROT_READ | PROT_WRITE) != 0)
        return 1;
    w = (volatile uint64_t *)c->map;
    t0 = sp_now_ns();
    for (uint64_t i = 0; i < n; i++)
        w[c->offs[i] / 8] = value_at(c->offs[i], tag);
    *ns = sp_now_ns() - t0;
    if (msync(c->map, (size_t)c->size, MS_SYNC) != 0) {
        fail("msync", c->path, errno);
        unmap_file(c);
        return 1;
    }
    return unmap_file(c);
}

/* put: N 8-byte pwrites at c->offs; *NS is their time. */
static int put(struct ctx *c, uint64_t n, enum tag tag, uint64_t *ns)
{
    uint64_t t0 = sp_now_ns();

    for (uint64_t i = 0; i < n; i++) {
        int err = pwrite8(c->fd, c->offs[i], value_at(c->offs[i], tag));
        if (err != 0)
            return fail("pwrite", c->path, err);
    }
    *ns = sp_now_ns() - t0;
    return 0;
}

static int write_resident(struct ctx *c, FILE *out)
{
    static const char kase[] = "write-resident";
    uint64_t n = c->quick ? 20000 : 200000, ns_mmap, ns_pwrite;

    random_offsets(c, n);
    /* resident and writable: a store to every page (of the value it
     * holds) makes each page table entry present and dirty, so no timed
     * store takes a fault, not even the write-protect fault a clean
     * shared page takes on its first store */
    if (map_file(c, PROT_READ | PROT_WRITE) != 0)
        return 1;
    for (uint64_t off = 0; off < c->size; off += c->page) {
        volatile uint64_t *w = (volatile uint64_t *)(c->map + off);
        *w = *w;
    }
    if (store(c, n, TAG_MMAP_RESIDENT, &ns_mmap) != 0 ||
        verify(c, kase, "mmap", n, TAG_MMAP_RESIDENT) != 0 ||
        put(c, n, TAG_PWRITE_RESIDENT, &ns_pwrite) != 0 ||
        verify(c, kase, "pwrite", n, TAG_PWRITE_RESIDENT) != 0)
        return 1;
    row(out, kase, "pwrite", per_op(ns_pwrite, n), 303, 1);
    row(out, kase, "mmap", per_op(ns_mmap, n), 79, 1);
    ratio(out, kase, "pwrite/mmap", (double)ns_pwrite / (double)ns_mmap,
          303.0 / 79.0);
    return 0;
}

static int evict(struct ctx *c)
{
    if (bench_evict(c->path) == 0)
        return 0;
    fprintf(stderr, "iobench: " EXP ": cannot evict %s from the page cache "
            "(tmpfs?): no write-nonresident rows\n", c->path);
    return -1;
}

/* write_nonresident: stores into a fresh mapping of the evicted file, one
 * per page, on pages in a random order, so each pays for its page's first
 * touch; then pwrites to the same offsets after evicting it again.  The
 * article's one pwrite figure, 303, stands against both of its mmap
 * figures, so it is the seed of both pwrite rows. */
static int write_nonresident(struct ctx *c, FILE *out)
{
    static const char kase[] = "write-nonresident";
    uint64_t pages = c->size / c->page, n = c->quick ? 20000 : 200000;
    uint64_t ns_mmap, ns_pwrite, *pg = c->offs;

    if (n > pages)
        n = pages;
    /* the first N of a Fisher-Yates shuffle of the page numbers (the
     * array holds pages entries: see cap) */
    for (uint64_t i = 0; i < pages; i++)
        pg[i] = i;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t j = i + bench_random(&c->state) % (pages - i), t = pg[i];
        pg[i] = pg[j];
        pg[j] = t;
    }
    for (uint64_t i = 0; i < n; i++)
        c->offs[i] = pg[i] * c->page +
                     bench_random(&c->state) % (c->page / 8) * 8;

    if (evict(c) != 0)
        return 0;
    if (store(c, n, TAG_MMAP_COLD, &ns_mmap) != 0 ||
        verify(c, kase, "mmap", n, TAG_MMAP_COLD) != 0)
        return 1;
    if (evict(c) != 0)
        return 1;
    if (put(c, n, TAG_PWRITE_COLD, &ns_pwrite) != 0 ||
        verify(c, kase, "pwrite", n, TAG_PWRITE_COLD) != 0)
        return 1;
    row(out, kase, "pwrite", per_op(ns_pwrite, n), 303, 1);
    row(out, kase, "mmap", per_op(ns_mmap, n), 1870, 1);
    ratio(out, kase, "pwrite/mmap", (double)ns_pwrite / (double)ns_mmap,
          303.0 / 1870.0);
    return 0;
}

static int run(struct ctx *c, FILE *out)
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
        return fail("read", c->path, err);
    sink = sum;

    random_offsets(c, n);
    if (reads(c, out, "random-read", n, 0, 416.4, 3.3) != 0)
        return 1;
    span = c->size < ITERATE_MAX ? c->size : ITERATE_MAX;
    if (reads(c, out, "iterate", span / 8, 1, 333.3, 1.3) != 0)
        return 1;
    if (write_resident(c, out) != 0)
        return 1;
    return write_nonresident(c, out);
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
        fprintf(stderr, "iobench: " EXP ": --size must be one page or more "
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
        fprintf(stderr, "iobench: " EXP ": out of memory\n");
        return 1;
    }
    if ((err = bench_file(path, c.size, o->seed)) != 0)
        fail("creating", path, err);
    else if ((c.fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
        fail("open", path, errno);
    else
        rc = run(&c, out);
    if (c.map != NULL)
        munmap(c.map, (size_t)c.size);
    if (c.fd >= 0 && close(c.fd) != 0 && rc == 0)
        rc = fail("close", path, errno);
    free(c.offs);
    if (unlink(path) != 0 && errno != ENOENT && rc == 0)
        rc = fail("unlink", path, errno);
    return rc;
}
