/* load_lib.h: what the loader's suites (test_load_*.c) share: their
 * includes, a plain file written, a pipe fed by a child and loaded, and the
 * count of mmap calls. */
#ifndef SP_TEST_LOAD_LIB_H
#define SP_TEST_LOAD_LIB_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "fixtures.h"
#include "input.h"
#include "sys.h"

void write_plain(const char *path, const struct sp_image *img);
pid_t feed(int fd, const void *data, size_t len);
void to_stdin(int fd);
void reap(pid_t pid);
sp_status load_pipe(const void *data, size_t len, int as_stdin,
                    enum sp_io io, struct sp_image *img,
                    struct sp_load_info *info);
extern unsigned mmap_calls;

#endif
