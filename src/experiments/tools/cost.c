/* The cost probes of the copy, the faults and the releases (cost.h); the
 * mappings' probes, the calls' and the kernels' are in cost_map.c, those
 * needing a process or threads of their own in cost_run.c. */
#include "cost.h"
#include "cost_probe.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sys.h"

/* LARGE_WRITE: the write size that puts a file in the page cache in large
 * folios (what run_experiments.sh --page-cache large does). */
#define LARGE_WRITE ((size_t)8 << 20)
#define HUGE ((size_t)2 << 20)
#define HUGE_REGIONS 2


sp_status sp_cost_read_all(int fd, unsigned char *buf, size_t len)
{
    size_t got;
    sp_status st;

    if (lseek(fd, 0, SEEK_SET) < 0)
        return errno;
    st = sp_sys_read_full(fd, buf, len, &got);
    return st == SP_OK && got < len ? EIO : st;
}

/* make_file: an unlinked file of the SIZE bytes at SRC in DIR, written
 * in writes of BLOCK bytes and written back; its fd in *FD. */
static sp_status make_file(const char *dir, size_t size, size_t block,
                           const unsigned char *src, int *fd)
{
    size_t path_len = strlen(dir) + sizeof "/spcost.XXXXXX";
    char *path = malloc(path_len);
    sp_status st = SP_OK;

    if (path == NULL)
        return ENOMEM;
    snprintf(path, path_len, "%s/spcost.XXXXXX", dir);
    *fd = mkstemp(path);
    if (*fd < 0) {
        st = errno;
        free(path);
        return st;
    }
    (void)unlink(path);
    free(path);
    for (size_t at = 0; st == SP_OK && at < size; at += block) {
        size_t n = size - at < block ? size - at : block;

        st = sp_sys_write_full(*fd, src + at, n);
    }
    if (st == SP_OK && fsync(*fd) != 0)
        st = errno;
    if (st != SP_OK) {
        close(*fd);
        *fd = -1;
    }
    return st;
}

sp_status sp_cost_env_open(struct sp_cost_env *env, const char *dir,
                           size_t size)
{
    sp_status st;

    memset(env, 0, sizeof *env);
    env->fd_large = env->fd_small = env->fd_out = -1;
    env->size = size;
    env->dir = dir;
    env->page = (size_t)sysconf(_SC_PAGESIZE);
    /* A fixed threshold: glibc would otherwise raise it after the first
     * free() of a large block, and serve the next from the heap; each
     * scaleppm process mallocs its raster once, as a fresh mapping. */
    (void)mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    env->buf = malloc(size);
    env->buf2 = malloc(size);
    if (env->buf == NULL || env->buf2 == NULL) {
        sp_cost_env_close(env);
        return ENOMEM;
    }
    for (size_t i = 0; i < size; i++)
        env->buf[i] = (unsigned char)(i * 131 + 7);
    memset(env->buf2, 1, size);
    st = make_file(dir, size, LARGE_WRITE, env->buf, &env->fd_large);
    if (st == SP_OK)
        st = make_file(dir, size, 4096, env->buf, &env->fd_small);
    if (st == SP_OK)
        st = make_file(dir, 0, 4096, env->buf, &env->fd_out);
    if (st != SP_OK)
        sp_cost_env_close(env);
    return st;
}

void sp_cost_env_close(struct sp_cost_env *env)
{
    if (env->fd_large >= 0)
        close(env->fd_large);
    if (env->fd_small >= 0)
        close(env->fd_small);
    if (env->fd_out >= 0)
        close(env->fd_out);
    free(env->buf);
    free(env->buf2);
    memset(env, 0, sizeof *env);
    env->fd_large = env->fd_small = env->fd_out = -1;
}

/* read(): of the cached file into a fresh malloc'd buffer (each page
 * faulted in by the copy, as scaleppm's read path does), then into one
 * already touched; ns a byte. */
