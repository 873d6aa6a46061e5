/* The streamed JPEG encoder: libjpeg-turbo's compressor, a row at a time.
 * Gray (and gray with alpha) gives a grayscale JPEG, colour a YCbCr one;
 * an alpha is flattened onto the background (JPEG has none: convert.h's
 * sp_over), and samples are rescaled to 8
 * bits.  The quality is the caller's, the chroma subsampling too, fixed
 * whatever the quality (SP_JPEG_SUBSAMPLE by default, cjpeg's 4:2:0);
 * everything else is libjpeg's default (jpeg_set_defaults: baseline,
 * islow DCT, the standard Huffman tables).  Optimized Huffman tables are
 * left off: libjpeg makes them in a second pass over the whole image's
 * coefficients, held in memory, which a streamed output must not hold.
 * The metadata (meta.h) follows the JFIF marker: an APP1 marker of EXIF
 * holding the orientation alone, and the ICC profile as it is, in APP2
 * markers (jpeg_write_icc_profile). */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

#include "encode.h"

_Static_assert(SP_JPEG_SIDE_MAX == JPEG_MAX_DIMENSION,
               "outfmts.c's JPEG limit is libjpeg's");

/* OUT_BUF: the bytes gathered before a write. */
#define OUT_BUF 65536

struct jenc {
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    struct jpeg_destination_mgr dest;
    jmp_buf jump;
    int created;            /* C is made: jpeg_destroy_compress it */
    FILE *f;
    sp_status write_err;    /* the errno of a failed write, or 0 */
    int rescale;            /* rows go through ROW: rescaled, or an
                               alpha flattened onto BACKGROUND */
    unsigned long background;
    unsigned char *row;
    unsigned char *exif;    /* the APP1 marker's EXIF (sp_meta_exif_block) */
    char msg[JMSG_LENGTH_MAX];
    JOCTET buf[OUT_BUF];
};

static void fail(j_common_ptr c)
{
    struct jenc *e = (struct jenc *)c->client_data;

    c->err->format_message(c, e->msg);
    longjmp(e->jump, 1);
}

static void message(j_common_ptr c, int level)
{
    (void)c;
    (void)level;  /* a compressor's warnings: nothing to report */
}

/* put: N bytes of E's buffer written; a failure leaves the encoder. */
static void put(struct jenc *e, size_t n)
{
    errno = 0;
    if (n > 0 && fwrite(e->buf, 1, n, e->f) != n) {
        e->write_err = errno ? errno : EIO;
        ERREXIT(&e->c, JERR_FILE_WRITE);
    }
}

static void dest_init(j_compress_ptr c)
{
    struct jenc *e = (struct jenc *)c->client_data;

    e->dest.next_output_byte = e->buf;
    e->dest.free_in_buffer = OUT_BUF;
}

static boolean dest_empty(j_compress_ptr c)
{
    struct jenc *e = (struct jenc *)c->client_data;

    put(e, OUT_BUF);  /* the whole buffer, whatever free_in_buffer says */
    dest_init(c);
    return TRUE;
}

static void dest_term(j_compress_ptr c)
{
    struct jenc *e = (struct jenc *)c->client_data;

    put(e, OUT_BUF - e->dest.free_in_buffer);
}

static sp_status status_of(const struct jenc *e, char *why)
{
    if (e->write_err != 0)
        return e->write_err;
    if (e->err.msg_code == JERR_OUT_OF_MEMORY)
        return ENOMEM;
    snprintf(why, SP_WHY_MAX, "JPEG: %s", e->msg);
    return SP_E_ENCODE;
}

/* sampling: the luma's factors for SUBSAMPLE (the chroma's are 1x1). */
static void sampling(struct jpeg_compress_struct *c, int subsample)
{
    c->comp_info[0].h_samp_factor = subsample == 444 ? 1 : 2;
    c->comp_info[0].v_samp_factor = subsample == 420 ? 2 : 1;
    for (int i = 1; i < c->num_components; i++)
        c->comp_info[i].h_samp_factor = c->comp_info[i].v_samp_factor = 1;
}

