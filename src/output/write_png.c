/* The streamed PNG encoder: libpng's write interface, a row at a time.
 * Samples of maxval 255 or 65535 go out as they are (8- or 16-bit PNG,
 * big-endian both in PNM and in PNG); a maxval below 255 is rescaled to 8
 * bits, one between 255 and 65535 to 16.  The zlib level is the caller's
 * (SP_PNG_LEVEL by default, zlib's and pamtopng's 6); every other zlib
 * setting is libpng's (its strategy, memory level and window), and each
 * row's filter is chosen by libpng's adaptive heuristic among all five
 * (none at level 0, where nothing is compressed). */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

#include "encode.h"

struct penc {
    png_structp png;
    png_infop info;
    FILE *f;
    sp_status write_err;    /* the errno of a failed write, or 0 */
    int oom;                /* an allocation of libpng's (or zlib's)
                               failed */
    unsigned bytes;         /* a sample's in the PNG: 1 or 2 */
    int rescale;            /* rows go through ROW, rescaled */
    unsigned char *row;     /* a row rescaled */
    char msg[SP_WHY_MAX - 8];
};

static void fail(png_structp png, png_const_charp msg)
{
    struct penc *e = png_get_error_ptr(png);

    snprintf(e->msg, sizeof e->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void warn(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;  /* libpng warns of what it wrote anyway */
}

static void write_bytes(png_structp png, png_bytep data, size_t n)
{
    struct penc *e = png_get_io_ptr(png);

    errno = 0;
    if (fwrite(data, 1, n, e->f) != n) {
        e->write_err = errno ? errno : EIO;
        png_error(png, "a write failed");
    }
}

/* alloc: libpng's and zlib's allocations, through malloc, a failure
 * remembered: libpng reports it in its own words, and it is ENOMEM. */
static png_voidp alloc(png_structp png, png_alloc_size_t n)
{
    void *p = malloc(n);

    if (p == NULL)
        ((struct penc *)png_get_mem_ptr(png))->oom = 1;
    return p;
}

static void release(png_structp png, png_voidp p)
{
    (void)png;
    free(p);
}

static void flush_none(png_structp png)
{
    (void)png;  /* the output is flushed as a whole at its close */
}

/* status_of: the status of the failure E met: a write's errno, ENOMEM,
 * or SP_E_ENCODE with libpng's words. */
static sp_status status_of(const struct penc *e, char *why)
{
    if (e->write_err != 0)
        return e->write_err;
    if (e->oom)
        return ENOMEM;
    snprintf(why, SP_WHY_MAX, "PNG: %s", e->msg);
    return SP_E_ENCODE;
}

static const int color_types[] = {PNG_COLOR_TYPE_GRAY,
                                  PNG_COLOR_TYPE_GRAY_ALPHA,
                                  PNG_COLOR_TYPE_RGB,
                                  PNG_COLOR_TYPE_RGB_ALPHA};

/* header: E's IHDR for LAYOUT and its settings, written. */
static sp_status header(struct penc *e, const struct sp_image *l,
                        int level, char *why)
{
    if (setjmp(png_jmpbuf(e->png)))
        return status_of(e, why);
    png_set_user_limits(e->png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
    png_set_write_fn(e->png, e, write_bytes, flush_none);
    png_set_IHDR(e->png, e->info, (png_uint_32)l->width,
                 (png_uint_32)l->height, (int)e->bytes * 8,
                 color_types[l->channels - 1], PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(e->png, level);
    png_set_filter(e->png, PNG_FILTER_TYPE_BASE,
                   level == 0 ? PNG_FILTER_NONE : PNG_ALL_FILTERS);
    png_write_info(e->png, e->info);
    return SP_OK;
}

static sp_status begin(FILE *f, const struct sp_image *layout,
                       const struct sp_encode_opts *opts, void **state,
                       char *why)
{
    struct penc *e = calloc(1, sizeof *e);
    int level = opts->compression >= 0 ? opts->compression : SP_PNG_LEVEL;

    *state = e;
    if (e == NULL)
        return ENOMEM;
    e->f = f;
    e->bytes = layout->maxval > 255 ? 2 : 1;
    e->rescale = layout->maxval != (e->bytes == 2 ? 65535u : 255u);
    if (e->rescale) {
        e->row = malloc(layout->width * layout->channels * e->bytes);
        if (e->row == NULL)
            return ENOMEM;
    }
    e->png = png_create_write_struct_2(PNG_LIBPNG_VER_STRING, e, fail, warn,
                                       e, alloc, release);
    if (e->png != NULL)
        e->info = png_create_info_struct(e->png);
    if (e->info == NULL)
        return ENOMEM;
    return header(e, layout, level, why);
}

static sp_status rows(void *state, const struct sp_image *img,
                      unsigned times, char *why)
{
    struct penc *e = state;

    if (setjmp(png_jmpbuf(e->png)))
        return status_of(e, why);
    for (size_t y = 0; y < img->height; y++) {
        const unsigned char *row = img->pixels + y * img->stride;

        if (e->rescale) {
            sp_samples_rescale(e->row, row, img->width, img->channels,
                               img->channels, img->sample_size, img->maxval,
                               e->bytes);
            row = e->row;
        }
        for (unsigned t = 0; t < times; t++)
            png_write_row(e->png, row);
    }
    return SP_OK;
}

static sp_status finish(void *state, char *why)
{
    struct penc *e = state;

    if (setjmp(png_jmpbuf(e->png)))
        return status_of(e, why);
    png_write_end(e->png, NULL);
    return SP_OK;
}

static void end(void *state)
{
    struct penc *e = state;

    if (e == NULL)
        return;
    png_destroy_write_struct(&e->png, &e->info);
    free(e->row);
    free(e);
}

const struct sp_stream_ops sp_stream_png = {begin, rows, finish, end};
