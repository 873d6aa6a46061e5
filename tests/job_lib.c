/* job_lib.c: what the job suites (test_job_*.c) share: their includes, the
 * allocator that returns NULL under a sanitizer, run(), one job, and the
 * bytes a job preads, counted. */
#include "job_lib.h"

/* A too-large allocation must come back as NULL (ENOMEM), not end the
 * process, in a sanitizer build too. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "allocator_may_return_null=1";
}

size_t pread_bytes;

ssize_t counting_pread(int fd, void *buf, size_t len, off_t off)
{
    ssize_t n = pread(fd, buf, len, off);

    if (n > 0 && off > 0)
        __atomic_add_fetch(&pread_bytes, (size_t)n, __ATOMIC_RELAXED);
    return n;
}

ssize_t counting_preadv2(int fd, const struct iovec *iov, int k, off_t off,
                         int flags)
{
    ssize_t n = preadv2(fd, iov, k, off, flags);

    if (n > 0)
        __atomic_add_fetch(&pread_bytes, (size_t)n, __ATOMIC_RELAXED);
    return n;
}

sp_status run(const char *in, const char *out, enum sp_io io,
              int factor, const struct sp_filter_row *filter, unsigned threads,
              struct sp_report *r)
{
    struct sp_job job = {.in = sp_src_path(in), .out = sp_target_path(out), .io = io, .factor = factor,
                         .filter = filter, .threads = threads};

    return fx_job_run(&job, r);
}

/* Every factor, both paths, threads 1, 2, 10 and more than the rows, both
 * filters: the output file is the reference's, byte for byte.  _i picks
 * the input: a 37x23 P6 or a 16-bit 29x31 P5. */
