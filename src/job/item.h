/* item.h: one item's output rows (plan.h), scaled from a row source.
 * Asks the source for the bands the rows read, and hands them to the
 * kernels (scale.h, resample.h), which know nothing of sources. */
#ifndef SP_ITEM_H
#define SP_ITEM_H

#include <stddef.h>

#include "job_types.h"
#include "scale.h"
#include "source.h"
#include "status.h"

struct sp_item {
    struct sp_source *src;
    const struct sp_geom *geom;  /* the image's (job_types.h) */
    const struct sp_filter_row *filter;  /* the job's (filter.h) */
    size_t y0, y1;         /* the output rows */
    unsigned times;        /* make one row of each TIMES (plan.h) */
    size_t orow;           /* bytes of an output row */
    unsigned char *dest;   /* (y1 - y0) / times packed output rows */
    unsigned char *scratch;  /* the thread's, sp_item_scratch() bytes (or
                                NULL when that is 0) */
};

/* sp_item_scratch: the bytes of a thread's scratch for items of G with
 * FILTER from SRC, whose requests read up to BAND_ROWS rows: the filter's
 * (filter.h: the resample's sums), then what the source copies rows into
 * (source.h). */
size_t sp_item_scratch(const struct sp_source *src, const struct sp_geom *g,
                       const struct sp_filter_row *filter,
                       size_t band_rows);

/* sp_item_scale: IT's rows into IT->dest, read under the source's guard
 * (sp_source_guard).  An enlarge or a copy asks for the band of source
 * rows the item reads; a reduce or a resample asks an output row at a
 * time for the rows its filter's span names (filter.h: one row in N to
 * sample, N for box, those it covers to resample), so that a source that
 * copies rows copies only those.  Returns 0 or the source's status. */
sp_status sp_item_scale(struct sp_item *it);

#endif
