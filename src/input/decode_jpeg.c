/* The JPEG decoder: libjpeg-turbo on the input's bytes in memory
 * (jpeg_mem_src: a mapping or a buffer), at full scale or, when the
 * caller asks (shrink-on-load, header.h), at a DCT scale of 1/2, 1/4 or
 * 1/8 (a progressive JPEG's decoding stopped after the last scan that
 * scale needs: plan_of()), with the library's defaults otherwise
 * (djpeg's: islow DCT, fancy upsampling), into 8-bit gray (a grayscale JPEG) or RGB; a CMYK or YCCK
 * JPEG is converted to RGB (cmyk_rgb(): as jpegtopnm when it has an Adobe
 * marker, by the marker's absence otherwise).  Its
 * errors and its warnings (corrupt data, a
 * premature end) jump back as one status with the library's words: a
 * JPEG that libjpeg had to patch up is refused, not scaled.  Its
 * metadata (meta.h) is read with the header: the first APP1 marker that
 * holds EXIF, and the ICC profile of its APP2 markers (libjpeg-turbo's
 * jpeg_read_icc_profile), a profile whose markers do not add up dropped
 * with no failure; the markers kept meanwhile are at most the input's
 * bytes.  The EXIF orientation is not applied: kept as djpeg and pamscale
 * keep it. */
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

/* The most pixels of an arithmetic-coded JPEG.  Its coding has no least
 * size a file's length could be checked against (sp_decode_bound): a
 * uniform image takes a few bytes whatever its size, and libjpeg feeds
 * zeros past the end of a scan's data without a warning; so a header's
 * claim is bounded here instead (jpegtran makes such a file
 * Huffman-coded, whose length bounds its pixels). */
#define ARITH_PIXELS_MAX ((unsigned long long)1 << 26)

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
    size_t eoi;     /* the bytes to EOI's end, when decoding stopped early */
    int quiet;      /* a warning is no failure: the ICC markers are read */
};

/* The most components a frame may have (the JPEG standard's) and the
 * coefficients that block smoothing reads (jdcoefct.c's SAVED_COEFS). */
#define MAX_COMPS 4
#define SMOOTHED 10

/* A progressive JPEG's scans as a walk over its markers finds them. */
struct plan {
    int ncomp;                 /* the frame's components */
    int id[MAX_COMPS];         /* their identifiers, in frame order */
    int al[MAX_COMPS][SMOOTHED]; /* the finest Al seen, -1 for none yet */
    int last;                  /* the last scan the output needs, from 1 */
    int nscans;                /* the scans so far */
    size_t eoi;                /* the offset just past EOI */
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
    if (level < 0 && !((struct jdec *)c->client_data)->quiet)
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
    sp_status st = d->code == JWRN_JPEG_EOF ? SP_E_TRUNCATED : otherwise;

    /* a bad header's status names the format (sp_codec_ops.bad) */
    snprintf(why, SP_WHY_MAX, "%s%s", st == SP_E_BADHEADER ? "" : "JPEG: ",
             d->msg);
    return st;
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
 * coding has no such floor: 0 (ARITH_PIXELS_MAX bounds it). */
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

/* meta_of: the EXIF block and the ICC profile of C's markers into META,
 * for CHANNELS samples a pixel; a profile libjpeg finds bogus (it warns)
 * is none.  Returns 0 or ENOMEM. */
static sp_status meta_of(struct jdec *d, struct sp_meta *meta,
                         unsigned channels)
{
    struct jpeg_decompress_struct *c = &d->cinfo;
    JOCTET *icc = NULL;
    unsigned int len = 0;
    sp_status st = SP_OK;

    for (jpeg_saved_marker_ptr m = c->marker_list; m != NULL; m = m->next)
        if (m->marker == JPEG_APP0 + 1 &&
            m->data_length > SP_META_EXIF_HEAD &&
            memcmp(m->data, "Exif\0", SP_META_EXIF_HEAD) == 0) {
            st = sp_meta_set_exif(meta, m->data + SP_META_EXIF_HEAD,
                                  m->data_length - SP_META_EXIF_HEAD);
            break;
        }
    d->quiet = 1;
    if (st == SP_OK && jpeg_read_icc_profile(c, &icc, &len))
        st = sp_meta_set_icc(meta, icc, len, channels);
    d->quiet = 0;
    free(icc);
    return st;
}

static sp_status header(void *state, struct sp_header *hdr,
                        struct sp_meta *meta, char *why)
{
    struct jdec *d = state;
    struct jpeg_decompress_struct *c = &d->cinfo;
    unsigned channels;
    sp_status st;

