#include "scale.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *sp_filter_name(enum sp_filter filter)
{
    return filter == SP_FILTER_BOX ? "box" : "sample";
}

static size_t magnitude(int factor)
{
    return factor < 0 ? (size_t)(-(long long)factor) : (size_t)factor;
}

sp_status sp_scale_size(size_t w, size_t h, int factor, size_t *ow,
                        size_t *oh)
{
    size_t n = magnitude(factor);

    if (n == 0 || n > SP_SCALE_MAX)
        return SP_E_USAGE;
    if (factor > 0) {
        if (__builtin_mul_overflow(w, n, ow) ||
            __builtin_mul_overflow(h, n, oh))
            return SP_E_TOOBIG;
    } else {
        *ow = w / n + (w % n != 0);
        *oh = h / n + (h % n != 0);
    }
    return SP_OK;
}

/* Copy one pixel of P bytes; P is a constant in each caller below, so the
 * compiler turns the memcpy into a move or two. */
#define PIXEL_LOOP(P, body)                                                  \
    switch (P) {                                                             \
    case 1: { enum { PX = 1 }; body; } break;                                \
    case 2: { enum { PX = 2 }; body; } break;                                \
    case 3: { enum { PX = 3 }; body; } break;                                \
    default: { enum { PX = 6 }; body; } break;                               \
    }

/* expand_row: each of the W pixels of S written N times into D. */
static void expand_row(unsigned char *d, const unsigned char *s, size_t w,
                       size_t n, size_t p)
{
    if (p == 1) {
        for (size_t x = 0; x < w; x++, d += n)
            memset(d, s[x], n);
        return;
    }
    PIXEL_LOOP(p, {
        for (size_t x = 0; x < w; x++, s += PX)
            for (size_t k = 0; k < n; k++, d += PX)
                memcpy(d, s, PX);
    })
}

/* sample_row: every N-th of the pixels of S, OW of them, into D. */
static void sample_row(unsigned char *d, const unsigned char *s, size_t ow,
                       size_t n, size_t p)
{
    PIXEL_LOOP(p, {
        for (size_t x = 0; x < ow; x++, d += PX, s += n * PX)
            memcpy(d, s, PX);
    })
}

static unsigned get_sample(const unsigned char *s, unsigned bytes)
{
    return bytes == 2 ? (unsigned)s[0] << 8 | s[1] : s[0];
}

static void put_sample(unsigned char *d, unsigned v, unsigned bytes)
{
    if (bytes == 2)
        *d++ = (unsigned char)(v >> 8);
    *d = (unsigned char)v;
}

/* box_rows: output rows [y0, y1) as the rounded mean of each n x n block,
 * summing a block's rows into ACC (one slot per output sample). */
static void box_rows(const struct sp_image *src, struct sp_image *dst,
                     size_t n, size_t y0, size_t y1, uint64_t *acc)
{
    const unsigned c = src->channels, b = src->bytes;
    const size_t p = (size_t)c * b;

    for (size_t y = y0; y < y1; y++) {
        size_t sy0 = y * n;
        size_t sy1 = sy0 + n < src->height ? sy0 + n : src->height;
        unsigned char *d = dst->pixels + y * dst->stride;

        memset(acc, 0, dst->width * c * sizeof *acc);
        for (size_t sy = sy0; sy < sy1; sy++) {
            const unsigned char *s = src->pixels + sy * src->stride;
            for (size_t sx = 0; sx < src->width; sx++, s += p) {
                uint64_t *a = acc + (sx / n) * c;
                for (unsigned ch = 0; ch < c; ch++)
                    a[ch] += get_sample(s + ch * b, b);
            }
        }
        for (size_t x = 0; x < dst->width; x++) {
            size_t cols = src->width - x * n < n ? src->width - x * n : n;
            uint64_t count = (uint64_t)cols * (sy1 - sy0);
            for (unsigned ch = 0; ch < c; ch++, d += b)
                put_sample(d, (unsigned)((acc[x * c + ch] + count / 2) / count),
                           b);
        }
    }
}

size_t sp_scale_scratch_size(const struct sp_image *dst, int factor,
                             enum sp_filter filter)
{
    if (factor < -1 && filter == SP_FILTER_BOX)
        return dst->width * dst->channels * sizeof(uint64_t);
    return 0;
}

sp_status sp_scale_rows(const struct sp_image *src, struct sp_image *dst,
                        int factor, enum sp_filter filter, size_t y0,
                        size_t y1, void *scratch)
{
    const size_t n = magnitude(factor);
    const size_t p = sp_image_pixel_size(src);

    if (factor < -1 && filter == SP_FILTER_BOX) {
        uint64_t *acc = scratch;
        if (acc == NULL &&
            (acc = malloc(sp_scale_scratch_size(dst, factor, filter))) ==
                NULL)
            return ENOMEM;
        box_rows(src, dst, n, y0, y1, acc);
        if (acc != scratch)
            free(acc);
        return SP_OK;
    }
    for (size_t y = y0; y < y1; y++) {
        unsigned char *d = dst->pixels + y * dst->stride;

        if (n == 1) {
            memcpy(d, src->pixels + y * src->stride, dst->stride);
        } else if (factor < 0) {
            sample_row(d, src->pixels + y * n * src->stride, dst->width, n, p);
        } else if (y > y0 && y % n != 0) {
            memcpy(d, d - dst->stride, dst->stride);  /* same source row */
        } else {
            expand_row(d, src->pixels + (y / n) * src->stride, src->width, n,
                       p);
        }
    }
    return SP_OK;
}
