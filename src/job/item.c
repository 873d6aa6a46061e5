#include "item.h"

/* enlarge_rows: IT's rows of an enlarge or a copy, from the band of
 * source rows they read; the band starts at the first row that output
 * row FIRST reads. */
static sp_status enlarge_rows(const struct sp_item *it)
{
    size_t n = it->factor > 1 ? (size_t)it->factor : 1;
    size_t sy0 = it->y0 / n, sy1 = (it->y1 - 1) / n + 1, first = sy0 * n;
    unsigned char *d = it->dest;
    struct sp_image band;
    sp_status st;

    st = sp_source_rows(it->src, sy0, sy1, it->scratch, &band);
    if (st != SP_OK)
        return st;
    if (it->times == 1)
        sp_scale_rows(&band, it->factor, it->filter, it->y0 - first,
                      it->y1 - first, d);
    else
        for (size_t y = it->y0 - first; y < it->y1 - first;
             y += it->times, d += it->orow)
            sp_scale_rows(&band, it->factor, it->filter, y, y + 1, d);
    return SP_OK;
}

/* reduce_rows: IT's rows of a reduce, one at a time, each from only the
 * source rows it reads. */
static sp_status reduce_rows(const struct sp_item *it)
{
    size_t n = (size_t)-(long long)it->factor, h = it->src->img.height;
    struct sp_image band;
    sp_status st;

    for (size_t y = it->y0; y < it->y1; y++) {
        size_t sy = y * n;
        size_t rows = it->filter != SP_FILTER_BOX ? 1
                      : h - sy < n               ? h - sy
                                                 : n;

        st = sp_source_rows(it->src, sy, sy + rows, it->scratch, &band);
        if (st != SP_OK)
            return st;
        sp_scale_rows(&band, it->factor, it->filter, 0, 1,
                      it->dest + (y - it->y0) * it->orow);
    }
    return SP_OK;
}

static sp_status scale(void *arg)
{
    const struct sp_item *it = arg;

    return it->factor < -1 ? reduce_rows(it) : enlarge_rows(it);
}

sp_status sp_item_scale(struct sp_item *it)
{
    return sp_source_guard(it->src, scale, it);
}
