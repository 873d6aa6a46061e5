#include "item.h"

#include <stdint.h>
#include <string.h>

#include "plan.h"

/* kernel_scratch: the filter's part of a thread's scratch, first, with
 * room to align its start to 16 bytes (a thread's scratch follows the
 * chunks, of any size), in whole 64-byte lines; none for an enlarge or a
 * copy. */
static size_t kernel_scratch(const struct sp_source *src,
                             const struct sp_geom *g,
                             const struct sp_filter_row *filter)
{
    const struct sp_filter_row *f = sp_plan_filter(g, filter);
    struct sp_scaling s;
    size_t n;

    sp_plan_scaling(g, &s);
    n = f != NULL ? f->scratch(&src->img, &s) : 0;
    /* a crop's row of the cover, whose middle the output takes */
    if (f != NULL && g->cover_width != 0) {
        struct sp_image type;

        f->type(&src->img, &s, &type);
        n += sp_image_row_bytes(&type, g->cover_width);
    }
    n = n > 0 ? n + 16 : 0;
    return (n + 63) / 64 * 64;
}

/* kernel_start: the filter's part of IT's scratch, aligned. */
static void *kernel_start(const struct sp_item *it)
{
    return (void *)(((uintptr_t)it->scratch + 15) & ~(uintptr_t)15);
}

size_t sp_item_scratch(const struct sp_source *src, const struct sp_geom *g,
                       const struct sp_filter_row *filter,
                       size_t band_rows)
{
    return kernel_scratch(src, g, filter) +
           sp_source_scratch(src, band_rows);
}

/* source_scratch: the source's part of IT's scratch. */
static unsigned char *source_scratch(const struct sp_item *it)
{
    return it->scratch != NULL
               ? it->scratch + kernel_scratch(it->src, it->geom, it->filter)
               : NULL;
}

/* enlarge_rows: IT's rows of an enlarge or a copy, from the band of
 * source rows they read; the band starts at the first row that output
 * row FIRST reads. */
static sp_status enlarge_rows(const struct sp_item *it)
{
    const int factor = it->geom->factor;
    size_t n = factor > 1 ? (size_t)factor : 1;
    size_t sy0 = it->y0 / n, sy1 = (it->y1 - 1) / n + 1, first = sy0 * n;
    unsigned char *d = it->dest;
    struct sp_image band;
    sp_status st;

    st = sp_source_rows(it->src, sy0, sy1, source_scratch(it), &band);
    if (st != SP_OK)
        return st;
    if (it->times == 1)
        sp_scale_rows(&band, factor, SP_REDUCE_SAMPLE, it->y0 - first,
                      it->y1 - first, d);
    else
        for (size_t y = it->y0 - first; y < it->y1 - first;
             y += it->times, d += it->orow)
            sp_scale_rows(&band, factor, SP_REDUCE_SAMPLE, y, y + 1, d);
    return SP_OK;
}

/* filtered_rows: IT's rows of a reduce or a resample by filter F, one at
 * a time, each from only the source rows its span names; a crop's each
 * made as the cover's row (geom's CROP_Y lower) in the scratch after the
 * kernel's, the output taking its middle (from CROP_X). */
static sp_status filtered_rows(const struct sp_item *it,
                               const struct sp_filter_row *f)
{
    const struct sp_geom *g = it->geom;
    unsigned char *scratch = source_scratch(it);
    void *kernel = kernel_start(it);
    unsigned char *cover = NULL;
    size_t px = 0;
    struct sp_scaling s;
    struct sp_image band;
    sp_status st;

    sp_plan_scaling(g, &s);
    if (g->cover_width != 0) {
        cover = (unsigned char *)kernel + f->scratch(&it->src->img, &s);
        px = it->orow / g->out_width;
    }
    for (size_t y = it->y0; y < it->y1; y++) {
        unsigned char *d = it->dest + (y - it->y0) * it->orow;
        size_t s0, s1;

        f->span(&s, y + g->crop_y, &s0, &s1);
        st = sp_source_rows(it->src, s0, s1, scratch, &band);
        if (st != SP_OK)
            return st;
        f->rows(&band, s0, &s, y + g->crop_y, y + g->crop_y + 1, kernel,
                cover != NULL ? cover : d);
        if (cover != NULL)
            memcpy(d, cover + g->crop_x * px, it->orow);
    }
    return SP_OK;
}

static sp_status scale(void *arg)
{
    const struct sp_item *it = arg;
    const struct sp_filter_row *f = sp_plan_filter(it->geom, it->filter);

    return f != NULL ? filtered_rows(it, f) : enlarge_rows(it);
}

sp_status sp_item_scale(struct sp_item *it)
{
    return sp_source_guard(it->src, scale, it);
}
