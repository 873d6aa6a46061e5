/* exp_syscall_bw.c: syscall-vs-mmap's test of seed 000's explanation, that
 * read() loses because the kernel's copy to user space forgoes the vector
 * instructions a user-space memcpy() uses.  Over the same cached bytes, at
 * each of the experiment's block sizes, the copy bandwidth of:
 *   read         pread() into one reused buffer: the kernel's copy, plus a
 *                system call a block
 *   mmap_memcpy  memcpy() into that buffer from a mapping of the file,
 *                faulted in first: the user copy from the same page cache
 *   anon_memcpy  memcpy() into it from an anonymous buffer holding the
 *                same bytes: the user copy from ordinary memory
 *   mmap_movsb   (x86-64 only) the mapping's bytes copied with "rep
 *                movsb", the string instruction x86-64 kernels copy to
 *                user space with on CPUs that make it fast: the kernel's
 *                way of copying, in user space, without a system call
 * If the explanation holds, read stays below mmap_memcpy even at the
 * largest blocks, where the system calls' cost is spread thinnest, and
 * mmap_movsb sits with read, not with mmap_memcpy.
 *
 * The span copied is the file's first SPAN_MAX bytes at most (in whole
 * largest blocks), large enough to leave the CPU caches, small enough for
 * the anonymous copy to fit beside a 4 GB file's page cache.  Each block
 * copied is checked (its first and last 8 bytes against the source), and
 * the anonymous copy against the mapping once. */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sys.h"
#include "timing.h"

#define EXP "syscall-vs-mmap"
#define LARGEST ((size_t)1 << 20)
#define SPAN_MAX ((size_t)256 << 20)

static const size_t block_sizes[] = {4096, 8192, 16384, 65536, LARGEST};
#define NBLOCK (sizeof block_sizes / sizeof block_sizes[0])

#if defined(__x86_64__)
enum method { M_READ, M_MAP, M_ANON, M_MOVSB, NMETHOD };
#else
enum method { M_READ, M_MAP, M_ANON, NMETHOD, M_MOVSB };
#endif
static const char *const method_name[] = {"read", "mmap_memcpy",
                                          "anon_memcpy", "mmap_movsb"};

struct span {
    int fd;
    const unsigned char *map;   /* the file's first len bytes, faulted in */
    unsigned char *anon;        /* a copy of them */
    unsigned char *buf;         /* LARGEST bytes */
    size_t len;
    uint64_t file_bytes;        /* the whole file's size */
};

static int fail(const char *call, const char *path, int err)
{
    bench_warn(EXP ": %s %s: %s\n", call, path,
               strerror(err));
    return 1;
}

/* same: the copied block at BUF agrees with its source SRC at both ends. */
static int same(const unsigned char *buf, const unsigned char *src,
                size_t len)
{
    return memcmp(buf, src, 8) == 0 &&
           memcmp(buf + len - 8, src + len - 8, 8) == 0;
}

/* movsb: LEN bytes from SRC to DST with "rep movsb" (x86-64; never called
 * elsewhere, where M_MOVSB is past NMETHOD). */
static void movsb(void *dst, const void *src, size_t len)
{
#if defined(__x86_64__)
    __asm__ __volatile__("rep movsb"
                         : "+D"(dst), "+S"(src), "+c"(len)
                         :
                         : "memory");
#else
    memcpy(dst, src, len);
#endif
}

/* copy_pass: copy the span in blocks of BS with method M; *NS is the
 * pass's time.  Returns 0, an errno value, or -1 when a block differs. */
static int copy_pass(const struct span *s, enum method m, size_t bs,
                     uint64_t *ns)
{
    const unsigned char *src = m == M_ANON ? s->anon : s->map;
    uint64_t t0 = sp_now_ns();
    int bad = 0;

    for (size_t off = 0; off < s->len; off += bs) {
        if (m == M_READ) {
            size_t got;
            int err = sp_sys_pread_full(s->fd, s->buf, bs, (off_t)off, &got);
            if (err != 0 || got != bs)
                return err != 0 ? err : EIO;
        } else if (m == M_MOVSB) {
            movsb(s->buf, src + off, bs);
        } else {
            memcpy(s->buf, src + off, bs);
            __asm__ __volatile__("" : : "r"(s->buf) : "memory");
        }
        /* against the copy's own source: the bytes just read, still in
         * the CPU caches (read's source is the mapping's pages) */
        bad |= !same(s->buf, src + off, bs);
    }
    *ns = sp_now_ns() - t0;
    return bad ? -1 : 0;
}

static int measure(const struct span *s, FILE *out, const char *path,
                   int reps)
{
    for (size_t b = 0; b < NBLOCK; b++) {
        for (int r = 0; r < reps; r++) {
            double gbs[NMETHOD];

            for (int j = 0; j < NMETHOD; j++) {
                enum method m = (enum method)((b + (size_t)r + (size_t)j) %
                                              NMETHOD);
                uint64_t ns = 0;
                int err = copy_pass(s, m, block_sizes[b], &ns);

                if (err > 0)
                    return fail("pread", path, err);
                if (err < 0) {
                    bench_warn(EXP ": bandwidth %s: a block "
                               "differs from %s\n", method_name[m], path);
                    return 1;
                }
                gbs[m] = (double)s->len / (double)(ns > 0 ? ns : 1);
            }
            for (int m = 0; m < NMETHOD; m++) {
                struct bench_row row = {EXP, "bandwidth", method_name[m],
                                        "bandwidth", "GB/s",
                                        (double)block_sizes[b], gbs[m], NAN,
                                        1, s->file_bytes};
                bench_print(out, &row);
            }
            struct bench_row ratio = {EXP, "bandwidth", "mmap_memcpy/read",
                                      "ratio", "x", (double)block_sizes[b],
                                      gbs[M_MAP] / gbs[M_READ], NAN, 1,
                                      s->file_bytes};
            bench_print(out, &ratio);
        }
    }
    return 0;
}

int exp_syscall_bandwidth(const struct bench_opts *o, FILE *out, int fd,
                          const char *path, uint64_t size)
{
    struct span s = {.fd = fd, .file_bytes = size};
    void *map = MAP_FAILED, *anon = NULL, *buf = NULL;
    volatile unsigned char sink = 0;
    int rc = 1;

    s.len = (size_t)(size < SPAN_MAX ? size : SPAN_MAX) / LARGEST * LARGEST;
    if (s.len == 0) {
        bench_warn(EXP ": file under %zu bytes: no "
                   "bandwidth rows\n", LARGEST);
        return 0;
    }
    map = mmap(NULL, s.len, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return fail("mmap", path, errno);
    if (posix_memalign(&anon, 4096, s.len) != 0 ||
        posix_memalign(&buf, 4096, LARGEST) != 0) {
        fail("allocating buffers for", path, ENOMEM);
        goto out;
    }
    s.map = map;
    s.anon = anon;
    s.buf = buf;
    /* every page faulted in before any pass: no pass pays for faults */
    memcpy(s.anon, s.map, s.len);
    for (size_t off = 0; off < s.len; off += 4096)
        sink = (unsigned char)(sink + s.map[off]);
    if (memcmp(s.anon, s.map, s.len) != 0) {
        bench_warn(EXP ": bandwidth: the anonymous copy "
                   "of %s differs\n", path);
        goto out;
    }
    memset(s.buf, 0, LARGEST);
    rc = measure(&s, out, path, bench_reps(o, 1));
out:
    free(buf);
    free(anon);
    munmap(map, s.len);
    return rc;
}
