/* scale_lib.h: what the scale kernels' suites (test_scale_*.c) share: their
 * includes and scale_all, one whole image scaled. */
#ifndef SP_TEST_SCALE_LIB_H
#define SP_TEST_SCALE_LIB_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "filter.h"
#include "fixtures.h"
#include "scale.h"

void scale_all(const struct sp_image *src, int factor,
               enum sp_reduce reduce, struct sp_image *dst);

#endif