static sp_status probe_read(const struct sp_cost_env *env, double *out)
{
    unsigned char *fresh = malloc(env->size);
    uint64_t t0, t1, t2;
    sp_status st;

    if (fresh == NULL)
        return ENOMEM;
    t0 = sp_now_ns();
    st = sp_cost_read_all(env->fd_large, fresh, env->size);
    t1 = sp_now_ns();
    free(fresh);
    if (st == SP_OK)
        st = sp_cost_read_all(env->fd_large, env->buf2, env->size);
    t2 = sp_now_ns();
    out[0] = (double)(t1 - t0) / (double)env->size;
    out[1] = (double)(t2 - t1) / (double)env->size;
    return st;
}

/* write() of the buffer into a file emptied first (ftruncate), as
 * scaleppm writes its output into a new one: ns a byte. */
static sp_status probe_write(const struct sp_cost_env *env, double *out)
{
    uint64_t t0;
    sp_status st;

    if (ftruncate(env->fd_out, 0) != 0 || lseek(env->fd_out, 0, SEEK_SET) < 0)
        return errno;
    t0 = sp_now_ns();
    st = sp_sys_write_full(env->fd_out, env->buf, env->size);
    out[0] = (double)(sp_now_ns() - t0) / (double)env->size;
    return st;
}

/* The copy goes through a volatile pointer so that the compiler cannot
 * drop a copy it sees unread. */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

static sp_status probe_memcpy(const struct sp_cost_env *env, double *out)
{
    uint64_t t0 = sp_now_ns();

    copy_fn(env->buf2, env->buf, env->size);
    out[0] = (double)(sp_now_ns() - t0) / (double)env->size;
    return SP_OK;
}

