#include "scale.h"
#include "filter.h"
#include "scale_bits.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sample.h"

void sp_scale_type(const struct sp_image *src, int factor,
                   enum sp_reduce reduce, struct sp_image *out)
{
    *out = *src;
    if (src->packed && factor < -1 && reduce == SP_REDUCE_BOX) {
        out->packed = 0;
        out->maxval = 255;
        out->magic = '5';
        snprintf(out->tuple_type, sizeof out->tuple_type, "GRAYSCALE");
    }
    out->stride = sp_image_row_bytes(out, out->width);
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

/* Unaligned 4- and 8-byte loads and stores (memcpy compiles to one move). */
static inline uint32_t ld32(const unsigned char *p)
{
    uint32_t v;

    memcpy(&v, p, sizeof v);
    return v;
}

static inline uint64_t ld64(const unsigned char *p)
{
    uint64_t v;

    memcpy(&v, p, sizeof v);
    return v;
}

static inline void st32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, sizeof v);
}

static inline void st64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, sizeof v);
}

/* Run BODY with PX, the bytes of a pixel (1, 2, 3, 4, 6 or 8: gray, RGB
 * and RGBA of 8 or 16 bits), a constant, so that the compiler turns each
 * fixed-size memcpy into a move or two; any other size runs GENERIC. */
#define PIXEL_LOOP(P, body, generic)                                         \
    switch (P) {                                                             \
    case 1: { enum { PX = 1 }; body; } break;                                \
    case 2: { enum { PX = 2 }; body; } break;                                \
    case 3: { enum { PX = 3 }; body; } break;                                \
    case 4: { enum { PX = 4 }; body; } break;                                \
    case 6: { enum { PX = 6 }; body; } break;                                \
    case 8: { enum { PX = 8 }; body; } break;                                \
    default: generic; break;                                                 \
    }

/* PATTERN: V = the PX-byte pixel at S repeated over 8 bytes, as the word
 * an 8-byte store writes.  Built in registers: a pattern assembled in
 * memory and loaded back would stall on store forwarding.  Reads up to 8
 * bytes at S: only for a pixel that is not among the last of its row. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PATTERN(v, s)                                                        \
    do {                                                                     \
        if (PX == 1) {                                                       \
            (v) = (s)[0] * UINT64_C(0x0101010101010101);                     \
        } else if (PX == 2) {                                                \
            (v) = (ld32(s) & 0xffff) * UINT64_C(0x0001000100010001);         \
        } else if (PX == 3) {                                                \
            uint64_t p_ = ld32(s) & 0xffffff;                                \
            (v) = p_ | p_ << 24 | p_ << 48;                                  \
        } else if (PX == 4) {                                                \
            (v) = (uint64_t)ld32(s) * UINT64_C(0x0000000100000001);          \
        } else if (PX == 6) {                                                \
            uint64_t p_ = ld64(s) & UINT64_C(0xffffffffffff);                \
            (v) = p_ | p_ << 48;                                             \
        } else {                                                             \
            (v) = ld64(s);                                                   \
        }                                                                    \
    } while (0)
#else
#define PATTERN(v, s)                                                        \
    do {                                                                     \
        unsigned char pat_[8 + PX];                                          \
        for (size_t i_ = 0; i_ < 8; i_ += PX)                                \
            memcpy(pat_ + i_, (s), PX);                                      \
        (v) = ld64(pat_);                                                    \
    } while (0)
#endif

/* copy_pixels: pixel by pixel, for the sizes PIXEL_LOOP has no case
 * for (a PAM of other depths): COUNT pixels of P bytes from S, each N
 * times, S advancing SKIP pixels a pixel written. */
static void copy_pixels(unsigned char *d, const unsigned char *s,
                        size_t count, size_t n, size_t skip, size_t p)
{
    for (size_t x = 0; x < count; x++, s += skip * p)
        for (size_t k = 0; k < n; k++, d += p)
            memcpy(d, s, p);
}

/* expand_row: each of the W pixels of S written N times into D.  A block
 * of N pixels is filled by 8-byte stores of the pixel's pattern, STEP
 * bytes apart (a whole number of pixels); the last store of a block may
 * run up to 7 bytes into the blocks after it, which are written later, so
 * only the pixels near the row's end are copied one by one. */
