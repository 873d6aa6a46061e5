/* batch_lib.h: what the batch runner's suites (test_batch_*.c;
 * batch_test.sh and batch_options_test.sh run its command line) share:
 * their includes. */
#ifndef SP_TEST_BATCH_LIB_H
#define SP_TEST_BATCH_LIB_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include "batch.h"
#include "fixtures.h"
#include "parallel.h"
#include "sys.h"

#endif
