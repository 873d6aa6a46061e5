/* exp_zero.c: the zero-page experiment (seed 001).
 *
 * How fast can a program get back a block of zero bytes it already owns?
 * The seed mapped 512 Ki blocks of 4 KiB, one anonymous private mapping
 * each, touched one byte of each (the set-up), then timed four rounds of
 * two loops: re-map every block over itself with mmap(MAP_FIXED |
 * MAP_ANONYMOUS | MAP_PRIVATE) and write one zero byte into it, then
 * memset every block to zero.  On Solaris 11 the set-up took 11.1 s, a
 * re-map round about 15.1 s and a memset round about 1.8 s; on a Linux VM
 * 2.6 s, 2.9 s and 0.65 s.  The seed column of the set-up and of "round"
 * holds the Linux figures: like for like with a run here.
 *
 * The seed's second run, on Solaris only, removed the byte write after the
 * re-map and kept everything else: the re-map round fell to about 7.5 s
 * (the old page is torn down, no new one is made) and the memset round
 * that follows it rose to about 10.4 s, because memset now takes a page
 * fault and a kernel page clear for every block.  "round-notouch"
 * reproduces that order: the untouched re-map, then straight away the
 * memset that pays for the faults; its seed column holds those Solaris
 * figures, the only ones there are.
 *
 * Linux adds a third way the seed left out on Solaris: madvise(
 * MADV_DONTNEED) on a private anonymous mapping guarantees zero-filled
 * pages on the next access.
 *
 * Before every timed loop each block is filled with a nonzero byte (not
 * timed) so that a zero block afterwards proves the loop zeroed it; the
 * touched byte is written as zero, so the whole block is checked.  The
 * untouched re-map cannot be read without faulting the pages in (which
 * would move the seed's faults out of its memset), so it is checked with
 * mincore(): no block may keep a resident page, and a fresh anonymous page
 * that is not resident reads as zero (a page the re-map replaced has no
 * swap copy either).  The memset after it then checks the bytes.
 *
 * With o->reps, the whole run (set-up and rounds) repeats, one row each. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"
#include "timing.h"

#define BLOCK 4096
#define ROUNDS 4
#define DEFAULT_BLOCKS (512u * 1024u)
#define QUICK_BLOCKS 4096u
#define DIRTY 0xa5

/* The seed's figures, round by round: its Linux VM's for the set-up and
 * the rounds with the byte write, Solaris's (the only ones) for those
 * without. */
static const double seed_setup = 2.567396;
static const double seed_mmap[ROUNDS] = {2.971756, 3.149629, 2.800389,
                                         2.915774};
static const double seed_memset[ROUNDS] = {0.654947, 0.658858, 0.647367,
                                           0.646539};
static const double seed_mmap_nt[ROUNDS] = {7.524939, 7.512086, 7.457512,
                                            7.420942};
static const double seed_memset_nt[ROUNDS] = {10.418480, 10.406675,
                                              10.296231, 10.414861};

static const unsigned char zeros[BLOCK];

struct blocks {
    char **p;   /* one mapping of BLOCK bytes each, NULL once unmapped */
    size_t n;
};

static int fail(const char *call, int err)
{
    bench_warn("zero-page: %s: %s\n", call, strerror(err));
    return 1;
}

static void row(FILE *out, const char *kase, int param, const char *method,
                const char *metric, double value, const char *unit,
                double seed, int checked)
{
    struct bench_row r = {
        .experiment = "zero-page", .kase = kase, .param = param,
        .method = method, .metric = metric, .value = value, .unit = unit,
        .seed = seed, .checked = checked,
    };
    bench_print(out, &r);
}

static double secs(uint64_t t0)
{
    return (double)(sp_now_ns() - t0) / 1e9;
}

static void dirty(const struct blocks *b)
{
    for (size_t i = 0; i < b->n; i++)
        memset(b->p[i], DIRTY, BLOCK);
}

static int all_zero(const struct blocks *b)
{
    for (size_t i = 0; i < b->n; i++)
        if (memcmp(b->p[i], zeros, BLOCK) != 0)
            return 0;
    return 1;
}

/* Untimed check of the untouched re-map: no block has a resident page. */
static int none_resident(const struct blocks *b, int *err)
{
    for (size_t i = 0; i < b->n; i++) {
        unsigned char v = 0;
        if (mincore(b->p[i], BLOCK, &v) != 0) {
            *err = errno;
            return 0;
        }
        if (v & 1)
            return 0;
    }
    return 1;
}

/* The seed's set-up: one mapping per block, one byte written in each.
 * Neighbouring anonymous mappings merge into one VMA on Linux, so half a
 * million of them stay under vm.max_map_count. */