static void expand_row(unsigned char *d, const unsigned char *s, size_t w,
                       size_t n, size_t p)
{
    const size_t block = n * p;
    /* The last pixels: those whose stores would run past the row, and
     * those whose 8-byte read would (PATTERN). */
    const size_t tail = (7 + block - 1) / block > (7 + p - 1) / p
                            ? (7 + block - 1) / block
                            : (7 + p - 1) / p;
    const size_t wide = w > tail ? w - tail : 0;

    PIXEL_LOOP(p, {
        const size_t step = 8 - 8 % PX;
        size_t x = 0;

        for (; x < wide; x++, s += PX, d += block) {
            uint64_t v;
            PATTERN(v, s);
            for (size_t o = 0; o < block; o += step)
                st64(d + o, v);
        }
        for (; x < w; x++, s += PX)
            for (size_t k = 0; k < n; k++, d += PX)
                memcpy(d, s, PX);
    }, copy_pixels(d, s, w, n, 1, p))
}

/* ROW_LOOPS_ALIGNED: the loops of a row kernel start on 32 bytes.  The
 * sampled reduce's loop is four instructions; straddling a 32-byte
 * boundary, it runs from two lines of the decoded-instruction cache, and
 * a reduce by 2 of a 12000x10000 image took 14-19% more CPU time when an
 * unrelated change moved it across one (same instructions, same system
 * calls).  GCC's alone: clang has no such attribute. */
#if defined(__GNUC__) && !defined(__clang__)
#define ROW_LOOPS_ALIGNED __attribute__((optimize("align-loops=32")))
#else
#define ROW_LOOPS_ALIGNED
#endif

/* sample_row: every N-th of the pixels of S, OW of them, into D.  3- and
 * 6-byte pixels move as one 4- or 8-byte word, reading and writing a
 * little past the pixel: inside the row, and rewritten by the next pixel;
 * the last pixel is copied exactly. */
ROW_LOOPS_ALIGNED static void sample_row(unsigned char *d, const unsigned char *s, size_t ow,
                       size_t n, size_t p)
{
    PIXEL_LOOP(p, {
        const size_t skip = n * PX;
        size_t x = 0;

        for (; x + 1 < ow; x++, d += PX, s += skip) {
            if (PX == 3)
                st32(d, ld32(s));
            else if (PX == 6)
                st64(d, ld64(s));
            else
                memcpy(d, s, PX);
        }
        if (ow > 0)
            memcpy(d, s, PX);
    }, copy_pixels(d, s, ow, 1, n, p))
}

/* Rounded division by the pixel count of a box, without a divide
 * instruction per sample: for 32-bit X and D >= 2, X / D is the high word
 * of X * ceil(2^64 / D) (Lemire, Kaser and Kurz, "Faster remainder by
 * direct computation", 2019).  Sums that may not fit in 32 bits divide. */
struct divisor {
    uint64_t m;     /* ceil(2^64 / d), when fast */
    uint64_t d;
    int fast;
};

static struct divisor divisor_for(uint64_t d, unsigned maxval)
{
    struct divisor v = {0, d, 0};

    if (d >= 2 && d * maxval + d / 2 <= UINT32_MAX) {
        v.m = UINT64_MAX / d + 1;
        v.fast = 1;
    }
    return v;
}

static inline unsigned rounded_mean(uint64_t sum, const struct divisor *v)
{
    uint64_t x = sum + v->d / 2;

    if (v->fast)
        return (unsigned)(((unsigned __int128)x * v->m) >> 64);
    return (unsigned)(x / v->d);
}

/* BOX_LOOP: box_rows' body for C channels of B bytes, both constants. */
#define BOX_LOOP(C, B)                                                       \
    for (size_t x = 0; x < ow; x++, s += n * (C) * (B)) {                    \
        const size_t cols = x + 1 < ow ? n : last_cols;                      \
        const struct divisor *v = x + 1 < ow ? &full : &edge;                \
        uint64_t sum[C] = {0};                                               \
        for (size_t r = 0; r < rows; r++) {                                  \
            const unsigned char *q = s + r * src->stride;                    \
            for (size_t k = 0; k < cols; k++, q += (C) * (B))                \
                for (unsigned ch = 0; ch < (C); ch++)                        \
                    sum[ch] += sp_sample_get(q + ch * (B), B);               \
        }                                                                    \
        for (unsigned ch = 0; ch < (C); ch++, d += (B))                      \
            sp_sample_put(d, rounded_mean(sum[ch], v), B);                   \
    }

