/* The registry of the formats read, and the decoders' front: the codec
 * sniffed from the magic, then the codec's own file behind its row's
 * operations (decode_impl.h). */
#include "decode.h"
#include "decode_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

/* at: whether the N bytes at P hold the LEN bytes of M at offset AT. */
static int at(const unsigned char *p, size_t n, const char *m, size_t len,
              size_t off)
{
    return n >= off + len && memcmp(p + off, m, len) == 0;
}

/* pnm: P1 to P7, the magic numbers libnetpbm parses (header.c). */
static int pnm(const unsigned char *p, size_t n)
{
    return n >= 2 && p[0] == 'P' && p[1] >= '1' && p[1] <= '7';
}

/* The registry (decode.h): PNM first.  A new codec is a row here and its
 * decoder's file. */
const struct sp_codec sp_codecs[] = {
    {"PNM", "pnm", "image/x-portable-anymap", "P6", 2, pnm, NULL, 0,
     "PNM, PAM", "PNM or PAM (P1 to P7)"},
    {"JPEG", "jpeg", "image/jpeg", "\xff\xd8\xff", 3, NULL, &sp_decode_jpeg,
     1, NULL, NULL},
    {"PNG", "png", "image/png", "\x89PNG\r\n\x1a\n", 8, NULL,
     &sp_decode_png, 1, NULL, NULL},
};
const size_t sp_ncodecs = sizeof sp_codecs / sizeof *sp_codecs;

struct sp_decoder {
    const struct sp_codec *codec;
    const struct sp_codec_ops *ops;
    void *state;
    size_t width, height;  /* the header's */
    struct sp_meta meta;   /* read with the header */
};

/* Formats scaleppm does not read (NAME: what such a file is), known by
 * their magic numbers: MAGIC (LEN bytes) at AT, and, where it is not
 * enough, MORE (MORE_LEN bytes) at MORE_AT. */
static const struct {
    const char *name;
    const char *magic;
    size_t len, at;
    const char *more;
    size_t more_len, more_at;
} unread[] = {
    {"a WebP image", "RIFF", 4, 0, "WEBP", 4, 8},
    {"a GIF image", "GIF8", 4, 0, NULL, 0, 0},
    {"a TIFF image", "II*\0", 4, 0, NULL, 0, 0},
    {"a TIFF image", "MM\0*", 4, 0, NULL, 0, 0},
    {"a BMP image", "BM", 2, 0, "\0\0\0\0", 4, 6},  /* its reserved fields */
    {"a HEIF image", "ftypheic", 8, 4, NULL, 0, 0},
    {"a HEIF image", "ftypheix", 8, 4, NULL, 0, 0},
    {"a HEIF image", "ftypmif1", 8, 4, NULL, 0, 0},
    {"an AVIF image", "ftypavif", 8, 4, NULL, 0, 0},
    {"a JPEG XL image", "\xff\x0a", 2, 0, NULL, 0, 0},
    {"a JPEG XL image", "\0\0\0\x0cJXL \r\n\x87\n", 12, 0, NULL, 0, 0},
    {"a JPEG 2000 image", "\0\0\0\x0cjP  \r\n\x87\n", 12, 0, NULL, 0, 0},
    {"a JPEG 2000 image", "\xff\x4f\xff\x51", 4, 0, NULL, 0, 0},
    {"a PDF document", "%PDF-", 5, 0, NULL, 0, 0},
    {"a PFM image", "PF", 2, 0, NULL, 0, 0},
    {"a PFM image", "Pf", 2, 0, NULL, 0, 0},
    {"a Photoshop image", "8BPS", 4, 0, NULL, 0, 0},
    {"an OpenEXR image", "\x76\x2f\x31\x01", 4, 0, NULL, 0, 0},
    {"a QOI image", "qoif", 4, 0, NULL, 0, 0},
};

const struct sp_codec *sp_decode_sniff(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < sp_ncodecs; i++) {
        const struct sp_codec *c = &sp_codecs[i];

        if (c->sniff != NULL ? c->sniff(p, n)
                             : at(p, n, c->magic, c->magic_len, 0))
            return c;
    }
    return NULL;
}

const struct sp_codec *sp_decode_named(const char *key)
{
    for (size_t i = 0; i < sp_ncodecs; i++)
        if (strcmp(sp_codecs[i].key, key) == 0)
            return &sp_codecs[i];
    return NULL;
}

int sp_decode_starts(unsigned char c)
{
    for (size_t i = 0; i < sp_ncodecs; i++)
        if ((unsigned char)sp_codecs[i].magic[0] == c)
            return 1;
    return 0;
}

/* listed: into WHY (SP_WHY_MAX) at *N, the registry's rows as a list,
 * each by what SAID gives, the last after LAST ("and", "or"). */
static void listed(char *why, size_t *n, const char *(*said)(size_t),
                   const char *last)
{
    for (size_t i = 0; i < sp_ncodecs && *n < SP_WHY_MAX; i++)
        *n += (size_t)snprintf(why + *n, SP_WHY_MAX - *n, "%s%s",
                               i == 0                ? ""
                               : i + 1 < sp_ncodecs ? ", "
                                                    : last,
                               said(i));
}

static const char *family(size_t i)
{
    return sp_codecs[i].family != NULL ? sp_codecs[i].family
                                       : sp_codecs[i].name;
}

static const char *magic_said(size_t i)
{
    return sp_codecs[i].magic_said != NULL ? sp_codecs[i].magic_said
                                           : sp_codecs[i].name;
}

