/* The encoders' samples: rows rescaled to the 8 or 16 bits a PNG, JPEG,
 * BMP or TGA holds, and an alpha left out where the format has none. */
#include "encode.h"

#include <stdint.h>

#include "sample.h"

void sp_samples_rescale(unsigned char *dst, const unsigned char *src,
                        size_t n, unsigned in_ch, unsigned out_ch,
                        unsigned size, unsigned maxval, unsigned out_bytes)
{
    uint64_t top = out_bytes == 2 ? 65535 : 255;

    for (size_t i = 0; i < n; i++) {
        for (unsigned c = 0; c < out_ch; c++) {
            uint64_t v = sp_sample_get(src + (size_t)c * size, size);

            v = (v * top + maxval / 2) / maxval;
            sp_sample_put(dst, (unsigned)(v > top ? top : v), out_bytes);
            dst += out_bytes;
        }
        src += (size_t)in_ch * size;
    }
}
