/* resample.h: the area-average resample, from any size to any size.
 * Output pixel (x, y) covers the source rectangle [x W/W', (x+1) W/W') x
 * [y H/H', (y+1) H/H') of a W x H source scaled to W' x H'; its value is
 * the mean of the source over that rectangle, each source pixel weighted
 * by the area of it the rectangle covers (pamscale's "pixel mixing").  In
 * integers: source column i spans [i W', (i+1) W') and output column x
 * spans [x W, (x+1) W) on one axis of W W' units, so the weights are whole
 * numbers that sum to W across an output column (H down a row), and the
 * mean is one rounded division of an exact sum by W H: no intermediate
 * rounding, the same bytes on every machine.  Separable: each source row's
 * horizontal sums are weighted into the output row's.  With an alpha
 * channel the colour samples are weighted by opacity, as the box reduce
 * weighs them (scale.h); a PBM's bits are read as 8-bit gray (black 0,
 * white 255).  Any number of channels, maxval, 8- or 16-bit samples.
 *
 * A kernel as scale.h's are: rows [y0, y1) of the output, from the source
 * rows they read, into memory the caller gives (the output and a
 * scratch), so that bands of rows can run on threads and give the same
 * bytes for any split. */
#ifndef SP_RESAMPLE_H
#define SP_RESAMPLE_H

#include <stddef.h>

#include "image.h"

/* The largest width or height, in or out, that the resample takes: its
 * sums are exact in 64 and 128 bits up to it. */
#define SP_RESAMPLE_MAX ((size_t)1 << 31)

/* A resample's sizes: the source's and the output's. */
struct sp_resample {
    size_t in_width, in_height;
    size_t out_width, out_height;
};

/* sp_resample_span: the source rows [*S0, *S1) that output row Y of OUT
 * rows reads from IN rows: [floor(Y IN/OUT), ceil((Y+1) IN/OUT)).  The
 * same for columns. */
void sp_resample_span(size_t in, size_t out, size_t y, size_t *s0,
                      size_t *s1);

/* sp_resample_type: the output's type for a source of SRC's type, into
 * OUT (its width and height are the caller's): SRC's own, but a PBM gives
 * 8-bit gray, as a box reduce does. */
void sp_resample_type(const struct sp_image *src, struct sp_image *out);

/* sp_resample_scratch: the bytes of scratch sp_resample_rows() needs for
 * a source of SRC's type and an output OUT_WIDTH pixels wide. */
size_t sp_resample_scratch(const struct sp_image *src, size_t out_width);

/* sp_resample_rows: output rows [Y0, Y1) of R into OUT (packed rows of
 * sp_resample_type()'s type, row Y0 first), from BAND: source rows
 * [BAND_Y0, BAND_Y0 + band->height), R's in_width wide, that must hold
 * the rows sp_resample_span() names for Y0 to Y1 - 1.  SCRATCH holds
 * sp_resample_scratch() bytes, aligned for 16-byte integers. */
void sp_resample_rows(const struct sp_image *band, size_t band_y0,
                      const struct sp_resample *r, size_t y0, size_t y1,
                      void *scratch, unsigned char *out);

#endif
