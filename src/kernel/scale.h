/* scale.h: the scale kernels.  Pure functions of pixels: a kernel fills
 * output rows [y0, y1) from the source and knows nothing of files or
 * threads, so bands of rows can run in parallel on one output image.
 *
 * FACTOR N: N >= 2 enlarges, each pixel becoming an N x N block;
 * N <= -2 reduces by |N| to ceil(w/|N|) x ceil(h/|N|); 1 and -1 copy.
 * A reduce with SP_REDUCE_SAMPLE keeps the pixel at (x*|N|, y*|N|), the
 * Sun study's sampling; SP_REDUCE_BOX takes the mean of each |N| x |N|
 * block (edge blocks over the pixels that exist), rounded to nearest;
 * with an alpha channel the colour samples are weighted by opacity.  Any
 * number of channels; a PBM's bits are scaled as bits (scale_bits.h). */
#ifndef SP_SCALE_H
#define SP_SCALE_H

#include <stddef.h>

#include "image.h"
#include "status.h"

/* How a reduce makes a pixel: the kernels' own choice, which the rows of
 * the sample and box filters (filter.h, defined below them in scale.c)
 * each pass as a constant; an enlarge or a copy ignores it.  A job never
 * holds it: it holds its filter's row. */
enum sp_reduce { SP_REDUCE_SAMPLE, SP_REDUCE_BOX };

/* The largest |FACTOR| accepted. */
#define SP_SCALE_MAX 65536

/* sp_scale_size: the output size for a W x H input and FACTOR, in *OW x
 * *OH.  Returns 0, SP_E_USAGE (FACTOR is 0 or |FACTOR| > SP_SCALE_MAX), or
 * SP_E_TOOBIG (the output's size would overflow size_t). */
sp_status sp_scale_size(size_t w, size_t h, int factor, size_t *ow,
                        size_t *oh);

/* sp_scale_type: the type of SRC scaled by FACTOR with REDUCE, into OUT
 * (its width and height are the caller's): SRC's own, but a box reduce
 * of a PBM, which gives 8-bit gray (scale_bits.h). */
void sp_scale_type(const struct sp_image *src, int factor,
                   enum sp_reduce reduce, struct sp_image *out);

/* sp_scale_rows: rows [Y0, Y1) of SRC scaled by FACTOR with REDUCE, into
 * OUT: packed rows of the output's width (sp_scale_size()) of the type
 * sp_scale_type() gives, row Y0 first.  Rows are independent of one
 * another, so bands of rows may be filled by different threads; within a
 * call, enlarge expands a source row once and copies it for the other
 * output rows it gives.
 * Uses no memory but OUT, so a jump out of it (the SIGBUS guard) leaks
 * nothing. */
void sp_scale_rows(const struct sp_image *src, int factor,
                   enum sp_reduce reduce, size_t y0, size_t y1,
                   unsigned char *out);

#endif
