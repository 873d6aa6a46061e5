/* item.h: one item's output rows (plan.h), scaled from a row source.
 * Asks the source for the bands the rows read, and hands them to the
 * scale kernels (scale.h), which know nothing of sources. */
#ifndef SP_ITEM_H
#define SP_ITEM_H

#include <stddef.h>

#include "scale.h"
#include "source.h"
#include "status.h"

struct sp_item {
    struct sp_source *src;
    int factor;
    enum sp_filter filter;
    size_t y0, y1;         /* the output rows */
    unsigned times;        /* make one row of each TIMES (plan.h) */
    size_t orow;           /* bytes of an output row */
    unsigned char *dest;   /* (y1 - y0) / times packed output rows */
    unsigned char *scratch;  /* the thread's (plan.h), or NULL */
};

/* sp_item_scale: IT's rows into IT->dest, read under the source's guard
 * (sp_source_guard).  An enlarge or a copy asks for the band of source
 * rows the item reads; a reduce asks an output row at a time for the rows
 * that row reads (one row in N to sample, N for box), so that a source
 * that copies rows copies only those.  Returns 0 or the source's status. */
sp_status sp_item_scale(struct sp_item *it);

#endif
