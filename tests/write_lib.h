/* write_lib.h: what the writer's suites (test_write_*.c) share: their
 * includes, an image written by its extension's format, and the check that
 * no temporary file was left. */
#ifndef SP_TEST_WRITE_LIB_H
#define SP_TEST_WRITE_LIB_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stb_image.h>
#include "encode.h"
#include "fixtures.h"
#include "input.h"
#include "sys.h"
#include "write_whole.h"

void write_ok(const struct sp_image *img, const char *path);
void assert_no_temp(const char *dir);

#endif
