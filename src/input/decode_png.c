/* The PNG decoder: libpng's full interface on the input's bytes in memory
 * (a read function over a mapping or a buffer).  The samples are kept as
 * they are, as pngtopam gives them: 8-bit stay 8-bit, 16-bit stay 16-bit
 * (big-endian, the PNM layout), gray of 1, 2 or 4 bits one byte a sample
 * with maxval 2^bits - 1; a palette is expanded to RGB, a tRNS chunk to an
 * alpha channel (then low-bit gray is scaled to 8 bits, as libpng does);
 * no gamma is applied.  libpng's own limits on width and height
 * (1,000,000) are lifted: the caller's --max-pixels, checked from the
 * header, is the limit. */
#include "decode_impl.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

struct pdec {
    png_structp png;
    png_infop info;
    const unsigned char *p;
    size_t len, off;
    int truncated;
    png_bytep *rows;  /* the raster's rows: here, so that a jump frees them */
    char msg[SP_WHY_MAX - 8];
};

static void fail(png_structp png, png_const_charp msg)
{
    struct pdec *d = png_get_error_ptr(png);

    snprintf(d->msg, sizeof d->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void warn(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;  /* an ancillary chunk dropped: the pixels are whole */
}

static void read_bytes(png_structp png, png_bytep out, size_t n)
{
    struct pdec *d = png_get_io_ptr(png);

    if (n > d->len - d->off) {
        d->truncated = 1;
        png_error(png, "the file ends early");
    }
    memcpy(out, d->p + d->off, n);
    d->off += n;
}

static sp_status status_of(const struct pdec *d, sp_status otherwise,
                           char *why)
{
    snprintf(why, SP_WHY_MAX, "PNG: %s", d->msg);
    return d->truncated ? SP_E_TRUNCATED : otherwise;
}

static sp_status begin(const unsigned char *p, size_t len, void **state)
{
    struct pdec *d = calloc(1, sizeof *d);

    if (d == NULL)
        return ENOMEM;
    d->p = p;
    d->len = len;
    d->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, d, fail, warn);
    if (d->png != NULL)
        d->info = png_create_info_struct(d->png);
    if (d->info == NULL) {
        png_destroy_read_struct(&d->png, NULL, NULL);
        free(d);
        return ENOMEM;
    }
    png_set_read_fn(d->png, d, read_bytes);
    png_set_user_limits(d->png, 0x7fffffff, 0x7fffffff);
    *state = d;
    return SP_OK;
}

static sp_status header(void *state, struct sp_header *hdr, char *why)
{
    struct pdec *d = state;
    png_structp png = d->png;
    png_infop info = d->info;
    png_uint_32 w, h;
    int depth, type, interlace;
    volatile unsigned maxval = 0;

    if (setjmp(png_jmpbuf(png)))
        return status_of(d, SP_E_BADHEADER, why);
    png_read_info(png, info);
    png_get_IHDR(png, info, &w, &h, &depth, &type, &interlace, NULL, NULL);
    if (type == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS))
        png_set_tRNS_to_alpha(png);
    else if (depth < 8 && type == PNG_COLOR_TYPE_GRAY) {
        png_set_packing(png);  /* a byte a sample, the values kept */
        maxval = (1u << depth) - 1;
    }
    if (interlace != PNG_INTERLACE_NONE)
        (void)png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (maxval == 0)
        maxval = png_get_bit_depth(png, info) == 16 ? 65535 : 255;
    return sp_decode_layout(hdr, w, h, png_get_channels(png, info), maxval,
                            why);
}

static sp_status raster(void *state, unsigned char *out, char *why)
{
    struct pdec *d = state;
    png_structp png = d->png;
    png_uint_32 h = png_get_image_height(png, d->info);
    size_t stride = png_get_rowbytes(png, d->info);

    free(d->rows);
    d->rows = malloc((size_t)h * sizeof *d->rows);
    if (d->rows == NULL)
        return ENOMEM;
    for (png_uint_32 y = 0; y < h; y++)
        d->rows[y] = out + (size_t)y * stride;
    if (setjmp(png_jmpbuf(png)))
        return status_of(d, SP_E_BADRASTER, why);
    png_read_image(png, d->rows);
    png_read_end(png, NULL);
    return SP_OK;
}

static void end(void *state)
{
    struct pdec *d = state;

    png_destroy_read_struct(&d->png, &d->info, NULL);
    free(d->rows);
    free(d);
}

const struct sp_codec_ops sp_codec_png = {begin, header, raster, NULL, end};