static int setup(struct blocks *b)
{
    for (size_t i = 0; i < b->n; i++) {
        void *p = mmap(NULL, BLOCK, PROT_READ | PROT_WRITE,
                       MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
        if (p == MAP_FAILED)
            return errno;
        b->p[i] = p;
        b->p[i][i % BLOCK] = (char)i;
    }
    return 0;
}

static int setup_ok(const struct blocks *b)
{
    for (size_t i = 0; i < b->n; i++) {
        char *p = b->p[i];
        size_t at = i % BLOCK;
        if (p[at] != (char)i || memcmp(p, zeros, at) != 0 ||
            memcmp(p + at + 1, zeros, BLOCK - at - 1) != 0)
            return 0;
    }
    return 1;
}

/* The timed loops: each returns 0 or an errno value. */
static int remap(struct blocks *b, int touch)
{
    for (size_t i = 0; i < b->n; i++) {
        void *p = mmap(b->p[i], BLOCK, PROT_READ | PROT_WRITE,
                       MAP_FIXED | MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
        if (p == MAP_FAILED)
            return errno;
        b->p[i] = p;
        if (touch)
            b->p[i][i % BLOCK] = 0;
    }
    return 0;
}

static void zero_memset(struct blocks *b)
{
    for (size_t i = 0; i < b->n; i++)
        memset(b->p[i], 0, BLOCK);
}

static int zero_madvise(struct blocks *b)
{
    for (size_t i = 0; i < b->n; i++) {
        if (madvise(b->p[i], BLOCK, MADV_DONTNEED) != 0)
            return errno;
        b->p[i][i % BLOCK] = 0;
    }
    return 0;
}

static void release(struct blocks *b)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->p[i] != NULL)
            munmap(b->p[i], BLOCK);
    free(b->p);
}

static int check_failed(const char *what, int round)
{
    bench_warn("zero-page: %s left a nonzero block in round "
               "%d\n", what, round);
    return 1;
}

static int rounds_touch(struct blocks *b, FILE *out)
{
    for (int r = 1; r <= ROUNDS; r++) {
        double t_mmap, t_memset, t_madv;
        uint64_t t0;
        int err;

        dirty(b);
        t0 = sp_now_ns();
        err = remap(b, 1);
        t_mmap = secs(t0);
        if (err != 0)
            return fail("mmap(MAP_FIXED)", err);
        if (!all_zero(b))
            return check_failed("mmap_fixed", r);
        row(out, "round", r, "mmap_fixed", "time", t_mmap, "s",
            seed_mmap[r - 1], 1);

        dirty(b);
        t0 = sp_now_ns();
        zero_memset(b);
        t_memset = secs(t0);
        if (!all_zero(b))
            return check_failed("memset", r);
        row(out, "round", r, "memset", "time", t_memset, "s",
            seed_memset[r - 1], 1);

        dirty(b);
        t0 = sp_now_ns();
        err = zero_madvise(b);
        t_madv = secs(t0);
        if (err != 0)
            return fail("madvise(MADV_DONTNEED)", err);
        if (!all_zero(b))
            return check_failed("madvise", r);
        row(out, "round", r, "madvise", "time", t_madv, "s", NAN, 1);

        row(out, "round", r, "mmap_fixed/memset", "ratio",
            t_mmap / t_memset, "x", seed_mmap[r - 1] / seed_memset[r - 1], 1);
        row(out, "round", r, "madvise/memset", "ratio", t_madv / t_memset,
            "x", NAN, 1);
    }
    return 0;
}

static int rounds_notouch(struct blocks *b, FILE *out)
{
    for (int r = 1; r <= ROUNDS; r++) {
        double t_mmap, t_memset;
        uint64_t t0;
        int err = 0;

        dirty(b);
        t0 = sp_now_ns();
        err = remap(b, 0);
        t_mmap = secs(t0);
        if (err != 0)
            return fail("mmap(MAP_FIXED)", err);
        if (!none_resident(b, &err))
            return err != 0 ? fail("mincore", err)
                            : check_failed("untouched mmap_fixed", r);
        row(out, "round-notouch", r, "mmap_fixed", "time", t_mmap, "s",
            seed_mmap_nt[r - 1], 1);

        /* no dirtying here: as in the seed, this memset takes the page
         * faults the re-map left behind */
        t0 = sp_now_ns();
        zero_memset(b);
        t_memset = secs(t0);
        if (!all_zero(b))
            return check_failed("memset after the untouched re-map", r);
        row(out, "round-notouch", r, "memset", "time", t_memset, "s",
            seed_memset_nt[r - 1], 1);

        row(out, "round-notouch", r, "mmap_fixed/memset", "ratio",
            t_mmap / t_memset, "x",
            seed_mmap_nt[r - 1] / seed_memset_nt[r - 1], 1);
    }
    return 0;
}

/* once: the seed's whole run over N blocks: set-up, then both kinds of
 * round. */
static int once(size_t n, FILE *out)
{
    struct blocks b = {NULL, n};
    uint64_t t0;
    double t_setup;
    int err, rc;

    b.p = calloc(b.n, sizeof *b.p);
    if (b.p == NULL)
        return fail("calloc", ENOMEM);

    t0 = sp_now_ns();
    err = setup(&b);
    t_setup = secs(t0);
    if (err != 0) {
        release(&b);
        return fail("mmap", err);
    }
    if (!setup_ok(&b)) {
        release(&b);
        bench_warn("zero-page: a fresh mapping was not zero\n");
        return 1;
    }
    row(out, "setup", 0, "setup", "time", t_setup, "s", seed_setup, 1);

    rc = rounds_touch(&b, out);
    if (rc == 0)
        rc = rounds_notouch(&b, out);
    release(&b);
    return rc;
}

int exp_zero_page(const struct bench_opts *o, FILE *out)
{
    uint64_t n = o->blocks != 0 ? o->blocks
               : o->quick       ? QUICK_BLOCKS
                                : DEFAULT_BLOCKS;
    int rc = 0;

    if (n > SIZE_MAX / BLOCK || n > SIZE_MAX / sizeof(char *)) {
        bench_warn("zero-page: %llu blocks are too many\n",
                   (unsigned long long)n);
        return 1;
    }
    /* each repeat is a whole run, from fresh mappings */
    for (int r = bench_reps(o, 1); r > 0 && rc == 0; r--)
        rc = once((size_t)n, out);
    return rc;
}
