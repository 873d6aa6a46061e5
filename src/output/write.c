/* The output: sp_output's calls, which open the atomic file (outfile.c)
 * and hand the rows to the encoder the format's row names (outfmts.c): a
 * streamed one (PNG: write_png.c; JPEG: write_jpeg.c) or its put (PNM's
 * rows: write_pnm.c; the whole image: write_stb.c). */
#include "write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convert.h"
#include "encode.h"
#include "header.h"

sp_status sp_output_open(struct sp_output *o, const struct sp_target *t,
                         enum sp_outfmt fmt, enum sp_want want,
                         const struct sp_image *layout, int nowait,
                         char *why)
{
    sp_status st;

    why[0] = '\0';
    memset(o, 0, sizeof *o);
    sp_target_init(&o->to);
    if ((size_t)fmt >= sp_noutfmts || (unsigned)want >= SP_WANT_STB) {
        sp_outfmt_known(why);
        return SP_E_OUTFORMAT;
    }
    o->fmt = fmt;
    o->want = sp_outfmts[fmt].netpbm ? want : SP_WANT_STB;
    o->compression = -1;
    o->background = SP_BACKGROUND;
    o->stream = sp_outfmts[o->fmt].stream;
    /* Refused before the file exists, and before anything is scaled. */
    st = sp_convert_type(layout, o->want, &o->type, why);
    if (st == SP_OK)  /* the row's limits; PNM has none */
        st = sp_outfmt_fits(o->fmt, layout->width, layout->height,
                            o->type.channels, why);
    if (st != SP_OK)
        return st;
    st = sp_target_open(&o->to, t, nowait, why);
    o->splice = sp_outfmts[o->fmt].netpbm && o->to.pipe;
    if (st == SP_OK && sp_outfmts[o->fmt].netpbm) {
        errno = 0;
        st = sp_header_write(o->to.f, &o->type, why);
    }
    if (st != SP_OK)
        return sp_output_close(o, st);
    return SP_OK;
}

sp_status sp_output_next(struct sp_output *o, const struct sp_image *layout,
                         char *why)
{
    sp_status st;

    why[0] = '\0';
    if (!sp_outfmts[o->fmt].netpbm) {
        snprintf(why, SP_WHY_MAX, "the input holds more than one image and "
                 "this format holds one (write PNM, or split the input with "
                 "pamsplit)");
        return SP_E_ENCODE;
    }
    st = sp_convert_type(layout, o->want, &o->type, why);
    if (st != SP_OK)
        return st;
    errno = 0;
    return sp_header_write(o->to.f, &o->type, why);
}

/* converted: IMG's rows in O's type into *VIEW: IMG itself, or its rows
 * converted into O's buffer.  Returns 0, SP_E_TOOBIG or ENOMEM. */
static sp_status converted(struct sp_output *o, const struct sp_image *img,
                           struct sp_image *view)
{
    size_t row, need;

    if (!sp_convert_needed(img, &o->type) || img->height == 0) {
        *view = *img;
        return SP_OK;
    }
    row = sp_image_row_bytes(&o->type, img->width);
    if (__builtin_mul_overflow(row, img->height, &need))
        return SP_E_TOOBIG;
    if (need > o->conv_len) {
        unsigned char *p = realloc(o->conv, need);

        if (p == NULL)
            return ENOMEM;
        o->conv = p;
        o->conv_len = need;
    }
    for (size_t y = 0; y < img->height; y++)
        sp_convert_row(img, &o->type, img->width,
                       img->pixels + y * img->stride, o->conv + y * row,
                       o->background);
    *view = o->type;
    view->backing = SP_BACKING_NONE;
    view->pixels = o->conv;
    view->width = img->width;
    view->height = img->height;
    view->stride = row;
    return SP_OK;
}

/* stream_rows: VIEW's rows (in O's type), each TIMES times, to O's
 * streamed encoder: begun with the first rows, finished with the last.
 * After a failure it takes nothing more. */
static sp_status stream_rows(struct sp_output *o, const struct sp_image *view,
                             unsigned times, char *why)
{
    struct sp_encode_opts opts = {o->quality, o->compression, o->subsample,
                                  &o->meta, o->background};
    size_t n;
    sp_status st = SP_OK;

    if (view->width != o->type.width ||
        __builtin_mul_overflow(view->height, (size_t)times, &n) ||
        n > o->type.height - o->rows) {
        snprintf(why, SP_WHY_MAX, "%zu rows of %zu pixels do not fit a "
                 "%zux%zu image with %zu rows written", view->height,
                 view->width, o->type.width, o->type.height, o->rows);
        return SP_E_ENCODE;
    }
    if (o->broken)
        return SP_E_ENCODE;
    errno = 0;
    if (o->enc == NULL)
        st = o->stream->begin(o->to.f, &o->type, &opts, &o->enc, why);
    if (st == SP_OK && n > 0)
        st = o->stream->rows(o->enc, view, times, why);
    if (st == SP_OK && o->rows + n == o->type.height)
        st = o->stream->finish(o->enc, why);
    o->rows += n;
    o->broken = st != SP_OK;
    return st;
}

sp_status sp_output_put(struct sp_output *o, const struct sp_image *img,
                        char *why)
{
    struct sp_image view;
    sp_status st = converted(o, img, &view);

    if (st != SP_OK)
        return st;
    errno = 0;
    if (o->stream != NULL)
        return stream_rows(o, &view, 1, why);
    return sp_outfmts[o->fmt].put(&view, o->to.f, o->fmt, why);
}

sp_status sp_output_put_repeated(struct sp_output *o,
                                 const struct sp_image *img, unsigned times,
                                 const struct iovec *pages, char *why)
{
    struct sp_image view;
    sp_status st = converted(o, img, &view);

    if (st != SP_OK)
        return st;
    if (o->stream != NULL)
        return stream_rows(o, &view, times, why);
    if (o->splice && pages != NULL && view.pixels == img->pixels)
        return sp_pnm_put_repeated(&view, times, o->to.f, pages);
    if (times == 1)
        return sp_pnm_put_rows(&view, o->to.f);
    return sp_pnm_put_repeated(&view, times, o->to.f, NULL);
}

sp_status sp_output_close(struct sp_output *o, sp_status st)
{
    if (o->stream != NULL && o->to.f != NULL && st == SP_OK &&
        (o->broken || o->rows != o->type.height))
        st = SP_E_ENCODE;
    if (o->stream != NULL)
        o->stream->end(o->enc);
    st = sp_target_close(&o->to, st);
    free(o->conv);
    sp_meta_free(&o->meta);
    memset(o, 0, sizeof *o);
    sp_target_init(&o->to);
    return st;
}

int sp_output_whole(const char *path, enum sp_outfmt fmt)
{
    unsigned char head[6];
    /* not blocked by a FIFO: only a regular file can be whole */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    struct stat sb;
    int whole = 0;

    if (f == NULL) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) &&
        fread(head, 1, sizeof head, f) == sizeof head &&
        fseeko(f, 0, SEEK_SET) == 0)
        whole = sp_outfmts[fmt].whole(f, sb.st_size, head);
    fclose(f);
    return whole;
}