    if (setjmp(d->jb))
        return status_of(d, SP_E_BADHEADER, why);
    jpeg_mem_src(c, d->p, (unsigned long)d->len);
    jpeg_save_markers(c, JPEG_APP0 + 1, 0xffff);  /* EXIF */
    jpeg_save_markers(c, JPEG_APP0 + 2, 0xffff);  /* ICC */
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
    if (c->arith_code &&
        (unsigned long long)c->image_width * c->image_height >
            ARITH_PIXELS_MAX) {
        snprintf(why, SP_WHY_MAX, "JPEG: %u x %u pixels, arithmetic-coded: "
                 "decoded up to %llu pixels (its length bounds nothing; "
                 "jpegtran makes it Huffman-coded)", c->image_width,
                 c->image_height, ARITH_PIXELS_MAX);
        return SP_E_TOOBIG;
    }
    channels = c->out_color_space == JCS_GRAYSCALE ? 1 : 3;
    st = meta_of(d, meta, channels);
    if (st != SP_OK)
        return st;
    return sp_decode_layout(hdr, c->image_width, c->image_height, channels,
                            255, why);
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

/* cmyk_rgb: the W CMYK pixels at IN as RGB at OUT: an Adobe JPEG (one
 * with an APP14 marker: Photoshop's, and every CMYK JPEG libjpeg writes)
 * stores its inks inverted, so that R = C K / 255, as jpegtopnm gives it;
 * any other, R = (255 - C) (255 - K) / 255, where jpegtopnm takes every
 * CMYK JPEG as Adobe's; rounded down. */
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

/* be16: the big-endian 16 bits at P. */
static size_t be16(const unsigned char *p)
{
    return (size_t)p[0] << 8 | p[1];
}

/* entropy_end: the offset of the first marker at or after I in P's LEN
 * bytes that ends a scan's entropy-coded data: an 0xFF followed by
 * neither a stuffed 0x00, a fill 0xFF nor a restart marker; LEN if none. */
static size_t entropy_end(const unsigned char *p, size_t len, size_t i)
{
    for (; i + 1 < len; i++) {
        if (p[i] != 0xFF || p[i + 1] == 0xFF)
            continue;
        if (p[i + 1] == 0x00 || (p[i + 1] >= 0xD0 && p[i + 1] <= 0xD7)) {
            i++;
            continue;
        }
        return i;
    }
    return len;
}

/* plan_sof: the frame's components from a progressive SOF's payload SEG
 * of N bytes; 0 if it is odd (two components of one identifier too). */
static int plan_sof(struct plan *pl, const unsigned char *seg, size_t n)
{
    if (pl->ncomp != 0 || n < 6 || seg[5] < 1 || seg[5] > MAX_COMPS ||
        n != 6 + 3 * (size_t)seg[5])
        return 0;
    pl->ncomp = seg[5];
    for (int k = 0; k < pl->ncomp; k++) {
        pl->id[k] = seg[6 + 3 * k];
        for (int i = 0; i < k; i++)
            if (pl->id[i] == pl->id[k])
                return 0;
        for (int j = 0; j < SMOOTHED; j++)
            pl->al[k][j] = -1;
    }
    return 1;
}

/* plan_sos: one scan from its SOS payload SEG of N bytes: the output
 * needs it if it carries DC bits or codes a component whose inverse DCT
 * is larger than 1 x 1 (C's DCT_scaled_size: at 1/8, a subsampled
 * chroma's is 2 x 2, which reads AC coefficients); 0 if it is odd. */
static int plan_sos(struct plan *pl, const unsigned char *seg, size_t n,
                    const struct jpeg_decompress_struct *c)
{
    size_t ns = n != 0 ? seg[0] : 0;
    int ss, se, al;

    if (ns < 1 || ns > MAX_COMPS || n != 4 + 2 * ns)
        return 0;
    ss = seg[1 + 2 * ns];
    se = seg[2 + 2 * ns];
    al = seg[3 + 2 * ns] & 15;
    pl->nscans++;
    for (size_t i = 0; i < ns; i++) {
        int k = 0;

        while (k < pl->ncomp && pl->id[k] != seg[1 + 2 * i])
            k++;
        if (k == pl->ncomp)
            return 0;
        if (ss == 0 || c->comp_info[k].DCT_scaled_size != 1)
            pl->last = pl->nscans;
        for (int j = ss < 1 ? 1 : ss; j <= se && j < SMOOTHED; j++)
            if (pl->al[k][j] < 0 || al < pl->al[k][j])
                pl->al[k][j] = al;
    }
    return 1;
}

/* plan_segment: the marker segment M with payload SEG of N bytes; 0 if
 * it is one a plain progressive JPEG does not have. */
static int plan_segment(struct plan *pl, int m, const unsigned char *seg,
                        size_t n, const struct jpeg_decompress_struct *c)
{
    if (m == 0xC2 || m == 0xCA)  /* SOF: progressive, Huffman or arithmetic */
        return plan_sof(pl, seg, n);
    if (m == 0xDA)
        return pl->ncomp != 0 && plan_sos(pl, seg, n, c);
    return m == 0xC4 || m == 0xCC || m == 0xDB || m == 0xDD ||
           (m >= 0xE0 && m <= 0xEF) || m == 0xFE;
}

/* plan_walk: PL from the markers of P's LEN bytes, SOI to EOI; 0 if
 * anything is odd. */
static int plan_walk(struct plan *pl, const unsigned char *p, size_t len,
                     const struct jpeg_decompress_struct *c)
{
    size_t i = 2;

    if (len < 4 || p[0] != 0xFF || p[1] != 0xD8)
        return 0;
    while (i + 2 <= len && p[i] == 0xFF) {
        int m = p[i + 1];
        size_t n;

        if (m == 0xFF) {  /* a fill byte before a marker */
            i++;
            continue;
        }
        if (m == 0xD9) {
            pl->eoi = i + 2;
            return 1;
        }
        if (i + 4 > len || (n = be16(p + i + 2)) < 2 || n > len - i - 2 ||
            !plan_segment(pl, m, p + i + 4, n - 2, c))
            return 0;
        i += 2 + n;
        if (m == 0xDA)
            i = entropy_end(p, len, i);
    }
    return 0;
}

/* plan_of: whether D's progressive JPEG can stop decoding before its
 * last scan with output the same as a full decode's, and where (PL):
 * the scans after PL->last carry only AC coefficients of components
 * whose inverse DCT is 1 x 1 (jpeg_idct_1x1 reads only the DC), and a
 * full decode would not smooth blocks (libjpeg's block smoothing
 * estimates missing low AC coefficients, and with no AC at all the DC
 * too): that is, the first SMOOTHED coefficients of every component end
 * at full precision (Al 0). */
static int plan_of(struct plan *pl, const struct jdec *d)
{
    const struct jpeg_decompress_struct *c = &d->cinfo;

    memset(pl, 0, sizeof *pl);
    if (!c->progressive_mode || !plan_walk(pl, d->p, d->len, c) ||
        pl->ncomp != c->num_components || pl->last >= pl->nscans ||
        pl->last > SCAN_LIMIT)
        return 0;
    for (int k = 0; k < pl->ncomp; k++)
        for (int j = 1; j < SMOOTHED; j++)
            if (pl->al[k][j] != 0)
                return 0;
    return 1;
}

static unsigned long long least(void *state)
{
    return ((struct jdec *)state)->least;
}

/* rows: the output's scanlines into OUT, CMYK made RGB. */
static sp_status rows(struct jdec *d, unsigned char *out)
{
    struct jpeg_decompress_struct *c = &d->cinfo;
    size_t stride =
        (size_t)c->output_width * (c->output_components == 1 ? 1 : 3);

    if (c->out_color_space == JCS_CMYK && d->cmyk == NULL &&
        (d->cmyk = malloc((size_t)c->output_width * 4)) == NULL)
        return ENOMEM;
    while (c->output_scanline < c->output_height) {
        JSAMPROW row = out + (size_t)c->output_scanline * stride;

        if (d->cmyk == NULL)
            (void)jpeg_read_scanlines(c, &row, 1);
        else if (jpeg_read_scanlines(c, &d->cmyk, 1) == 1)
            cmyk_rgb(d, d->cmyk, row, c->output_width);
    }
    return SP_OK;
}

/* early: PL's scans decoded in buffered-image mode (libjpeg's), up to
 * PL->last, and the output made from them; the rest is not read. */
static sp_status early(struct jdec *d, const struct plan *pl,
                       unsigned char *out)
{
    struct jpeg_decompress_struct *c = &d->cinfo;
    int got = JPEG_SUSPENDED;

    c->buffered_image = TRUE;
    c->do_block_smoothing = FALSE;
    (void)jpeg_start_decompress(c);
    while (!(got == JPEG_SCAN_COMPLETED && c->input_scan_number >= pl->last)) {
        got = jpeg_consume_input(c);
        scans((j_common_ptr)c);
        if (got == JPEG_REACHED_EOI || got == JPEG_SUSPENDED)
            break;
    }
    (void)jpeg_start_output(c, pl->last);
    d->eoi = pl->eoi;
    return rows(d, out);
}

static sp_status raster(void *state, unsigned char *out, char *why)
{
    struct jdec *d = state;
    struct jpeg_decompress_struct *c = &d->cinfo;
    struct plan pl;
    sp_status st;

    if (setjmp(d->jb))
        return status_of(d, SP_E_BADRASTER, why);
    d->started = 1;
    jpeg_calc_output_dimensions(c);
    if (plan_of(&pl, d))
        return early(d, &pl, out);
    (void)jpeg_start_decompress(c);
    if ((st = rows(d, out)) != SP_OK)
        return st;
    (void)jpeg_finish_decompress(c);
    return SP_OK;
}

static size_t used(void *state)
{
    struct jdec *d = state;

    if (d->eoi != 0)
        return d->eoi;
    return d->len - d->cinfo.src->bytes_in_buffer;
}

static void end(void *state)
{
    struct jdec *d = state;

    jpeg_destroy_decompress(&d->cinfo);
    free(d->cmyk);
    free(d);
}

const struct sp_codec_ops sp_decode_jpeg = {
    "Huffman coding takes a bit an 8 x 8 block at least", SP_E_BADJPEG,
    begin, header, least, raster, shrink, used, end};
