/* The encoders' samples: rows rescaled to the 8 or 16 bits a PNG, JPEG,
 * BMP or TGA holds, and an alpha flattened where the format has none. */
#include "encode.h"

#include <stdint.h>

#include "convert.h"
#include "sample.h"

void sp_samples_rescale(unsigned char *dst, const unsigned char *src,
                        size_t n, unsigned in_ch, unsigned out_ch,
                        unsigned size, unsigned maxval, unsigned out_bytes,
                        unsigned long background)
{
    uint64_t top = out_bytes == 2 ? 65535 : 255;
    /* an alpha left out (the last channel) flattens the picture onto the
     * background: a gray picture onto the background's gray (ppmtopgm's
     * luma) */
    const int flatten = in_ch > out_ch && in_ch % 2 == 0;
    const unsigned bg[3] = {
        out_ch == 1 ? (unsigned)((77 * ((background >> 16) & 255) +
                                  150 * ((background >> 8) & 255) +
                                  29 * (background & 255) + 128) >> 8)
                    : (unsigned)(background >> 16) & 255,
        (unsigned)(background >> 8) & 255, (unsigned)background & 255};

    for (size_t i = 0; i < n; i++) {
        unsigned a = flatten ? sp_sample_get(src + (size_t)(in_ch - 1) *
                                                       size, size)
                             : 0;

        for (unsigned c = 0; c < out_ch; c++) {
            uint64_t v = sp_sample_get(src + (size_t)c * size, size);

            if (flatten)
                v = sp_over((unsigned)v, a, bg[c], maxval);
            v = (v * top + maxval / 2) / maxval;
            sp_sample_put(dst, (unsigned)(v > top ? top : v), out_bytes);
            dst += out_bytes;
        }
        src += (size_t)in_ch * size;
    }
}
