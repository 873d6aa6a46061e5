/* exp_cdb.c: lookups in a constant database (seed 003's headline).  The Go
 * article's CDB lookups took about 1200 ns through ReaderAt (a pread per
 * read) and were about 25 times faster once its reader used a mapping.
 * Here a real CDB: Debian's tinycdb, which looks a key up either through a
 * mapping of the database (cdb_init, which mmaps, then cdb_find) or
 * through its file descriptor (cdb_seek, an lseek and a read for each of
 * the header slot, the hash slots probed and the record), then cdb_bread
 * for the value.
 *
 * A database of NKEYS keys (fewer with --quick) is built, then looked up
 * in a random order each way: warm, every key once (the database cached by
 * an earlier read), and cold, COLD keys each from a database evicted just
 * before.  Every lookup's value is checked inside the timed loop, the same
 * check each way.  Each batch runs o->reps times, alternating which method
 * goes first. */
#include "bench.h"

#include <cdb.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "timing.h"

#define EXP "cdb"
#define NKEYS 1000000u
#define QUICK_NKEYS 20000u
#define COLD 500  /* cold lookups a batch */
#define QUICK_COLD 100
#define KEYLEN 12  /* "k" and 11 decimal digits */
#define SEED_SEEK 1200.0
#define SEED_RATIO 25.0

enum method { M_SEEK, M_MMAP };
static const char *const method_name[] = {"seek", "mmap"};

struct db {
    const char *path;
    int fd;
    unsigned nkeys;
    char (*keys)[KEYLEN];  /* the lookups' keys, in lookup order */
    unsigned *index;       /* ... and their key numbers */
    unsigned nlookups;     /* room in keys and index */
    uint64_t bytes;        /* the database's size, once built */
};

static int fail(const char *call, const char *path, int err)
{
    bench_warn(EXP ": %s %s: %s\n", call, path,
               strerror(err));
    return 1;
}

/* key_of: key number I, fixed width so every lookup hashes as many
 * bytes; value_of: its 8-byte value. */
static void key_of(char key[KEYLEN], unsigned i)
{
    char tmp[KEYLEN + 1];

    snprintf(tmp, sizeof tmp, "k%011u", i);
    memcpy(key, tmp, KEYLEN);
}

static uint64_t value_of(unsigned i)
{
    return ((uint64_t)i + 1) * 0x9e3779b97f4a7c15u;
}

/* build: the database of keys 0..nkeys-1, written and fsync'd. */
static int build(struct db *d)
{
    struct cdb_make m;
    struct stat st;
    char key[KEYLEN];
    int rc = 0;

    if (cdb_make_start(&m, d->fd) != 0)
        return fail("cdb_make_start", d->path, errno);
    for (unsigned i = 0; i < d->nkeys && rc == 0; i++) {
        uint64_t v = value_of(i);
        key_of(key, i);
        if (cdb_make_add(&m, key, KEYLEN, &v, sizeof v) != 0)
            rc = fail("cdb_make_add", d->path, errno);
    }
    if (rc == 0 && cdb_make_finish(&m) != 0)
        rc = fail("cdb_make_finish", d->path, errno);
    if (rc == 0 && fsync(d->fd) != 0)
        rc = fail("fsync", d->path, errno);
    if (rc == 0 && fstat(d->fd, &st) != 0)
        rc = fail("fstat", d->path, errno);
    d->bytes = rc == 0 ? (uint64_t)st.st_size : 0;
    return rc;
}

static void pick(struct db *d, unsigned n, uint64_t *state)
{
    for (unsigned k = 0; k < n; k++) {
        d->index[k] = (unsigned)(bench_random(state) % d->nkeys);
        key_of(d->keys[k], d->index[k]);
    }
}

/* one: look key K up with method M (through C, a mapping, for M_MMAP);
 * 0 when it is found with its value, else 1. */
static int one(const struct db *d, struct cdb *c, enum method m, unsigned k)
{
    const void *p;
    uint64_t v = 0;
    unsigned len = 0;

    if (m == M_MMAP) {
        if (cdb_find(c, d->keys[k], KEYLEN) <= 0 ||
            (len = cdb_datalen(c)) != sizeof v ||
            (p = cdb_getdata(c)) == NULL)
            return 1;
        memcpy(&v, p, sizeof v);
    } else if (cdb_seek(d->fd, d->keys[k], KEYLEN, &len) <= 0 ||
               len != sizeof v || cdb_bread(d->fd, &v, sizeof v) != 0) {
        return 1;
    }
    return v != value_of(d->index[k]);
}

static int wrong(const struct db *d, enum method m, unsigned k)
{
    bench_warn(EXP ": %s lookup of %.*s in %s: not found, "
               "unreadable or a wrong value\n", method_name[m], KEYLEN,
               d->keys[k], d->path);
    return 1;
}

/* lookups: the first N keys with method M, the database cached; *NS their
 * time.  The mapping is made afresh (cdb_init), as by a reader that opens
 * the database; its faults, a few per megabyte with fault-around, spread
 * over the batch.  Returns 0, or 1 after a message. */
