/* The PNG decoder: libpng's full interface on the input's bytes in memory
 * (a read function over a mapping or a buffer).  The samples are kept as
 * they are, as pngtopam gives them: 8-bit stay 8-bit, 16-bit stay 16-bit
 * (big-endian, the PNM layout), gray of 1, 2 or 4 bits one byte a sample
 * with maxval 2^bits - 1; a palette is expanded to RGB, a tRNS chunk to an
 * alpha channel (of low-bit gray here, keeping its maxval: pngtopam's);
 * no gamma is applied.  libpng's own limits on width and height
 * (1,000,000) are lifted: the caller's --max-pixels, checked from the
 * header, is the limit, and a file too short for the pixels it claims is
 * refused before they are allocated (sp_codec_ops.bound).  So the header
 * is read from IHDR alone: libpng allocates its rows (from the width) in
 * png_read_update_info, called only once the raster is decoded.  Every
 * ancillary chunk but tRNS is skipped unread, and before the first IDAT
 * iCCP and eXIf, the metadata (meta.h), which libpng reads: a profile
 * of SP_META_ICC_MAX bytes at most, inflated into that much memory at
 * most (png_set_chunk_malloc_max; a longer one, or a corrupt one, libpng
 * drops with a warning, its chunk skipped), an EXIF block of
 * SP_META_EXIF_MAX bytes at most (a longer one skipped unread:
 * exif_fits()).  Metadata never fails the image. */
#include "decode_impl.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

/* deflate's best ratio: a 258-byte match in two bits. */
#define DEFLATE_RATIO 1032

/* The most bytes libpng may read once the last row is decoded: the rest
 * of the zlib stream and the last IDAT's CRC (libpng reads IDAT data 8 KiB
 * at a time), then the chunks up to IEND.  libpng inflates whatever IDAT
 * data follows the image, and 1 MB of it inflated for 5 s; past this the
 * image is taken as complete (what follows is not checked) and IEND is
 * found by walking the chunks (iend_end). */
#define TAIL_MAX ((size_t)16 << 10)

