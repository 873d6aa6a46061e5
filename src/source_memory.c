/* The memory backend: an image read or decoded into memory (read(),
 * standard input, plain rasters).  Its rows are used in place, nothing can
 * fault, and its buffer is kept until the release frees it. */
#include "source.h"

const unsigned char *sp_source_in_place(struct sp_source *s, size_t y0,
                                        size_t y1, unsigned char *scratch,
                                        sp_status *st)
{
    (void)y1;
    (void)scratch;
    (void)st;
    return s->img.pixels + y0 * s->img.stride;
}

size_t sp_source_no_scratch(const struct sp_source *s, size_t rows)
{
    (void)s;
    (void)rows;
    return 0;
}

void sp_source_keep(struct sp_source *s, size_t y)
{
    (void)s;
    (void)y;
}

sp_status sp_source_unguarded(sp_status (*fn)(void *arg), void *arg)
{
    return fn(arg);
}

const struct sp_source_ops sp_source_memory = {
    .rows = sp_source_in_place,
    .scratch = sp_source_no_scratch,
    .done_before = sp_source_keep,
    .guard = sp_source_unguarded,
};