static int lookups(const struct db *d, enum method m, unsigned n,
                   uint64_t *ns)
{
    struct cdb c;
    uint64_t t0;
    unsigned k;

    if (m == M_MMAP && cdb_init(&c, d->fd) != 0)
        return fail("cdb_init", d->path, errno);
    t0 = sp_now_ns();
    for (k = 0; k < n && one(d, &c, m, k) == 0; k++)
        continue;
    *ns = sp_now_ns() - t0;
    if (m == M_MMAP)
        cdb_free(&c);
    return k < n ? wrong(d, m, k) : 0;
}

/* cold_lookups: the first N keys with method M, each from a database
 * evicted just before it (untimed).  For M_MMAP the time includes
 * cdb_init and cdb_free around the lookup: cdb_init reads the database's
 * first page, which the lookup needs too.  *NS is the lookups' time.
 * Returns 0, -1 when the database cannot be evicted, or 1 after a
 * message. */
static int cold_lookups(const struct db *d, enum method m, unsigned n,
                        uint64_t *ns)
{
    struct cdb c;

    *ns = 0;
    for (unsigned k = 0; k < n; k++) {
        uint64_t t0;
        int bad;

        if (bench_evict(d->path) != 0)
            return -1;
        t0 = sp_now_ns();
        if (m == M_MMAP && cdb_init(&c, d->fd) != 0)
            return fail("cdb_init", d->path, errno);
        bad = one(d, &c, m, k);
        if (m == M_MMAP)
            cdb_free(&c);
        *ns += sp_now_ns() - t0;
        if (bad)
            return wrong(d, m, k);
    }
    return 0;
}

static void rows(FILE *out, const struct db *d, const char *kase,
                 const double ns[2])
{
    static const double seed[2] = {SEED_SEEK, SEED_SEEK / SEED_RATIO};

    for (int m = 0; m < 2; m++) {
        struct bench_row r = {EXP, kase, method_name[m], "latency", "ns/op",
                              d->nkeys, ns[m], seed[m], 1, d->bytes};
        bench_print(out, &r);
    }
    struct bench_row x = {EXP, kase, "seek/mmap", "ratio", "x", d->nkeys,
                          ns[M_SEEK] / ns[M_MMAP], SEED_RATIO, 1, d->bytes};
    bench_print(out, &x);
}

/* batch: REPS rounds of N lookups each way, each lookup from an evicted
 * database when COLD; one row per method and round. */
static int batch(struct db *d, FILE *out, int cold, unsigned n, int reps,
                 uint64_t *state)
{
    for (int r = 0; r < reps; r++) {
        double per[2];

        pick(d, n, state);
        for (int j = 0; j < 2; j++) {
            enum method m = (enum method)((r + j) % 2);
            uint64_t ns;
            int rc = cold ? cold_lookups(d, m, n, &ns)
                          : lookups(d, m, n, &ns);

            if (rc < 0) {
                bench_warn(EXP ": cannot evict %s (tmpfs?): "
                           "no cold rows\n", d->path);
                return 0;
            }
            if (rc != 0)
                return 1;
            per[m] = (double)ns / n;
        }
        rows(out, d, cold ? "cold" : "warm", per);
    }
    return 0;
}

static int run(const struct bench_opts *o, FILE *out, struct db *d)
{
    uint64_t state = o->seed, sum, ns;
    unsigned cold_n = o->quick ? QUICK_COLD : COLD;
    int err, reps = bench_reps(o, 1);

    if (build(d) != 0)
        return 1;
    /* cached by a read, as in the other experiments */
    bench_evict(d->path);
    if ((err = bench_file_sum(d->path, &sum)) != 0)
        return fail("read", d->path, err);
    /* an untimed round of every key each way: any lookup that fails, fails
     * here */
    pick(d, d->nlookups, &state);
    if (lookups(d, M_MMAP, d->nlookups, &ns) != 0 ||
        lookups(d, M_SEEK, d->nlookups, &ns) != 0)
        return 1;
    if (batch(d, out, 0, d->nlookups, reps, &state) != 0)
        return 1;
    return batch(d, out, 1, cold_n, reps, &state);
}

int exp_cdb(const struct bench_opts *o, FILE *out)
{
    char path[PATH_MAX], name[64];
    struct db d = {.path = path, .fd = -1};
    int err, rc = 1;

    d.nkeys = o->quick ? QUICK_NKEYS : NKEYS;
    d.nlookups = d.nkeys;
    snprintf(name, sizeof name, "iobench-cdb-%ld.cdb", (long)getpid());
    bench_path(path, o, name);
    d.keys = malloc((size_t)d.nlookups * sizeof *d.keys);
    d.index = malloc((size_t)d.nlookups * sizeof *d.index);
    if (d.keys == NULL || d.index == NULL)
        fail("allocating keys for", path, ENOMEM);
    else if ((d.fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
                          0644)) < 0)
        fail("open", path, errno);
    else
        rc = run(o, out, &d);
    if (d.fd >= 0 && close(d.fd) != 0 && rc == 0)
        rc = fail("close", path, errno);
    if ((err = bench_remove(o, path)) != 0 && rc == 0)
        rc = fail("unlink", path, err);
    free(d.keys);
    free(d.index);
    return rc;
}
