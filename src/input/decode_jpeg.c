/* The JPEG decoder: libjpeg-turbo on the input's bytes in memory
 * (jpeg_mem_src: a mapping or a buffer), at full scale or, when the
 * caller asks (shrink-on-load, header.h), at a DCT scale of 1/2, 1/4 or
 * 1/8, with the library's defaults otherwise (djpeg's: islow DCT, fancy
 * upsampling), into 8-bit gray (a grayscale JPEG) or RGB; a CMYK or YCCK
 * JPEG is converted to RGB as jpegtopnm converts it (cmyk_rgb()).  Its
 * errors and its warnings (corrupt data, a
 * premature end) jump back as one status with the library's words: a
 * JPEG that libjpeg had to patch up is refused, not scaled.  EXIF
 * orientation is not applied: kept as djpeg and pamscale keep it. */
#include "decode_impl.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

/* The most scans a progressive JPEG may have: a file of many tiny scans
 * costs a full pass over the image each (libjpeg-turbo's TurboJPEG API
 * limits them alike, TJPARAM_SCANLIMIT). */
#define SCAN_LIMIT 500

struct jdec {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr err;
    struct jpeg_progress_mgr progress;
    jmp_buf jb;
    int code;       /* the message code that jumped */
    char msg[JMSG_LENGTH_MAX]; /* JMSG_LENGTH_MAX is 200 */
    const unsigned char *p;
    size_t len;
    int started;    /* jpeg_start_decompress was called */
    unsigned long long least;  /* the fewest bytes the pixels fit in */
    JSAMPROW cmyk;  /* a CMYK row, converted from: here, so a jump frees it */
};

static void fail(j_common_ptr c)
{
    struct jdec *d = (struct jdec *)c->client_data;

    d->code = c->err->msg_code;
    c->err->format_message(c, d->msg);
    longjmp(d->jb, 1);
}

/* emit: a warning (LEVEL < 0) is corrupt or missing data: a failure too;
 * trace messages are dropped. */
static void emit(j_common_ptr c, int level)
{
    if (level < 0)
        fail(c);
}

/* scans: a progressive JPEG of more than SCAN_LIMIT scans is refused. */
static void scans(j_common_ptr c)
{
    struct jdec *d = (struct jdec *)c->client_data;

    if (d->cinfo.input_scan_number > SCAN_LIMIT) {
        d->code = -1;
        snprintf(d->msg, sizeof d->msg, "more than %d scans",
                 SCAN_LIMIT);
        longjmp(d->jb, 1);
    }
}

static sp_status status_of(const struct jdec *d, sp_status otherwise,
                           char *why)
{
    snprintf(why, SP_WHY_MAX, "JPEG: %s", d->msg);
    return d->code == JWRN_JPEG_EOF ? SP_E_TRUNCATED : otherwise;
}

static sp_status begin(const unsigned char *p, size_t len, void **state)
{
    struct jdec *d = calloc(1, sizeof *d);

    if (d == NULL)
        return ENOMEM;
    d->p = p;
    d->len = len;
    d->cinfo.err = jpeg_std_error(&d->err);
    d->err.error_exit = fail;
    d->err.emit_message = emit;
    d->cinfo.client_data = d;
    if (setjmp(d->jb)) {  /* out of memory creating it */
        jpeg_destroy_decompress(&d->cinfo);
        free(d);
        return ENOMEM;
    }
    jpeg_create_decompress(&d->cinfo);
    /* after: jpeg_create_decompress zeroes all but err and client_data */
    d->progress.progress_monitor = scans;
    d->cinfo.progress = &d->progress;
    *state = d;
    return SP_OK;
}

/* least_bytes: the fewest bytes C's pixels can be Huffman coded in: the
 * first scan codes every block of a component (a progressive JPEG's must
 * be a DC scan: libjpeg warns otherwise, a failure here), in a bit a block
 * at least, and a libjpeg that runs out of bits warns too.  Arithmetic
 * coding has no such floor: 0. */
static unsigned long long least_bytes(const struct jpeg_decompress_struct *c)
{
    unsigned long long least = 0;

    if (c->arith_code)
        return 0;
    for (int i = 0; i < c->num_components; i++) {
        const jpeg_component_info *comp = &c->comp_info[i];
        unsigned long long blocks =
            (unsigned long long)comp->width_in_blocks * comp->height_in_blocks;

        if (i == 0 || blocks < least)
            least = blocks;
    }
    return least / 8;
}

