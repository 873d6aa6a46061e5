/* The row source's dispatch: a backend a backing, and the calls every
 * backend shares. */
#include "source.h"

#include <string.h>

/* The backend of each way an image's memory is backed: a new load path is
 * a new backing, a new file and an entry here. */
static const struct sp_source_ops *const backends[] = {
    [SP_BACKING_NONE] = &sp_source_memory,
    [SP_BACKING_MALLOC] = &sp_source_memory,
    [SP_BACKING_MMAP] = &sp_source_mmap,
    [SP_BACKING_FILE] = &sp_source_pread,
};

void sp_source_open(struct sp_source *s, struct sp_image *img, size_t grain)
{
    s->ops = backends[img->backing];
    s->img = *img;
    s->grain = grain;
    memset(img, 0, sizeof *img);
}

sp_status sp_source_rows(struct sp_source *s, size_t y0, size_t y1,
                         unsigned char *scratch, struct sp_image *band)
{
    sp_status st = SP_OK;
    const unsigned char *p = s->ops->rows(s, y0, y1, scratch, &st);

    if (p == NULL)
        return st;
    /* The view's fields alone: the bookkeeping (DROPPED) is the finishing
     * thread's to write while others ask for rows; the kernels need no
     * tuple type. */
    *band = (struct sp_image){
        .backing = SP_BACKING_NONE, .fd = -1, .pixels = (unsigned char *)p,
        .width = s->img.width, .height = y1 - y0, .stride = s->img.stride,
        .channels = s->img.channels, .sample_size = s->img.sample_size,
        .maxval = s->img.maxval, .packed = s->img.packed,
        .alpha = s->img.alpha, .magic = s->img.magic};
    return SP_OK;
}

size_t sp_source_scratch(const struct sp_source *s, size_t rows)
{
    return s->ops->scratch(s, rows);
}

void sp_source_done_before(struct sp_source *s, size_t y)
{
    s->ops->done_before(s, y);
}

sp_status sp_source_guard(const struct sp_source *s,
                          sp_status (*fn)(void *arg), void *arg)
{
    return s->ops->guard(fn, arg);
}

sp_status sp_source_check(const struct sp_source *s)
{
    return sp_image_check(&s->img);
}

sp_status sp_source_release(struct sp_source *s)
{
    sp_status st = sp_image_release(&s->img);

    s->ops = &sp_source_memory;
    return st;
}
