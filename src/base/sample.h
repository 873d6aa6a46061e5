/* sample.h: one sample of a raster (image.h) read and written, the one
 * place that knows how: a sample is 1 byte, or 2 bytes with the most
 * significant first (a maxval above 255), as netpbm writes them; a PBM's
 * pixel is a bit, the first pixel of a byte its high bit, 1 black.
 * Static inline, so each caller's loop compiles as if it wrote them out
 * (the scale kernels pass BYTES as a constant). */
#ifndef SP_SAMPLE_H
#define SP_SAMPLE_H

#include <stddef.h>

/* sp_sample_get: the sample of BYTES (1 or 2) bytes at S. */
static inline unsigned sp_sample_get(const unsigned char *s, unsigned bytes)
{
    return bytes == 2 ? (unsigned)s[0] << 8 | s[1] : s[0];
}

/* sp_sample_put: V (below 2^(8 * BYTES)) as a sample of BYTES bytes at
 * D. */
static inline void sp_sample_put(unsigned char *d, unsigned v, unsigned bytes)
{
    if (bytes == 2)
        *d++ = (unsigned char)(v >> 8);
    *d = (unsigned char)v;
}

/* sp_bit_get: pixel X of the packed PBM row ROW: 1 black, 0 white. */
static inline unsigned sp_bit_get(const unsigned char *row, size_t x)
{
    return (unsigned)row[x >> 3] >> (7 - (x & 7)) & 1u;
}

/* sp_bit_set: pixel X of the packed PBM row ROW made black (its byte's
 * other bits kept: a row is cleared first, then its black pixels set). */
static inline void sp_bit_set(unsigned char *row, size_t x)
{
    row[x >> 3] |= (unsigned char)(0x80u >> (x & 7));
}

#endif
