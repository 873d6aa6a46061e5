/* The row source: each call is the input's load path's (input_path.h). */
#include "source.h"

#include <string.h>

#include "input.h"
#include "input_path.h"

void sp_source_open(struct sp_source *s, struct sp_input *in, size_t grain)
{
    s->in = in;
    s->img = in->img;
    in->held.grain = grain;
}

sp_status sp_source_rows(struct sp_source *s, size_t y0, size_t y1,
                         unsigned char *scratch, struct sp_image *band)
{
    sp_status st = SP_OK;
    const unsigned char *p = s->in->path->rows(s->in, y0, y1, scratch, &st);

    if (p == NULL)
        return st;
    /* The view's fields alone: the kernels need no tuple type. */
    *band = (struct sp_image){
        .backing = SP_BACKING_NONE, .pixels = (unsigned char *)p,
        .width = s->img.width, .height = y1 - y0, .stride = s->img.stride,
        .channels = s->img.channels, .sample_size = s->img.sample_size,
        .maxval = s->img.maxval, .packed = s->img.packed,
        .alpha = s->img.alpha, .magic = s->img.magic};
    return SP_OK;
}

size_t sp_source_scratch(const struct sp_source *s, size_t rows)
{
    return s->in->path->scratch(s->in, rows);
}

void sp_source_done_before(struct sp_source *s, size_t y)
{
    s->in->path->done_before(s->in, y);
}

sp_status sp_source_guard(const struct sp_source *s,
                          sp_status (*fn)(void *arg), void *arg)
{
    return s->in->path->guard(fn, arg);
}

sp_status sp_source_check(const struct sp_source *s)
{
    return s->in != NULL && s->in->path != NULL
               ? s->in->path->check(s->in)
               : SP_OK;
}

sp_status sp_source_release(struct sp_source *s)
{
    sp_status st = s->in != NULL ? sp_input_release(s->in) : SP_OK;

    s->in = NULL;
    memset(&s->img, 0, sizeof s->img);
    return st;
}