/* A fresh anonymous page, touched by a write: ns a fault, base pages. */
static sp_status probe_anon_4k(const struct sp_cost_env *env, double *out)
{
    volatile unsigned char *m;
    long f0, faults;
    uint64_t t0, dt;

    m = mmap(NULL, env->size, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return errno;
    (void)madvise((void *)m, env->size, MADV_NOHUGEPAGE);
    f0 = sp_minflt();
    t0 = sp_now_ns();
    for (size_t i = 0; i < env->size; i += env->page)
        m[i] = 1;
    dt = sp_now_ns() - t0;
    faults = sp_minflt() - f0;
    munmap((void *)m, env->size);
    out[0] = (double)dt / (double)(faults > 0 ? faults : 1);
    return SP_OK;
}

/* HUGE_REGIONS aligned 2 MiB regions advised MADV_HUGEPAGE, every base
 * page touched: ns a region (one fault where the kernel grants a huge
 * page, 512 otherwise), and the share of regions granted one. */
static sp_status probe_anon_2m(const struct sp_cost_env *env, double *out)
{
    size_t len = HUGE * (HUGE_REGIONS + 1), pages = HUGE / env->page;
    unsigned char *m;
    volatile unsigned char *a;
    long f0, faults, small;
    uint64_t t0, dt;

    m = mmap(NULL, len, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return errno;
    a = (unsigned char *)(((uintptr_t)m + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
    (void)madvise((void *)a, HUGE * HUGE_REGIONS, MADV_HUGEPAGE);
    f0 = sp_minflt();
    t0 = sp_now_ns();
    for (size_t i = 0; i < HUGE * HUGE_REGIONS; i += env->page)
        a[i] = 1;
    dt = sp_now_ns() - t0;
    faults = sp_minflt() - f0;
    munmap(m, len);
    /* A region not granted takes a fault a base page. */
    small = (faults - HUGE_REGIONS) / (long)(pages - 1);
    out[0] = (double)dt / HUGE_REGIONS;
    out[1] = (double)(HUGE_REGIONS - small) / HUGE_REGIONS;
    return SP_OK;
}

/* madvise(MADV_DONTNEED) of touched anonymous base pages, and free() of a
 * touched malloc'd block (a mapping of its own: munmap): ns a page. */
static sp_status probe_anon_release(const struct sp_cost_env *env,
                                    double *out)
{
    size_t pages = env->size / env->page;
    unsigned char *m, *b;
    uint64_t t0, t1;

    m = mmap(NULL, env->size, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return errno;
    (void)madvise(m, env->size, MADV_NOHUGEPAGE);
    memset(m, 1, env->size);
    t0 = sp_now_ns();
    (void)madvise(m, env->size, MADV_DONTNEED);
    t1 = sp_now_ns();
    munmap(m, env->size);
    out[0] = (double)(t1 - t0) / (double)pages;
    b = malloc(env->size);
    if (b == NULL)
        return ENOMEM;
    memset(b, 1, env->size);
    t0 = sp_now_ns();
    free(b);
    out[1] = (double)(sp_now_ns() - t0) / (double)pages;
    return SP_OK;
}

const struct sp_cost_probe sp_cost_probes[] = {
    {{"read_fresh", "read_touched"}, {"ns/byte", "ns/byte"}, probe_read},
    {{"read_process", "anon_fault_process", "free_process", "first_malloc",
      "first_malloc_faults", "load_open_first", "load_map_first",
      "release_unmap_first"},
     {"ns/byte", "ns/fault", "ns/page", "ns", "faults", "ns", "ns", "ns"},
     sp_cost_process},
    {{"cpus"}, {"cpus"}, sp_cost_cpus},
    {{"wake_remote", "switch_local"}, {"ns/wake", "ns/switch"},
     sp_cost_wake},
    {{"write_cached"}, {"ns/byte"}, probe_write},
    {{"memcpy"}, {"ns/byte"}, probe_memcpy},
    {{"anon_fault_4k"}, {"ns/fault"}, probe_anon_4k},
    {{"anon_fault_2m", "thp_granted"}, {"ns/region", "share"},
     probe_anon_2m},
    {{"madvise_anon", "free_large"}, {"ns/page", "ns/page"},
     probe_anon_release},
    {{"file_fault_large", "file_pages_per_fault_large",
      "file_fault_page_large"},
     {"ns/fault", "pages/fault", "ns/page"}, sp_cost_file_fault_large},
    {{"file_fault_small", "file_pages_per_fault_small",
      "file_fault_page_small"},
     {"ns/fault", "pages/fault", "ns/page"}, sp_cost_file_fault_small},
    {{"madvise_file_large", "madvise_file_small"}, {"ns/page", "ns/page"},
     sp_cost_madvise_file},
    {{"madvise_call", "madvise_call_shared"}, {"ns/call", "ns/call"},
     sp_cost_madvise_call},
    {{"syscall", "pread1", "mmap_munmap"},
     {"ns/call", "ns/call", "ns/call"}, sp_cost_calls},
    {{"thread"}, {"ns/thread"}, sp_cost_thread},
    {{"reduce2_px", "reduce8_px"}, {"ns/pixel", "ns/pixel"},
     sp_cost_reduce},
    {{"enlarge2_byte", "enlarge8_byte"}, {"ns/byte", "ns/byte"},
     sp_cost_enlarge},
    {{"gate_t10"}, {"ns"}, sp_cost_gate},
    {{"reduce2_px_t10", "reduce8_px_t10"}, {"ns/pixel", "ns/pixel"},
     sp_cost_reduce_par},
    {{"enlarge2_byte_t10", "enlarge8_byte_t10"}, {"ns/byte", "ns/byte"},
     sp_cost_enlarge_par},
    {{"file_fault_large_t10", "file_fault_small_t10"},
     {"ns/fault", "ns/fault"}, sp_cost_file_fault_par},
    {{"anon_fault_2m_t10"}, {"ns/region"}, sp_cost_anon_par},
    {{"anon_fault_4k_t10"}, {"ns/fault"}, sp_cost_anon_4k_par},
    {{"enlarge2_byte_writing", "enlarge8_byte_writing"},
     {"ns/byte", "ns/byte"}, sp_cost_enlarge_writing},
    {{"madvise_file_large_busy", "madvise_file_small_busy"},
     {"ns/page", "ns/page"}, sp_cost_madvise_busy},
    {{"read_cold", "mmap_cold_fault", "mmap_cold_pages_per_fault"},
     {"ns/byte", "ns/fault", "pages/fault"}, sp_cost_cold},
};

const size_t sp_cost_probe_count =
    sizeof sp_cost_probes / sizeof sp_cost_probes[0];
