/* shared.h: what the Check suites (through fixtures.h) and the fuzz
 * harnesses share, with no Check of its own so that both can link it:
 * the list of I/O paths every test that loops over paths runs, the one
 * image comparison, and a file as the plain decoder's text. */
#ifndef SP_TEST_SHARED_H
#define SP_TEST_SHARED_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "image.h"
#include "input.h"

/* fx_io: the load paths a file can take, the default first: --io auto
 * takes pread for a regular file (load.c), then read and mmap.  A loop
 * over paths is `for (size_t k = 0; k < FX_NIO; k++)` with fx_io[k]; a
 * new path is one more entry here. */
enum { FX_NIO = 3 };
extern const enum sp_io fx_io[FX_NIO];

/* fx_images_equal: the same type (size, channels, sample size, maxval,
 * packed) and the same pixels, row by row: each row's
 * sp_image_row_bytes(), whatever either image's stride. */
int fx_images_equal(const struct sp_image *a, const struct sp_image *b);

/* fx_file_pull: the plain decoder's pull (header.h) of the FILE ARG, from
 * its position: fread() of up to CAP bytes. */
ssize_t fx_file_pull(void *arg, unsigned char *buf, size_t cap);

/* fx_input_open: sp_input_open() of the path source PATH. */
sp_status fx_input_open(struct sp_input *in, const char *path, int nowait,
                        struct sp_reuse *reuse);

#endif
