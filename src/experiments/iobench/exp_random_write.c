/* exp_random_write.c: random-access's writes (see exp_random.c): 8-byte
 * stores into a shared mapping, pwrite()s, and stdio's fseeko+fwrite+
 * fflush, first with the file's pages resident, then not. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"
#include "exp_random.h"
#include "timing.h"

/* verify: every offset of c->offs[0..n) reads back (pread) as TAG wrote
 * it. */
static int verify(struct ctx *c, const char *kase, const char *method,
                  uint64_t n, enum tag tag)
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v;
        int err = ra_pread8(c->fd, c->offs[i], &v);

        if (err != 0)
            return ra_fail("pread", c->path, err);
        if (v != ra_value_at(c->offs[i], tag)) {
            bench_warn(EXP ": %s %s: offset %llu of %s "
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

    if (c->map == NULL && ra_map(c, PROT_READ | PROT_WRITE) != 0)
        return 1;
    w = (volatile uint64_t *)c->map;
    t0 = sp_now_ns();
    for (uint64_t i = 0; i < n; i++)
        w[c->offs[i] / 8] = ra_value_at(c->offs[i], tag);
    *ns = sp_now_ns() - t0;
    if (msync(c->map, (size_t)c->size, MS_SYNC) != 0) {
        ra_fail("msync", c->path, errno);
        ra_unmap(c);
        return 1;
    }
    return ra_unmap(c);
}

static int pwrite8(int fd, uint64_t off, uint64_t v)
{
    ssize_t r;

    do
        r = pwrite(fd, &v, 8, (off_t)off);
    while (r < 0 && errno == EINTR);
    return r == 8 ? 0 : r < 0 ? errno : EIO;
}

/* put: N 8-byte pwrites at c->offs; *NS is their time. */
static int put(struct ctx *c, uint64_t n, enum tag tag, uint64_t *ns)
{
    uint64_t t0 = sp_now_ns();

    for (uint64_t i = 0; i < n; i++) {
        int err = pwrite8(c->fd, c->offs[i], ra_value_at(c->offs[i], tag));
        if (err != 0)
            return ra_fail("pwrite", c->path, err);
    }
    *ns = sp_now_ns() - t0;
    return 0;
}

/* fput: N 8-byte writes at c->offs through a stdio stream, each an
 * fseeko, an fwrite and an fflush (without the flush they would wait in
 * the stream's buffer, and pwrite's each reach the page cache); *NS is
 * their time, the stream's opening and closing apart. */
static int fput(struct ctx *c, uint64_t n, enum tag tag, uint64_t *ns)
{
    FILE *s = fopen(c->path, "r+be");
    uint64_t t0, i;

    if (s == NULL)
        return ra_fail("fopen", c->path, errno);
    t0 = sp_now_ns();
    for (i = 0; i < n; i++) {
        uint64_t v = ra_value_at(c->offs[i], tag);
        if (fseeko(s, (off_t)c->offs[i], SEEK_SET) != 0 ||
            fwrite(&v, 8, 1, s) != 1 || fflush(s) != 0)
            break;
    }
    *ns = sp_now_ns() - t0;
    if (fclose(s) != 0 || i < n)
        return ra_fail("fwrite", c->path, EIO);
    return 0;
}

/* rows: a write case's rows from the three methods' times over N writes;
 * the article's pwrite figure is 303 ns, its mmap figure SEED_MMAP. */
static void rows(const struct ctx *c, FILE *out, const char *kase,
                 uint64_t n, uint64_t t_pw, uint64_t t_mm, uint64_t t_fw,
                 double seed_mmap)
{
    ra_row(c, out, kase, "pwrite", ra_per_op(t_pw, n), 303);
    ra_row(c, out, kase, "mmap", ra_per_op(t_mm, n), seed_mmap);
    ra_row(c, out, kase, "fwrite", ra_per_op(t_fw, n), NAN);
    ra_ratio(c, out, kase, "pwrite/mmap", (double)t_pw / (double)t_mm,
             303.0 / seed_mmap);
}

int ra_write_resident(struct ctx *c, FILE *out)
{
    static const char kase[] = "write-resident";
    uint64_t n = c->quick ? 20000 : 200000, ns_mmap, ns_pwrite, ns_fwrite;

    ra_random_offsets(c, n);
    /* resident and writable: a store to every page (of the value it
     * holds) makes each page table entry present and dirty, so no timed
     * store takes a fault, not even the write-protect fault a clean
     * shared page takes on its first store */
    if (ra_map(c, PROT_READ | PROT_WRITE) != 0)
        return 1;
    for (uint64_t off = 0; off < c->size; off += c->page) {
        volatile uint64_t *w = (volatile uint64_t *)(c->map + off);
        *w = *w;
    }
    if (store(c, n, TAG_MMAP_RESIDENT, &ns_mmap) != 0 ||
        verify(c, kase, "mmap", n, TAG_MMAP_RESIDENT) != 0 ||
        put(c, n, TAG_PWRITE_RESIDENT, &ns_pwrite) != 0 ||
        verify(c, kase, "pwrite", n, TAG_PWRITE_RESIDENT) != 0 ||
        fput(c, n, TAG_FWRITE_RESIDENT, &ns_fwrite) != 0 ||
        verify(c, kase, "fwrite", n, TAG_FWRITE_RESIDENT) != 0)
        return 1;
    rows(c, out, kase, n, ns_pwrite, ns_mmap, ns_fwrite, 79);
    return 0;
}

/* evict: 0, or -1 (with a message) when the file cannot be evicted. */
static int evict(struct ctx *c)
{
    if (bench_evict(c->path) == 0)
        return 0;
    bench_warn(EXP ": cannot evict %s from the page cache "
               "(tmpfs?): no write-nonresident rows\n", c->path);
    return -1;
}

/* pick_pages: c->offs[0..n) = one random word in each of N distinct
 * pages, in a random order: the first N of a Fisher-Yates shuffle of the
 * page numbers (c->offs holds a slot a page: see cap). */
static void pick_pages(struct ctx *c, uint64_t pages, uint64_t n)
{
    uint64_t *pg = c->offs;

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
}

/* write_nonresident: stores into a fresh mapping of the evicted file, one
 * per page, so each pays for its page's first touch; then pwrites, then
 * stdio writes to the same offsets, each after evicting it again.  The
 * article's one pwrite figure, 303, stands against both of its mmap
 * figures, so it is the seed of both pwrite rows. */
int ra_write_nonresident(struct ctx *c, FILE *out)
{
    static const char kase[] = "write-nonresident";
    uint64_t pages = c->size / c->page, n = c->quick ? 20000 : 200000;
    uint64_t ns_mmap, ns_pwrite, ns_fwrite;

    if (n > pages)
        n = pages;
    pick_pages(c, pages, n);
    if (evict(c) != 0)
        return 0;
    if (store(c, n, TAG_MMAP_COLD, &ns_mmap) != 0 ||
        verify(c, kase, "mmap", n, TAG_MMAP_COLD) != 0 || evict(c) != 0 ||
        put(c, n, TAG_PWRITE_COLD, &ns_pwrite) != 0 ||
        verify(c, kase, "pwrite", n, TAG_PWRITE_COLD) != 0 || evict(c) != 0 ||
        fput(c, n, TAG_FWRITE_COLD, &ns_fwrite) != 0 ||
        verify(c, kase, "fwrite", n, TAG_FWRITE_COLD) != 0)
        return 1;
    rows(c, out, kase, n, ns_pwrite, ns_mmap, ns_fwrite, 1870);
    return 0;
}