/* box_pixel: the pixel at D, the mean of the ROWS x COLS block at S of
 * SRC's type (any number of channels): with an alpha channel, the colour
 * samples weighted by their opacity, so that a transparent pixel's colour
 * does not bleed into its neighbours (a block all transparent: the plain
 * mean); the alpha itself, and every sample without one, the plain
 * mean.  Rounded to nearest.  For the types BOX_LOOP has no case for. */
static void box_pixel(const struct sp_image *src, const unsigned char *s,
                      size_t rows, size_t cols, unsigned char *d)
{
    const unsigned c = src->channels, b = src->sample_size;
    const size_t px = (size_t)c * b;
    const uint64_t count = (uint64_t)rows * cols;
    unsigned __int128 alpha = 0;

    if (src->alpha)
        for (size_t r = 0; r < rows; r++)
            for (size_t k = 0; k < cols; k++)
                alpha += sp_sample_get(s + r * src->stride + k * px +
                                       (c - 1) * b, b);
    for (unsigned ch = 0; ch < c; ch++, d += b) {
        const int weigh = src->alpha && ch + 1 < c && alpha > 0;
        unsigned __int128 sum = 0;

        for (size_t r = 0; r < rows; r++) {
            const unsigned char *q = s + r * src->stride + ch * b;
            for (size_t k = 0; k < cols; k++, q += px) {
                unsigned __int128 v = sp_sample_get(q, b);
                sum += weigh ? v * sp_sample_get(q + (c - 1 - ch) * b, b)
                             : v;
            }
        }
        sp_sample_put(d, (unsigned)(weigh ? (sum + alpha / 2) / alpha
                                          : (sum + count / 2) / count), b);
    }
}

/* box_rows: output rows [y0, y1) into OUT, each pixel the rounded mean of
 * its N x N block (the blocks of the last row and column over the pixels
 * that exist), summed in registers straight from the source rows. */
static void box_rows(const struct sp_image *src, size_t n, size_t ow,
                     size_t y0, size_t y1, unsigned char *out)
{
    const size_t last_cols = src->width - (ow - 1) * n;

    for (size_t y = y0; y < y1; y++) {
        const size_t sy = y * n;
        const size_t rows = sy + n < src->height ? n : src->height - sy;
        const struct divisor full = divisor_for(rows * n, src->maxval);
        const struct divisor edge = divisor_for(rows * last_cols,
                                                src->maxval);
        const unsigned char *s = src->pixels + sy * src->stride;
        unsigned char *d = out;

        if (src->alpha || (src->channels != 1 && src->channels != 3)) {
            for (size_t x = 0; x < ow; x++, s += n * sp_image_pixel_size(src),
                        d += sp_image_pixel_size(src))
                box_pixel(src, s, rows, x + 1 < ow ? n : last_cols, d);
        } else if (src->channels == 3 && src->sample_size == 1) {
            BOX_LOOP(3, 1)
        } else if (src->channels == 1 && src->sample_size == 1) {
            BOX_LOOP(1, 1)
        } else if (src->channels == 3) {
            BOX_LOOP(3, 2)
        } else {
            BOX_LOOP(1, 2)
        }
        out = d;
    }
}

void sp_scale_rows(const struct sp_image *src, int factor,
                   enum sp_reduce reduce, size_t y0, size_t y1,
                   unsigned char *out)
{
    const size_t n = magnitude(factor);
    const size_t p = sp_image_pixel_size(src);
    const size_t ow = factor > 0 ? src->width * n
                                 : src->width / n + (src->width % n != 0);
    const size_t orow = ow * p;

    if (src->packed) {
        sp_scale_bits(src, factor, reduce == SP_REDUCE_BOX, y0, y1, out);
        return;
    }
    if (factor < -1 && reduce == SP_REDUCE_BOX) {
        box_rows(src, n, ow, y0, y1, out);
        return;
    }
    for (size_t y = y0; y < y1; y++, out += orow) {
        if (n == 1)
            memcpy(out, src->pixels + y * src->stride, orow);
        else if (factor < 0)
            sample_row(out, src->pixels + y * n * src->stride, ow, n, p);
        else if (y > y0 && y % n != 0)
            memcpy(out, out - orow, orow);  /* the same source row */
        else
            expand_row(out, src->pixels + (y / n) * src->stride, src->width,
                       n, p);
    }
}

