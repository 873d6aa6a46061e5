/* The decoders' front: the codec sniffed from the magic, then the codec's
 * own file behind a table (decode_impl.h). */
#include "decode.h"
#include "decode_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

struct sp_decoder {
    const struct sp_codec_ops *ops;
    void *state;
    size_t width, height;  /* the header's */
};

enum sp_codec sp_decode_sniff(const unsigned char *p, size_t n)
{
    static const unsigned char png[8] = {0x89, 'P', 'N', 'G',
                                         '\r', '\n', 0x1a, '\n'};

    if (n >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff)
        return SP_CODEC_JPEG;
    if (n >= sizeof png && memcmp(p, png, sizeof png) == 0)
        return SP_CODEC_PNG;
    return SP_CODEC_NONE;
}

const char *sp_decode_name(enum sp_codec codec)
{
    return codec == SP_CODEC_JPEG  ? "JPEG"
           : codec == SP_CODEC_PNG ? "PNG"
                                   : "PNM";  /* NONE: what is tried then */
}

sp_status sp_decode_begin(enum sp_codec codec, const unsigned char *p,
                          size_t len, struct sp_decoder **dec)
{
    struct sp_decoder *d;
    sp_status st;

    *dec = NULL;
    if (codec != SP_CODEC_JPEG && codec != SP_CODEC_PNG)
        return SP_E_NOTPNM;
    d = calloc(1, sizeof *d);
    if (d == NULL)
        return ENOMEM;
    d->ops = codec == SP_CODEC_JPEG ? &sp_codec_jpeg : &sp_codec_png;
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
    st = dec->ops->header(dec->state, hdr, why);
    dec->width = hdr->width;
    dec->height = hdr->height;
    return st;
}

sp_status sp_decode_bound(struct sp_decoder *dec, size_t len, char *why)
{
    if (len >= dec->ops->least(dec->state))
        return SP_OK;
    snprintf(why, SP_WHY_MAX, "%s: %zu bytes cannot hold %zu x %zu pixels "
             "(%s)", dec->ops->name, len, dec->width, dec->height,
             dec->ops->best);
    return SP_E_TRUNCATED;
}

sp_status sp_decode_shrink(struct sp_decoder *dec, struct sp_header *hdr,
                           char *why)
{
    why[0] = '\0';
    if (hdr->shrink <= 1)
        return SP_OK;
    if (dec->ops->shrink == NULL || hdr->shrink > hdr->shrink_max ||
        (hdr->shrink & (hdr->shrink - 1)) != 0) {
        snprintf(why, SP_WHY_MAX, "cannot decode at 1/%u", hdr->shrink);
        return SP_E_UNSUPPORTED;
    }
    return dec->ops->shrink(dec->state, hdr, why);
}

sp_status sp_decode_raster(struct sp_decoder *dec, unsigned char *raster,
                           char *why)
{
    why[0] = '\0';
    return dec->ops->raster(dec->state, raster, why);
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
