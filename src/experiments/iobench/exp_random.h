/* exp_random.h: what the random-access experiment's two files share:
 * exp_random.c (the file, the reads, the order of the cases) and
 * exp_random_write.c (the writes).  Internal to iobench. */
#ifndef SP_EXP_RANDOM_H
#define SP_EXP_RANDOM_H

#include <stdint.h>
#include <stdio.h>

#define EXP "random-access"

/* What each write phase stores at OFF: a function of the offset and the
 * phase, so repeated offsets store the same value and every phase's
 * values differ from the file's and from every other phase's. */
enum tag {
    TAG_MMAP_RESIDENT = 1, TAG_PWRITE_RESIDENT, TAG_FWRITE_RESIDENT,
    TAG_MMAP_COLD, TAG_PWRITE_COLD, TAG_FWRITE_COLD
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

static inline uint64_t ra_value_at(uint64_t off, enum tag tag)
{
    return (off + (uint64_t)tag) * 0x9e3779b97f4a7c15u ^
           ((uint64_t)tag << 56);
}

/* ra_fail: one line on stderr; returns 1. */
int ra_fail(const char *call, const char *path, int err);

/* ra_pread8: the 8 bytes at OFF of FD into *V; 0 or an errno value. */
int ra_pread8(int fd, uint64_t off, uint64_t *v);

/* ra_map, ra_unmap: a shared mapping of the whole file with PROT into
 * c->map, and its removal; 0, or 1 after a message. */
int ra_map(struct ctx *c, int prot);
int ra_unmap(struct ctx *c);

/* ra_row: a latency row (ns/op) of case KASE over C's file; ra_ratio: a
 * ratio row. */
void ra_row(const struct ctx *c, FILE *out, const char *kase,
            const char *method, double ns, double seed);
void ra_ratio(const struct ctx *c, FILE *out, const char *kase,
              const char *method, double x, double seed);

/* ra_random_offsets: c->offs[0..n) = N random 8-aligned offsets of whole
 * words of the file. */
void ra_random_offsets(struct ctx *c, uint64_t n);

/* ra_per_op: NS over N operations. */
double ra_per_op(uint64_t ns, uint64_t n);

/* The write cases (exp_random_write.c): rows on OUT, 0 or 1. */
int ra_write_resident(struct ctx *c, FILE *out);
int ra_write_nonresident(struct ctx *c, FILE *out);

#endif
