#include "resample.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "filter.h"
#include "sample.h"

typedef unsigned __int128 u128;

void sp_resample_span(size_t in, size_t out, size_t y, size_t *s0,
                      size_t *s1)
{
    uint64_t a = (uint64_t)y * in, b = (uint64_t)(y + 1) * in;

    *s0 = (size_t)(a / out);
    *s1 = (size_t)((b + out - 1) / out);
}

void sp_resample_type(const struct sp_image *src, struct sp_image *out)
{
    *out = *src;
    if (src->packed) {
        out->packed = 0;
        out->maxval = 255;
        out->magic = '5';
        snprintf(out->tuple_type, sizeof out->tuple_type, "GRAYSCALE");
    }
    out->stride = sp_image_row_bytes(out, out->width);
}

/* sums: the sums kept for each output pixel: a plain one a channel, and
 * with alpha an opacity-weighted one a colour channel. */
static size_t sums(const struct sp_image *src)
{
    return src->alpha ? 2 * (size_t)src->channels - 1 : src->channels;
}

size_t sp_resample_scratch(const struct sp_image *src, size_t out_width)
{
    /* the output row's sums, then one pixel's horizontal sums */
    return (out_width + 1) * sums(src) * sizeof(u128);
}

/* weight: the units of source cell I (spanning [I OUT, (I+1) OUT)) that
 * output cell X (spanning [X IN, (X+1) IN)) covers. */
static inline uint64_t weight(uint64_t i, uint64_t x, uint64_t in,
                              uint64_t out)
{
    uint64_t lo = i * out > x * in ? i * out : x * in;
    uint64_t hi = (i + 1) * out < (x + 1) * in ? (i + 1) * out
                                               : (x + 1) * in;

    return hi - lo;
}

/* sample: channel CH of pixel I of the source row S: a PBM's bit as 8-bit
 * gray. */
static inline uint64_t sample(const struct sp_image *src,
                              const unsigned char *s, size_t i, unsigned ch)
{
    if (src->packed)
        return sp_bit_get(s, i) ? 0 : 255;
    return sp_sample_get(s + (i * src->channels + ch) * src->sample_size,
                         src->sample_size);
}

/* add_cell: the pixel at P, of C channels of B bytes, A its last one
 * alpha (all three constants where it is inlined), weighed W, into H:
 * each channel's value, and with alpha each colour's value times the
 * opacity. */
static inline __attribute__((always_inline)) void
add_cell(uint64_t *h, const unsigned char *p, uint64_t w, unsigned c,
         unsigned b, int a)
{
    const uint64_t alpha = a ? sp_sample_get(p + (c - 1) * b, b) * w : 0;

    for (unsigned ch = 0; ch < c; ch++) {
        uint64_t v = sp_sample_get(p + ch * b, b);

        h[ch] += v * w;
        if (a && ch + 1 < c)
            h[c + ch] += v * alpha;
    }
}

/* CELL_LOOP: add_row's body for C channels of B bytes, A with alpha, all
 * constants: the cells inside an output column weigh OUT each (their
 * whole width), so they are summed plain and weighed once; only the
 * first and the last are weighed apart. */
#define CELL_LOOP(C, B, A)                                                   \
    for (size_t x = 0; x < r->out_width; x++, acc += n) {                    \
        enum { N = (A) ? 2 * (C) - 1 : (C) };                                \
        uint64_t mid[N] = {0}, edge[N] = {0}, w0, w1;                        \
        size_t i0, i1;                                                       \
                                                                             \
        sp_resample_span(r->in_width, r->out_width, x, &i0, &i1);            \
        w0 = weight(i0, x, r->in_width, r->out_width);                       \
        add_cell(edge, s + i0 * (C) * (B), w0, C, B, A);                     \
        for (size_t i = i0 + 1; i + 1 < i1; i++)                             \
            add_cell(mid, s + i * (C) * (B), 1, C, B, A);                    \
        if (i1 - 1 > i0) {                                                   \
            w1 = weight(i1 - 1, x, r->in_width, r->out_width);               \
            add_cell(edge, s + (i1 - 1) * (C) * (B), w1, C, B, A);           \
        }                                                                    \
        for (unsigned k = 0; k < N; k++)                                     \
            acc[k] += (u128)(mid[k] * r->out_width + edge[k]) * wy;          \
    }

/* ROW_CASE: CELL_LOOP for SRC's type when it is C channels of B bytes,
 * A with alpha, then return. */
#define ROW_CASE(C, B, A)                                                    \
    if (c == (C) && src->sample_size == (B) && !!src->alpha == (A)) {        \
        CELL_LOOP(C, B, A)                                                   \
        return;                                                              \
    }

/* add_row: source row S, of weight WY in output row R's rows, into ACC
 * (the output row's sums), through H (one pixel's horizontal sums).  A
 * horizontal sum is below 2^16 x 2^16 x 2^31 (value, opacity, the weights
 * of a column), so it is exact in 64 bits. */