static sp_status header(void *state, struct sp_header *hdr, char *why)
{
    struct jdec *d = state;
    struct jpeg_decompress_struct *c = &d->cinfo;

    if (setjmp(d->jb))
        return status_of(d, SP_E_BADHEADER, why);
    jpeg_mem_src(c, d->p, (unsigned long)d->len);
    (void)jpeg_read_header(c, TRUE);
    switch (c->jpeg_color_space) {
    case JCS_GRAYSCALE:
        c->out_color_space = JCS_GRAYSCALE;
        break;
    case JCS_CMYK:
    case JCS_YCCK:
        c->out_color_space = JCS_CMYK;  /* then made RGB: cmyk_rgb() */
        break;
    default:
        c->out_color_space = JCS_RGB;
        break;
    }
    hdr->shrink_max = 8;
    d->least = least_bytes(c);
    return sp_decode_layout(hdr, c->image_width, c->image_height,
                            c->out_color_space == JCS_GRAYSCALE ? 1 : 3, 255,
                            why);
}

/* shrink: the DCT scaled to 1/hdr->shrink (libjpeg's scale_denom: 2, 4
 * or 8), so that the library decodes ceil(width/shrink) x
 * ceil(height/shrink) pixels, each block's inverse DCT on fewer
 * coefficients: shrink-on-load. */
static sp_status shrink(void *state, struct sp_header *hdr, char *why)
{
    struct jdec *d = state;
    struct jpeg_decompress_struct *c = &d->cinfo;
    unsigned asked = hdr->shrink, most = hdr->shrink_max;
    sp_status st;

    if (setjmp(d->jb))
        return status_of(d, SP_E_BADHEADER, why);
    c->scale_num = 1;
    c->scale_denom = asked;
    jpeg_calc_output_dimensions(c);
    st = sp_decode_layout(hdr, c->output_width, c->output_height,
                          c->out_color_space == JCS_GRAYSCALE ? 1 : 3, 255, why);
    hdr->shrink = asked;
    hdr->shrink_max = most;
    return st;
}

/* cmyk_rgb: the W CMYK pixels at IN as RGB at OUT, as jpegtopnm converts
 * them: an Adobe JPEG (one with an APP14 marker: Photoshop's, and every
 * CMYK JPEG libjpeg writes) stores its inks inverted, so that R = C K /
 * 255; any other, R = (255 - C) (255 - K) / 255; rounded down. */
static void cmyk_rgb(const struct jdec *d, const JSAMPLE *in,
                     unsigned char *out, size_t w)
{
    int adobe = d->cinfo.saw_Adobe_marker;

    for (size_t x = 0; x < w; x++, in += 4, out += 3) {
        unsigned k = adobe ? in[3] : 255u - in[3];

        for (int i = 0; i < 3; i++)
            out[i] = (unsigned char)((adobe ? in[i] : 255u - in[i]) * k /
                                     255u);
    }
}

static unsigned long long least(void *state)
{
    return ((struct jdec *)state)->least;
}

static sp_status raster(void *state, unsigned char *out, char *why)
{
    struct jdec *d = state;
    struct jpeg_decompress_struct *c = &d->cinfo;
    size_t stride;

    if (setjmp(d->jb))
        return status_of(d, SP_E_BADRASTER, why);
    d->started = 1;
    (void)jpeg_start_decompress(c);
    stride = (size_t)c->output_width * (c->output_components == 1 ? 1 : 3);
    if (c->out_color_space == JCS_CMYK &&
        (d->cmyk = malloc((size_t)c->output_width * 4)) == NULL)
        return ENOMEM;
    while (c->output_scanline < c->output_height) {
        JSAMPROW row = out + (size_t)c->output_scanline * stride;

        if (d->cmyk == NULL)
            (void)jpeg_read_scanlines(c, &row, 1);
        else if (jpeg_read_scanlines(c, &d->cmyk, 1) == 1)
            cmyk_rgb(d, d->cmyk, row, c->output_width);
    }
    (void)jpeg_finish_decompress(c);
    return SP_OK;
}

static size_t used(void *state)
{
    struct jdec *d = state;

    return d->len - d->cinfo.src->bytes_in_buffer;
}

static void end(void *state)
{
    struct jdec *d = state;

    jpeg_destroy_decompress(&d->cinfo);
    free(d->cmyk);
    free(d);
}

const struct sp_codec_ops sp_codec_jpeg = {
    "JPEG", "Huffman coding takes a bit an 8 x 8 block at least",
    begin, header, least, raster, shrink, used, end};
