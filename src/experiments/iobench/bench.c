#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cache.h"
#include "sys.h"

void bench_warn(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: ", program_invocation_short_name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

void bench_print(FILE *out, const struct bench_row *r)
{
    fprintf(out, "%s,%s,%.0f,%s,%s,%.6g,%s,", r->experiment, r->kase,
            r->param, r->method, r->metric, r->value, r->unit);
    if (!isnan(r->seed))
        fprintf(out, "%.6g", r->seed);
    fprintf(out, ",%s,", r->checked ? "ok" : "");
    if (r->file_bytes != 0)
        fprintf(out, "%llu", (unsigned long long)r->file_bytes);
    /* every experiment runs on one thread (bench.h) */
    fprintf(out, ",1\n");
    fflush(out);
}

uint64_t bench_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* bench_file's writeback lag, in chunks */
#define LAG 4

int bench_file(const char *path, uint64_t size, uint64_t seed)
{
    const size_t chunk = 1 << 20;
    uint64_t *buf = malloc(chunk), state = seed, done = 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int err = 0;

    if (buf == NULL || fd < 0) {
        err = buf == NULL ? ENOMEM : errno;
        goto out;
    }
    while (done < size && err == 0) {
        size_t n = size - done < chunk ? (size_t)(size - done) : chunk;
        for (size_t i = 0; i < chunk / 8; i++)
            buf[i] = bench_random(&state);
        err = sp_sys_write_full(fd, buf, n);
        done += n;
        /* Write back as we go, and wait for the chunk LAG chunks back:
         * a few MiB dirty at most.  Under a cgroup memory limit below the
         * file's size, dirty pages that pile up faster than writeback
         * can clean them get the process killed. */
        if (err == 0 && sync_file_range(fd, (off64_t)(done - n), (off64_t)n,
                                        SYNC_FILE_RANGE_WRITE) != 0)
            err = errno;
        if (err == 0 && done > LAG * chunk &&
            sync_file_range(fd, (off64_t)(done - LAG * chunk), (off64_t)chunk,
                            SYNC_FILE_RANGE_WAIT_BEFORE |
                                SYNC_FILE_RANGE_WRITE |
                                SYNC_FILE_RANGE_WAIT_AFTER) != 0)
            err = errno;
    }
    if (err == 0 && fsync(fd) != 0)
        err = errno;
out:
    if (fd >= 0 && close(fd) != 0 && err == 0)
        err = errno;
    free(buf);
    return err;
}

uint64_t bench_sum(uint64_t sum, const void *p, size_t len)
{
    const unsigned char *b = p;

    /* FNV-1a over 8-byte words (bytes for the tail): fast enough to verify
     * a GiB, and any misplaced block changes it. */
    for (; len >= 8; len -= 8, b += 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        sum = (sum ^ w) * 0x100000001b3u;
    }
    for (; len > 0; len--, b++)
        sum = (sum ^ *b) * 0x100000001b3u;
    return sum;
}

int bench_file_sum(const char *path, uint64_t *sum)
{
    const size_t chunk = 1 << 20;
    unsigned char *buf = malloc(chunk);
    int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
    size_t got;

    *sum = 0xcbf29ce484222325u;
    if (buf == NULL || fd < 0) {
        err = buf == NULL ? ENOMEM : errno;
    } else {
        /* whole chunks keep the 8-byte words aligned with bench_sum over
         * one buffer */
        do {
            err = sp_sys_read_full(fd, buf, chunk, &got);
            *sum = bench_sum(*sum, buf, got);
        } while (err == 0 && got == chunk);
    }
    if (fd >= 0)
        close(fd);
    free(buf);
    return err;
}

int bench_evict(const char *path)
{
    return sp_cache_evict(path) == SP_OK ? 0 : -1;
}

static uint64_t tv_ns(struct timeval tv)
{
    return (uint64_t)tv.tv_sec * 1000000000u + (uint64_t)tv.tv_usec * 1000u;
}

void bench_cpu(uint64_t *user_ns, uint64_t *sys_ns)
{
    struct rusage self, children;

    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    *user_ns = tv_ns(self.ru_utime) + tv_ns(children.ru_utime);
    *sys_ns = tv_ns(self.ru_stime) + tv_ns(children.ru_stime);
}

void bench_path(char *buf, const struct bench_opts *o, const char *name)
{
    snprintf(buf, PATH_MAX, "%s/%s", o->dir, name);
}

int bench_remove(const struct bench_opts *o, const char *path)
{
    if (o->keep || unlink(path) == 0 || errno == ENOENT)
        return 0;
    return errno;
}

int bench_reps(const struct bench_opts *o, int def)
{
    return o->reps > 0 ? o->reps : def;
}

/* limit_file: the number in the file DIR/GROUP/NAME, or UINT64_MAX ("max",
 * unreadable). */
static uint64_t limit_file(const char *dir, const char *group,
                           const char *name)
{
    char path[PATH_MAX];
    unsigned long long v;
    FILE *f;
    int ok;

    snprintf(path, sizeof path, "%s%s/%s", dir, group, name);
    if ((f = fopen(path, "re")) == NULL)
        return UINT64_MAX;
    ok = fscanf(f, "%llu", &v) == 1;
    fclose(f);
    return ok ? (uint64_t)v : UINT64_MAX;
}

uint64_t bench_memory_limit(void)
{
    char line[PATH_MAX + 64];
    uint64_t limit = UINT64_MAX, v;
    FILE *f = fopen("/proc/self/cgroup", "re");

    if (f == NULL)
        return limit;
    /* "0::/group" is the v2 hierarchy, "N:memory:/group" v1's controller;
     * v2 sits at /sys/fs/cgroup, or at .../unified beside v1 */
    while (fgets(line, sizeof line, f) != NULL) {
        char *group = strchr(line, ':'), *end;

        if (group == NULL || (end = strchr(group + 1, ':')) == NULL)
            continue;
        end[strcspn(end, "\n")] = '\0';
        if (strncmp(group, "::", 2) == 0) {
            v = limit_file("/sys/fs/cgroup", end + 1, "memory.max");
            if (v == UINT64_MAX)
                v = limit_file("/sys/fs/cgroup/unified", end + 1,
                               "memory.max");
        } else if (strncmp(group, ":memory:", 8) == 0) {
            v = limit_file("/sys/fs/cgroup/memory", end + 1,
                           "memory.limit_in_bytes");
        } else {
            continue;
        }
        if (v < limit)
            limit = v;
    }
    fclose(f);
    return limit;
}