/* The reduces by a whole factor N as filters (filter.h): output row Y
 * reads source row Y N (sample), or the N rows from it that exist (box),
 * each row made by sp_scale_rows() from a view of the band that starts
 * there. */

static size_t reduce_by(const struct sp_scaling *s)
{
    return magnitude(s->factor);
}

static void sample_span(const struct sp_scaling *s, size_t y, size_t *s0,
                        size_t *s1)
{
    *s0 = y * reduce_by(s);
    *s1 = *s0 + 1;
}

static size_t sample_span_max(const struct sp_scaling *s)
{
    (void)s;
    return 1;
}

static void box_span(const struct sp_scaling *s, size_t y, size_t *s0,
                     size_t *s1)
{
    const size_t n = reduce_by(s);

    *s0 = y * n;
    *s1 = s->in_height - *s0 < n ? s->in_height : *s0 + n;
}

static size_t box_span_max(const struct sp_scaling *s)
{
    return reduce_by(s) < s->in_height ? reduce_by(s) : s->in_height;
}

static size_t no_scratch(const struct sp_image *src,
                         const struct sp_scaling *s)
{
    (void)src;
    (void)s;
    return 0;
}

static void sample_type(const struct sp_image *src,
                        const struct sp_scaling *s, struct sp_image *out)
{
    sp_scale_type(src, s->factor, SP_REDUCE_SAMPLE, out);
}

static void box_type(const struct sp_image *src, const struct sp_scaling *s,
                     struct sp_image *out)
{
    sp_scale_type(src, s->factor, SP_REDUCE_BOX, out);
}

/* reduce_rows: rows [Y0, Y1) of a reduce with REDUCE, whose spans SPAN
 * gives, each from a view of BAND holding its span alone. */
static void reduce_rows(const struct sp_image *band, size_t band_y0,
                        const struct sp_scaling *s, size_t y0, size_t y1,
                        enum sp_reduce reduce,
                        void (*span)(const struct sp_scaling *, size_t,
                                     size_t *, size_t *),
                        unsigned char *out)
{
    struct sp_image type;
    size_t orow = 0;

    /* A row at a time is the common call (item.c asks so): its band is
     * its span, scaled as it is, and no row follows to find. */
    if (y1 - y0 > 1) {
        sp_scale_type(band, s->factor, reduce, &type);
        orow = sp_image_row_bytes(&type, s->out_width);
    }
    for (size_t y = y0; y < y1; y++, out += orow) {
        struct sp_image view;
        size_t r0, r1;

        span(s, y, &r0, &r1);
        if (r0 == band_y0 && r1 - r0 == band->height) {
            sp_scale_rows(band, s->factor, reduce, 0, 1, out);
            continue;
        }
        view = *band;
        view.pixels = band->pixels + (r0 - band_y0) * band->stride;
        view.height = r1 - r0;
        sp_scale_rows(&view, s->factor, reduce, 0, 1, out);
    }
}

static void sample_rows(const struct sp_image *band, size_t band_y0,
                        const struct sp_scaling *s, size_t y0, size_t y1,
                        void *scratch, unsigned char *out)
{
    (void)scratch;
    reduce_rows(band, band_y0, s, y0, y1, SP_REDUCE_SAMPLE, sample_span,
                out);
}

static void box_filter_rows(const struct sp_image *band, size_t band_y0,
                            const struct sp_scaling *s, size_t y0,
                            size_t y1, void *scratch, unsigned char *out)
{
    (void)scratch;
    reduce_rows(band, band_y0, s, y0, y1, SP_REDUCE_BOX, box_span, out);
}

const struct sp_filter_row sp_filter_sample = {
    .name = "sample", .support = 0.0, .by_factor = 1, .enlarges = 1,
    .shrinks = 0, .span = sample_span, .span_max = sample_span_max,
    .scratch = no_scratch, .type = sample_type, .rows = sample_rows};

const struct sp_filter_row sp_filter_box = {
    .name = "box", .support = 0.5, .by_factor = 1, .enlarges = 0,
    .shrinks = 1, .span = box_span, .span_max = box_span_max,
    .scratch = no_scratch, .type = box_type, .rows = box_filter_rows};