/* put_meta: META's EXIF and profile written as markers, after the
 * header's first (in E's jump: start()'s). */
static sp_status put_meta(struct jenc *e, const struct sp_meta *meta)
{
    size_t len;
    sp_status st;

    if (meta == NULL)
        return SP_OK;
    st = sp_meta_exif_block(meta, &e->exif, &len);
    if (st != SP_OK)
        return st;
    if (e->exif != NULL)
        jpeg_write_marker(&e->c, JPEG_APP0 + 1, e->exif, (unsigned)len);
    if (meta->icc != NULL)
        jpeg_write_icc_profile(&e->c, meta->icc, (unsigned)meta->icc_len);
    return SP_OK;
}

/* start: E's compressor made for LAYOUT and OPTS, its header written. */
static sp_status start(struct jenc *e, const struct sp_image *l,
                       const struct sp_encode_opts *opts, char *why)
{
    struct jpeg_compress_struct *c = &e->c;
    int gray = l->channels <= 2;

    /* The error handler finds E through CLIENT_DATA, which
     * jpeg_create_compress keeps; a failure in it leaves C safe to
     * destroy. */
    c->client_data = e;
    e->created = 1;
    if (setjmp(e->jump))
        return status_of(e, why);
    jpeg_create_compress(c);
    c->dest = &e->dest;
    c->image_width = (JDIMENSION)l->width;
    c->image_height = (JDIMENSION)l->height;
    c->input_components = gray ? 1 : 3;
    c->in_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(c);
    jpeg_set_quality(c, opts->quality > 0 ? opts->quality : SP_JPEG_QUALITY,
                     TRUE);
    if (!gray)
        sampling(c, opts->subsample ? opts->subsample : SP_JPEG_SUBSAMPLE);
    jpeg_start_compress(c, TRUE);
    return put_meta(e, opts->meta);
}

static sp_status begin(FILE *f, const struct sp_image *layout,
                       const struct sp_encode_opts *opts, void **state,
                       char *why)
{
    struct jenc *e = calloc(1, sizeof *e);

    *state = e;
    if (e == NULL)
        return ENOMEM;
    e->f = f;
    e->background = opts->background;
    e->rescale = layout->maxval != 255 || layout->sample_size != 1 ||
                 layout->channels % 2 == 0;
    if (e->rescale && (e->row = malloc(layout->width * 3)) == NULL)
        return ENOMEM;
    e->c.err = jpeg_std_error(&e->err);
    e->err.error_exit = fail;
    e->err.emit_message = message;
    e->dest.init_destination = dest_init;
    e->dest.empty_output_buffer = dest_empty;
    e->dest.term_destination = dest_term;
    return start(e, layout, opts, why);
}

static sp_status rows(void *state, const struct sp_image *img,
                      unsigned times, char *why)
{
    struct jenc *e = state;
    unsigned out_ch = img->channels <= 2 ? 1 : 3;

    if (setjmp(e->jump))
        return status_of(e, why);
    for (size_t y = 0; y < img->height; y++) {
        JSAMPROW row = img->pixels + y * img->stride;

        if (e->rescale) {
            sp_samples_rescale(e->row, row, img->width, img->channels,
                               out_ch, img->sample_size, img->maxval, 1,
                               e->background);
            row = e->row;
        }
        for (unsigned t = 0; t < times; t++)
            (void)jpeg_write_scanlines(&e->c, &row, 1);
    }
    return SP_OK;
}

static sp_status finish(void *state, char *why)
{
    struct jenc *e = state;

    if (setjmp(e->jump))
        return status_of(e, why);
    jpeg_finish_compress(&e->c);
    return SP_OK;
}

static void end(void *state)
{
    struct jenc *e = state;

    if (e == NULL)
        return;
    if (e->created)
        jpeg_destroy_compress(&e->c);
    free(e->row);
    free(e->exif);
    free(e);
}

const struct sp_stream_ops sp_stream_jpeg = {begin, rows, finish, end};
