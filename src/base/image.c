#include "image.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


sp_status sp_image_raster_size(size_t width, size_t height,
                               const struct sp_image *layout, size_t *size)
{
    size_t row, total;

    if (layout->packed)
        row = width / 8 + (width % 8 != 0);
    else if (__builtin_mul_overflow(width, (size_t)layout->channels *
                                               layout->sample_size, &row))
        return SP_E_TOOBIG;
    if (__builtin_mul_overflow(row, height, &total))
        return SP_E_TOOBIG;
    *size = total;
    return SP_OK;
}

sp_status sp_image_alloc_like(struct sp_image *img, size_t width,
                              size_t height, const struct sp_image *layout)
{
    struct sp_image type = *layout;  /* LAYOUT may be IMG */
    size_t size;
    sp_status st;

    memset(img, 0, sizeof *img);
    st = sp_image_raster_size(width, height, &type, &size);
    if (st != SP_OK)
        return st;
    /* malloc(0) may return NULL; a zero-pixel image never reaches here,
     * but keep the allocation non-zero to make NULL mean ENOMEM. */
    img->base = malloc(size ? size : 1);
    if (img->base == NULL)
        return ENOMEM;
    img->backing = SP_BACKING_MALLOC;
    img->base_len = size;
    img->pixels = img->base;
    img->width = width;
    img->height = height;
    img->channels = type.channels;
    img->sample_size = type.sample_size;
    img->maxval = type.maxval;
    img->packed = type.packed;
    img->alpha = type.alpha;
    img->magic = type.magic;
    memcpy(img->tuple_type, type.tuple_type, sizeof img->tuple_type);
    img->stride = sp_image_row_bytes(img, width);
    return SP_OK;
}

sp_status sp_image_alloc(struct sp_image *img, size_t width, size_t height,
                         unsigned channels, unsigned sample_size,
                         unsigned maxval)
{
    struct sp_image type = {.channels = channels, .sample_size = sample_size,
                            .maxval = maxval};

    type.magic = channels == 1 ? '5' : channels == 3 ? '6' : '7';
    snprintf(type.tuple_type, sizeof type.tuple_type, "%s",
             channels == 1 ? "GRAYSCALE" : channels == 3 ? "RGB" : "");
    return sp_image_alloc_like(img, width, height, &type);
}

const char *sp_image_kind(const struct sp_image *img)
{
    static __thread char buf[SP_TUPLE_MAX + 8];

    if (img->magic == '7') {
        snprintf(buf, sizeof buf, "PAM %s", img->tuple_type[0] != '\0'
                                                ? img->tuple_type
                                                : "(no tuple type)");
        return buf;
    }
    return img->packed ? "PBM" : img->channels == 3 ? "color" : "gray";
}

sp_status sp_image_release(struct sp_image *img)
{
    sp_status st = SP_OK;

    if (img->backing == SP_BACKING_MALLOC)
        free(img->base);
    else if (img->backing == SP_BACKING_OWNED)
        st = img->release(img->owner);
    memset(img, 0, sizeof *img);
    return st;
}

/* copy_run: N pixels of PX bytes, from S stepping STEP bytes a pixel, to
 * D packed; the sizes a pixel can have spelled out, so that each copy is
 * a move of its size. */
static void copy_run(unsigned char *d, const unsigned char *s,
                     ptrdiff_t step, size_t n, size_t px)
{
#define RUN(P)                                                               \
    for (size_t i = 0; i < n; i++, d += (P), s += step)                      \
        memcpy(d, s, (P));                                                   \
    return
    switch (px) {
    case 1: RUN(1);
    case 2: RUN(2);
    case 3: RUN(3);
    case 4: RUN(4);
    case 6: RUN(6);
    case 8: RUN(8);
    default: RUN(px);
    }
#undef RUN
}

sp_status sp_image_orient(struct sp_image *dst, const struct sp_image *src,
                          unsigned orientation)
{
    const size_t ws = src->width, hs = src->height;
    const size_t px = sp_image_pixel_size(src);
    const ptrdiff_t row = (ptrdiff_t)src->stride, pix = (ptrdiff_t)px;
    const int swap = orientation >= 5 && orientation <= 8;
    sp_status st;

    memset(dst, 0, sizeof *dst);
    if (src->packed || orientation < 1 || orientation > 8)
        return SP_E_USAGE;
    st = sp_image_alloc_like(dst, swap ? hs : ws, swap ? ws : hs, src);
    if (st != SP_OK)
        return st;
    /* Row Y of DST walks SRC from the pixel at (SX, SY) by STEP bytes: a
     * row of SRC forwards or backwards (1 to 4), or a column (5 to 8).
     * A column walk touches a cache line a pixel: DST is made in tiles
     * of TILE x TILE pixels, whose source lines stay in the cache from
     * one row of the tile to the next (4,000 x 3,000 RGB: a third of
     * the time of whole rows). */
    const size_t tile = swap ? 64 : dst->width;

    for (size_t tx = 0; tx < dst->width; tx += tile) {
        size_t n = dst->width - tx < tile ? dst->width - tx : tile;

        for (size_t y = 0; y < dst->height; y++) {
            size_t sx = 0, sy = 0;
            ptrdiff_t step = pix;

            switch (orientation) {
            case 1: sx = 0, sy = y, step = pix; break;
            case 2: sx = ws - 1, sy = y, step = -pix; break;
            case 3: sx = ws - 1, sy = hs - 1 - y, step = -pix; break;
            case 4: sx = 0, sy = hs - 1 - y, step = pix; break;
            case 5: sx = y, sy = 0, step = row; break;
            case 6: sx = y, sy = hs - 1, step = -row; break;
            case 7: sx = ws - 1 - y, sy = hs - 1, step = -row; break;
            case 8: sx = ws - 1 - y, sy = 0, step = row; break;
            }
            copy_run(dst->pixels + y * dst->stride + tx * px,
                     src->pixels + sy * src->stride + sx * px +
                         (ptrdiff_t)tx * step,
                     step, n, px);
        }
    }
    return SP_OK;
}
