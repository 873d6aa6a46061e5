#include "scale_bits.h"

#include <stdint.h>
#include <string.h>

#include "sample.h"

/* OW output bits into D, bit x from S's bit x * STEP (a sample reduce),
 * or from S's bit x / REP (an enlarge); the last byte's spare bits 0. */
static void bits_row(unsigned char *d, const unsigned char *s, size_t ow,
                     size_t step, size_t rep)
{
    size_t sx = 0, k = 0;

    for (size_t i = 0; i < ow; i += 8) {
        unsigned byte = 0;

        for (size_t b = 0; b < 8; b++) {
            byte <<= 1;
            if (i + b < ow) {
                byte |= sp_bit_get(s, sx);
                if (++k == rep) {
                    k = 0;
                    sx += step;
                }
            }
        }
        *d++ = (unsigned char)byte;
    }
}

/* The black pixels of the ROWS x COLS block whose first pixel is X0 of
 * row S (rows STRIDE bytes apart). */
static size_t black_in(const unsigned char *s, size_t stride, size_t x0,
                       size_t rows, size_t cols)
{
    size_t black = 0;

    for (size_t r = 0; r < rows; r++, s += stride)
        for (size_t x = x0; x < x0 + cols; x++)
            black += sp_bit_get(s, x);
    return black;
}

void sp_scale_bits(const struct sp_image *src, int factor, int box,
                   size_t y0, size_t y1, unsigned char *out)
{
    const size_t n = factor < 0 ? (size_t)-(long long)factor : (size_t)factor;
    const size_t ow = factor > 0 ? src->width * n
                                 : src->width / n + (src->width % n != 0);
    const size_t orow = ow / 8 + (ow % 8 != 0);

    for (size_t y = y0; y < y1; y++) {
        if (factor < -1 && box) {
            const size_t sy = y * n;
            const size_t rows = sy + n < src->height ? n
                                                     : src->height - sy;
            const unsigned char *s = src->pixels + sy * src->stride;

            for (size_t x = 0; x < ow; x++) {
                size_t cols = x + 1 < ow ? n : src->width - x * n;
                size_t count = rows * cols;
                size_t white = count - black_in(s, src->stride, x * n, rows,
                                                cols);

                *out++ = (unsigned char)((255 * white + count / 2) / count);
            }
        } else if (n == 1) {
            memcpy(out, src->pixels + y * src->stride, orow);
            if (ow % 8 != 0)  /* the padding as netpbm writes it: 0 */
                out[orow - 1] &= (unsigned char)(0xff00u >> (ow % 8));
            out += orow;
        } else if (factor < 0) {
            bits_row(out, src->pixels + y * n * src->stride, ow, n, 1);
            out += orow;
        } else if (y > y0 && y % n != 0) {
            memcpy(out, out - orow, orow);  /* the same source row */
            out += orow;
        } else {
            bits_row(out, src->pixels + (y / n) * src->stride, ow, 1, n);
            out += orow;
        }
    }
}
