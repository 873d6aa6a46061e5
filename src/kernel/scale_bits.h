/* scale_bits.h: the scale kernels of a PBM's packed bits (image.h), for
 * scale.c: sample reduce and enlarge keep the bits, as pamenlarge and
 * pamscale -nomix do; a box reduce gives 8-bit gray (maxval 255), each
 * pixel the share of white in its block, as pamscale promotes a PBM to
 * PGM. */
#ifndef SP_SCALE_BITS_H
#define SP_SCALE_BITS_H

#include <stddef.h>

#include "image.h"

/* sp_scale_bits: sp_scale_rows() (scale.h) for a packed SRC, BOX nonzero
 * for SP_REDUCE_BOX.  Takes the reduce as a flag, not scale.h's enum, so
 * that scale_bits depends on image.h only and scale.c alone on it: no
 * include cycle between the two. */
void sp_scale_bits(const struct sp_image *src, int factor, int box,
                   size_t y0, size_t y1, unsigned char *out);

#endif