void sp_decode_unknown(const unsigned char *p, size_t n, char *why)
{
    size_t len = 0;

    for (size_t i = 0; i < sizeof unread / sizeof *unread; i++) {
        const char *more = unread[i].more;

        if (at(p, n, unread[i].magic, unread[i].len, unread[i].at) &&
            (more == NULL ||
             at(p, n, more, unread[i].more_len, unread[i].more_at))) {
            len = (size_t)snprintf(why, SP_WHY_MAX, "%s (it reads ",
                                   unread[i].name);
            listed(why, &len, family, " and ");
            if (len < SP_WHY_MAX)
                snprintf(why + len, SP_WHY_MAX - len, ")");
            return;
        }
    }
    len = (size_t)snprintf(why, SP_WHY_MAX, "no ");
    listed(why, &len, magic_said, " or ");
    if (len < SP_WHY_MAX)
        snprintf(why + len, SP_WHY_MAX - len, " magic number");
}

sp_status sp_decode_bad(const struct sp_codec *codec)
{
    return codec->ops->bad;
}

sp_status sp_decode_begin(const struct sp_codec *codec, const unsigned char *p,
                          size_t len, struct sp_decoder **dec)
{
    struct sp_decoder *d;
    sp_status st;

    *dec = NULL;
    if (codec == NULL || codec->ops == NULL)
        return SP_E_NOTPNM;
    d = calloc(1, sizeof *d);
    if (d == NULL)
        return ENOMEM;
    d->codec = codec;
    d->ops = codec->ops;
    st = d->ops->begin(p, len, &d->state);
    if (st != SP_OK) {
        free(d);
        return st;
    }
    *dec = d;
    return SP_OK;
}

sp_status sp_decode_header(struct sp_decoder *dec, struct sp_header *hdr,
                           char *why)
{
    sp_status st;

    memset(hdr, 0, sizeof *hdr);
    why[0] = '\0';
    st = dec->ops->header(dec->state, hdr, &dec->meta, why);
    hdr->orientation = dec->meta.orientation;
    dec->width = hdr->width;
    dec->height = hdr->height;
    return st == SP_E_BADHEADER ? dec->ops->bad : st;
}

sp_status sp_decode_bound(struct sp_decoder *dec, size_t len, char *why)
{
    if (len >= dec->ops->least(dec->state))
        return SP_OK;
    snprintf(why, SP_WHY_MAX, "%s: %zu bytes cannot hold %zu x %zu pixels "
             "(%s)", dec->codec->name, len, dec->width, dec->height,
             dec->ops->best);
    return SP_E_TRUNCATED;
}

sp_status sp_decode_shrink(struct sp_decoder *dec, struct sp_header *hdr,
                           char *why)
{
    sp_status st;

    why[0] = '\0';
    if (hdr->shrink <= 1)
        return SP_OK;
    if (dec->ops->shrink == NULL || hdr->shrink > hdr->shrink_max ||
        (hdr->shrink & (hdr->shrink - 1)) != 0) {
        snprintf(why, SP_WHY_MAX, "cannot decode at 1/%u", hdr->shrink);
        return SP_E_UNSUPPORTED;
    }
    st = dec->ops->shrink(dec->state, hdr, why);
    return st == SP_E_BADHEADER ? dec->ops->bad : st;
}

sp_status sp_decode_raster(struct sp_decoder *dec, unsigned char *raster,
                           char *why)
{
    why[0] = '\0';
    return dec->ops->raster(dec->state, raster, why);
}

void sp_decode_meta(struct sp_decoder *dec, struct sp_meta *meta)
{
    sp_meta_free(meta);
    *meta = dec->meta;
    sp_meta_init(&dec->meta);
}

size_t sp_decode_used(struct sp_decoder *dec)
{
    return dec->ops->used(dec->state);
}

void sp_decode_end(struct sp_decoder *dec)
{
    if (dec == NULL)
        return;
    dec->ops->end(dec->state);
    sp_meta_free(&dec->meta);
    free(dec);
}

sp_status sp_decode_layout(struct sp_header *hdr, size_t width,
                           size_t height, unsigned channels, unsigned maxval,
                           char *why)
{
    static const char *const types[] = {"GRAYSCALE", "GRAYSCALE_ALPHA",
                                        "RGB", "RGB_ALPHA"};
    struct sp_image type;
    sp_status st;

    if (width == 0 || height == 0 || channels < 1 || channels > 4 ||
        maxval < 1 || maxval > 65535) {
        snprintf(why, SP_WHY_MAX, "%zu x %zu, %u channels, maxval %u",
                 width, height, channels, maxval);
        return SP_E_BADHEADER;
    }
    hdr->magic = channels == 1 ? '5' : channels == 3 ? '6' : '7';
    hdr->width = width;
    hdr->height = height;
    hdr->channels = channels;
    hdr->maxval = maxval;
    hdr->sample_size = maxval > 255 ? 2 : 1;
    hdr->alpha = channels == 2 || channels == 4;
    snprintf(hdr->tuple_type, sizeof hdr->tuple_type, "%s",
             types[channels - 1]);
    sp_image_type_of(&type, hdr);
    st = sp_image_raster_size(width, height, &type, &hdr->raster_bytes);
    if (st != SP_OK)
        snprintf(why, SP_WHY_MAX, "%zu x %zu pixels", width, height);
    return st;
}