struct pdec {
    png_structp png;
    png_infop info;
    const unsigned char *p;
    size_t len, off;
    int truncated;
    int complete;        /* TAIL_MAX passed after the last row */
    size_t tail;         /* bytes read since the last row was decoded */
    unsigned gray_key;   /* low-bit gray with tRNS: the transparent value,
                            alpha made here (0: none) */
    unsigned maxval;
    size_t row_bytes;    /* a row of the raster, as the header says it */
    unsigned long long least;  /* the fewest bytes the pixels fit in */
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

/* rows_done: libpng has decoded the last row (of the last pass). */
static int rows_done(png_structp png, png_infop info)
{
    return png_get_interlace_type(png, info) != PNG_INTERLACE_NONE
               ? png_get_current_pass_number(png) >= 7
               : png_get_current_row_number(png) >=
                     png_get_image_height(png, info);
}

static void read_bytes(png_structp png, png_bytep out, size_t n)
{
    struct pdec *d = png_get_io_ptr(png);

    if (d->rows != NULL && rows_done(png, d->info) &&
        (d->tail += n) > TAIL_MAX) {
        d->complete = 1;
        png_error(png, "the image is complete");
    }
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
    sp_status st = d->truncated ? SP_E_TRUNCATED : otherwise;

    /* a bad header's status names the format (sp_codec_ops.bad) */
    snprintf(why, SP_WHY_MAX, "%s%s", st == SP_E_BADHEADER ? "" : "PNG: ",
             d->msg);
    return st;
}

/* The chunks of the metadata, as png_set_keep_unknown_chunks lists
 * them. */
static const png_byte meta_chunks[] = "iCCP\0eXIf";

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
    png_set_user_limits(d->png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
    /* every ancillary chunk but tRNS skipped unread: none other is used,
     * and libpng allocates (and zeroes) the length some claim (pCAL, sCAL,
     * sPLT: up to 2 GiB) before reading them, and inflates others */
    png_set_keep_unknown_chunks(d->png, PNG_HANDLE_CHUNK_NEVER, NULL, -1);
    /* but the metadata (header()): a profile of SP_META_ICC_MAX at most */
    png_set_chunk_malloc_max(d->png, SP_META_ICC_MAX);
    *state = d;
    return SP_OK;
}

/* least_bytes: the fewest bytes W x H pixels of DEPTH bits, CHANNELS a
 * pixel, can be compressed to: a lower bound of the IDAT data. */
static unsigned long long least_bytes(png_uint_32 w, png_uint_32 h,
                                      int depth, int channels)
{
    unsigned long long pixels = (unsigned long long)w * h;

    /* divided first: 2^62 pixels of 64 bits would overflow */
    return pixels / (8 * DEFLATE_RATIO) * (unsigned)(depth * channels);
}

/* gray_key: low-bit gray with a tRNS chunk: its transparent value + 1, its
 * alpha then made by trns_alpha() as pngtopam makes it (0 or the maxval),
 * so that the samples keep their maxval; 0 for any other image. */
static unsigned gray_key(png_structp png, png_infop info, int depth,
                         int type)
{
    png_color_16p c;

    if (depth >= 8 || type != PNG_COLOR_TYPE_GRAY ||
        !png_get_tRNS(png, info, NULL, NULL, &c))
        return 0;
    return (c->gray & ((1u << depth) - 1)) + 1u;
}

/* channels_of: the channels of the raster decoded from an image of color
 * TYPE, tRNS chunk or not (TRNS), by the transforms header() sets. */
static unsigned channels_of(int type, int trns)
{
    switch (type) {
    case PNG_COLOR_TYPE_GRAY:       return 1u + (trns != 0);
    case PNG_COLOR_TYPE_GRAY_ALPHA: return 2;
    case PNG_COLOR_TYPE_RGB_ALPHA:  return 4;
    default:                        return 3u + (trns != 0);  /* RGB, PLTE */
    }
}

/* exif_fits: whether every eXIf chunk before the first IDAT of D's bytes
 * is whole in them and at most SP_META_EXIF_MAX bytes long.  libpng
 * allocates the length an eXIf chunk claims before it reads a byte of
 * it (a second one too, after a first it dropped), up to 2 GiB: unless
 * they fit, eXIf is skipped unread.  The chunks are walked by their
 * lengths, nothing read into libpng. */
static int exif_fits(const struct pdec *d)
{
    const unsigned char *p = d->p;
    size_t at = 8;

    while (d->len >= at + 12 && memcmp(p + at + 4, "IDAT", 4) != 0) {
        size_t n = (size_t)p[at] << 24 | (size_t)p[at + 1] << 16 |
                   (size_t)p[at + 2] << 8 | p[at + 3];
        int exif = memcmp(p + at + 4, "eXIf", 4) == 0;

        if (exif && (n > SP_META_EXIF_MAX || n > d->len - at - 12))
            return 0;
        if (n > d->len - at - 12)
            break;  /* libpng finds the file cut */
        at += 12 + n;
    }
    return 1;
}

/* read_meta: the profile and the EXIF block libpng read with the header
 * into META, for CHANNELS samples a pixel; after the header the chunks
 * are skipped unread again.  Returns 0 or ENOMEM. */
static sp_status read_meta(struct pdec *d, struct sp_meta *meta,
                           unsigned channels)
{
    png_charp name;
    int method;
    png_bytep p;
    png_uint_32 n;
    sp_status st = SP_OK;

    png_set_keep_unknown_chunks(d->png, PNG_HANDLE_CHUNK_NEVER, meta_chunks,
                                2);
    if (png_get_iCCP(d->png, d->info, &name, &method, &p, &n))
        st = sp_meta_set_icc(meta, p, n, channels);
    if (st == SP_OK && png_get_eXIf_1(d->png, d->info, &n, &p))
        st = sp_meta_set_exif(meta, p, n);
    return st;
}

static sp_status header(void *state, struct sp_header *hdr,
                        struct sp_meta *meta, char *why)
{
    struct pdec *d = state;
    png_structp png = d->png;
    png_infop info = d->info;
    png_uint_32 w, h;
    int depth, type, interlace, trns;
    sp_status st;

