/* job_lib.c: what the job suites (test_job_*.c) share: their includes, the
 * allocator that returns NULL under a sanitizer, and run(), one job. */
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

sp_status run(const char *in, const char *out, enum sp_io io,
              int factor, enum sp_filter filter, unsigned threads,
              struct sp_report *r)
{
    struct sp_job job = {.in = in, .out = out, .io = io, .factor = factor,
                         .filter = filter, .threads = threads};

    return sp_job_run(&job, r);
}

/* Every factor, both paths, threads 1, 2, 10 and more than the rows, both
 * filters: the output file is the reference's, byte for byte.  _i picks
 * the input: a 37x23 P6 or a 16-bit 29x31 P5. */
