/* job_lib.h: what the job suites (test_job_*.c) share: their includes, the
 * allocator that returns NULL under a sanitizer, run(), one job, and the
 * bytes a job preads, counted. */
#ifndef SP_TEST_JOB_LIB_H
#define SP_TEST_JOB_LIB_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "fixtures.h"
#include "job.h"
#include "policy.h"
#include "parallel.h"
#include "sys.h"
#include "write_whole.h"

/* The bytes a job preads, counted by counting_pread and counting_preadv2
 * once put in sp_sys (threads add to it at once); not those the loader
 * reads from offset 0 to parse the header. */
extern size_t pread_bytes;
ssize_t counting_pread(int fd, void *buf, size_t len, off_t off);
ssize_t counting_preadv2(int fd, const struct iovec *iov, int k, off_t off,
                         int flags);

sp_status run(const char *in, const char *out, enum sp_io io,
              int factor, const struct sp_filter_row *filter, unsigned threads,
              struct sp_report *r);

#endif
