/* scale_lib.c: what the scale kernels' suites (test_scale_*.c) share: their
 * includes and scale_all, one whole image scaled. */
#include "scale_lib.h"

/* scale_all: sp_scale_size + sp_image_alloc + sp_scale_rows over all rows. */
void scale_all(const struct sp_image *src, int factor,
               enum sp_reduce filter, struct sp_image *dst)
{
    size_t ow, oh;

    ck_assert_int_eq(sp_scale_size(src->width, src->height, factor, &ow, &oh),
                     SP_OK);
    ck_assert_int_eq(sp_image_alloc(dst, ow, oh, src->channels,
                                    src->sample_size, src->maxval), SP_OK);
    /* Garbage in the output shows rows the kernel forgot. */
    memset(dst->pixels, 0xa5, dst->base_len);
    sp_scale_rows(src, factor, filter, 0, oh, dst->pixels);
}