static void add_row(const struct sp_image *src, const struct sp_resample *r,
                    const unsigned char *s, uint64_t wy, u128 *acc,
                    uint64_t *h)
{
    const unsigned c = src->channels;
    const size_t n = sums(src);

    if (!src->packed) {
        ROW_CASE(3, 1, 0) ROW_CASE(1, 1, 0) ROW_CASE(4, 1, 1)
        ROW_CASE(2, 1, 1) ROW_CASE(3, 2, 0) ROW_CASE(1, 2, 0)
        ROW_CASE(4, 2, 1) ROW_CASE(2, 2, 1)
    }
    for (size_t x = 0; x < r->out_width; x++, acc += n) {
        size_t i0, i1;

        sp_resample_span(r->in_width, r->out_width, x, &i0, &i1);
        memset(h, 0, n * sizeof *h);
        for (size_t i = i0; i < i1; i++) {
            uint64_t wx = weight(i, x, r->in_width, r->out_width);
            uint64_t a = src->alpha ? sample(src, s, i, c - 1) * wx : 0;

            for (unsigned ch = 0; ch < c; ch++) {
                uint64_t v = sample(src, s, i, ch);

                h[ch] += v * wx;
                if (src->alpha && ch + 1 < c)
                    h[c + ch] += v * a;
            }
        }
        for (size_t k = 0; k < n; k++)
            acc[k] += (u128)h[k] * wy;
    }
}

/* put_row: the output row from ACC, each sum divided by its weight,
 * rounded to nearest: the colour of a pixel with some opacity by the
 * opacity it sums, the rest (and a pixel all transparent) by the area. */
static void put_row(const struct sp_image *src, const struct sp_resample *r,
                    const u128 *acc, unsigned char *d)
{
    const unsigned c = src->channels, b = src->packed ? 1 : src->sample_size;
    const size_t n = sums(src);
    const u128 area = (u128)r->in_width * r->in_height;

    for (size_t x = 0; x < r->out_width; x++, acc += n) {
        const u128 alpha = src->alpha ? acc[c - 1] : 0;

        for (unsigned ch = 0; ch < c; ch++, d += b) {
            const int weigh = alpha > 0 && ch + 1 < c;
            const u128 sum = weigh ? acc[c + ch] : acc[ch];
            const u128 by = weigh ? alpha : area;

            sp_sample_put(d, (unsigned)((sum + by / 2) / by), b);
        }
    }
}

void sp_resample_rows(const struct sp_image *band, size_t band_y0,
                      const struct sp_resample *r, size_t y0, size_t y1,
                      void *scratch, unsigned char *out)
{
    const size_t n = sums(band);
    u128 *acc = scratch;
    uint64_t *h = (uint64_t *)(acc + r->out_width * n);
    struct sp_image type;
    size_t orow;

    sp_resample_type(band, &type);
    orow = sp_image_row_bytes(&type, r->out_width);
    for (size_t y = y0; y < y1; y++, out += orow) {
        size_t j0, j1;

        sp_resample_span(r->in_height, r->out_height, y, &j0, &j1);
        memset(acc, 0, r->out_width * n * sizeof *acc);
        for (size_t j = j0; j < j1; j++)
            add_row(band, r, band->pixels + (j - band_y0) * band->stride,
                    weight(j, y, r->in_height, r->out_height), acc, h);
        put_row(band, r, acc, out);
    }
}

/* The area average as a filter (filter.h), the one a fit scales by. */

static struct sp_resample sizes(const struct sp_scaling *s)
{
    return (struct sp_resample){s->in_width, s->in_height, s->out_width,
                                s->out_height};
}

static void area_span(const struct sp_scaling *s, size_t y, size_t *s0,
                      size_t *s1)
{
    sp_resample_span(s->in_height, s->out_height, y, s0, s1);
}

/* area_span_max: IN/OUT rows and a part row at each end, at most. */
static size_t area_span_max(const struct sp_scaling *s)
{
    return s->in_height / s->out_height + 2;
}

static size_t area_scratch(const struct sp_image *src,
                           const struct sp_scaling *s)
{
    return sp_resample_scratch(src, s->out_width);
}

static void area_type(const struct sp_image *src, const struct sp_scaling *s,
                      struct sp_image *out)
{
    (void)s;
    sp_resample_type(src, out);
}

static void area_rows(const struct sp_image *band, size_t band_y0,
                      const struct sp_scaling *s, size_t y0, size_t y1,
                      void *scratch, unsigned char *out)
{
    const struct sp_resample r = sizes(s);

    sp_resample_rows(band, band_y0, &r, y0, y1, scratch, out);
}

const struct sp_filter_row sp_filter_area = {
    .name = "area", .support = 0.5, .by_factor = 0, .enlarges = 0,
    .shrinks = 1, .span = area_span, .span_max = area_span_max,
    .scratch = area_scratch, .type = area_type, .rows = area_rows};