    if (setjmp(png_jmpbuf(png)))
        return status_of(d, SP_E_BADHEADER, why);
    /* the metadata read with the header (read_meta()) */
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_AS_DEFAULT, meta_chunks,
                                exif_fits(d) ? 2 : 1);
    png_read_info(png, info);
    png_get_IHDR(png, info, &w, &h, &depth, &type, &interlace, NULL, NULL);
    d->least = least_bytes(w, h, depth, png_get_channels(png, info));
    d->gray_key = gray_key(png, info, depth, type);
    trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    d->maxval = depth == 16 ? 65535 : 255;
    if (type == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (trns && d->gray_key == 0)
        png_set_tRNS_to_alpha(png);
    else if (depth < 8 && type == PNG_COLOR_TYPE_GRAY) {
        png_set_packing(png);  /* a byte a sample, the values kept */
        d->maxval = (1u << depth) - 1;
    }
    if (interlace != PNG_INTERLACE_NONE)
        (void)png_set_interlace_handling(png);
    /* no png_read_update_info() here: it allocates rows from the width */
    st = read_meta(d, meta, channels_of(type, trns));
    if (st == SP_OK)
        st = sp_decode_layout(hdr, w, h, channels_of(type, trns), d->maxval,
                              why);
    d->row_bytes = (size_t)w * hdr->channels * hdr->sample_size;
    return st;
}

/* trns_alpha: each of the H rows at OUT, STRIDE bytes apart, holds W gray
 * samples a byte each at its start: spread in place (from the end) into
 * gray and alpha pairs, alpha 0 where the gray is the tRNS value. */
static void trns_alpha(const struct pdec *d, unsigned char *out,
                       size_t w, size_t h, size_t stride)
{
    for (size_t y = 0; y < h; y++) {
        unsigned char *row = out + y * stride;

        for (size_t x = w; x-- > 0;) {
            unsigned char g = row[x];

            row[2 * x] = g;
            row[2 * x + 1] = g + 1u == d->gray_key ? 0 : (unsigned char)d->maxval;
        }
    }
}

static unsigned long long least(void *state)
{
    return ((struct pdec *)state)->least;
}

/* iend_end: the offset just past the IEND chunk, found by walking the
 * chunks from the signature by their lengths (none read into libpng,
 * none inflated), or 0 when the bytes end first. */
static size_t iend_end(const struct pdec *d)
{
    const unsigned char *p = d->p;
    size_t at = 8;

    while (d->len - at >= 12) {
        size_t n = (size_t)p[at] << 24 | (size_t)p[at + 1] << 16 |
                   (size_t)p[at + 2] << 8 | p[at + 3];

        if (n > d->len - at - 12)
            return 0;
        if (memcmp(p + at + 4, "IEND", 4) == 0)
            return at + 12 + n;
        at += 12 + n;
    }
    return 0;
}

static sp_status raster(void *state, unsigned char *out, char *why)
{
    struct pdec *d = state;
    png_structp png = d->png;
    png_uint_32 w = png_get_image_width(png, d->info);
    png_uint_32 h = png_get_image_height(png, d->info);
    size_t stride = d->row_bytes;

    free(d->rows);
    d->rows = malloc((size_t)h * sizeof *d->rows);
    if (d->rows == NULL)
        return ENOMEM;
    for (png_uint_32 y = 0; y < h; y++)
        d->rows[y] = out + (size_t)y * stride;
    if (setjmp(png_jmpbuf(png)) == 0) {
        png_read_update_info(png, d->info);
        /* libpng's rows must be the header's: they are written in OUT */
        if (png_get_rowbytes(png, d->info) * (d->gray_key ? 2 : 1) != stride)
            png_error(png, "the rows are not the header's");
        png_read_image(png, d->rows);
        png_read_end(png, NULL);
    } else if (!d->complete) {
        return status_of(d, SP_E_BADRASTER, why);
    } else if ((d->off = iend_end(d)) == 0) {
        d->truncated = 1;
        snprintf(d->msg, sizeof d->msg, "no IEND chunk");
        return status_of(d, SP_E_BADRASTER, why);
    }
    if (d->gray_key > 0)
        trns_alpha(d, out, w, h, stride);
    return SP_OK;
}

static size_t used(void *state)
{
    return ((struct pdec *)state)->off;
}

static void end(void *state)
{
    struct pdec *d = state;

    png_destroy_read_struct(&d->png, &d->info, NULL);
    free(d->rows);
    free(d);
}

const struct sp_codec_ops sp_decode_png = {
    "deflate packs 1032 bytes in one at best", SP_E_BADPNG,
    begin, header, least, raster, NULL, used, end};
