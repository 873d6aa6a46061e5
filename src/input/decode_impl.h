/* decode_impl.h: what decode.c and the codecs' files (decode_jpeg.c,
 * decode_png.c) share; no one else includes it. */
#ifndef SP_DECODE_IMPL_H
#define SP_DECODE_IMPL_H

#include <stddef.h>

#include "header.h"
#include "meta.h"
#include "status.h"

/* A codec's operations on its own decoder, what its row in the registry
 * (decode.c, sp_codecs[]) points at (decode.h says what each
 * does; least: after the header, the fewest bytes its pixels can be coded
 * in, for sp_decode_bound(), whose words for why are BEST's; header
 * fills META too, the decoder's until sp_decode_meta(), with what
 * meta.h takes of the image's metadata read with the header).  A header
 * the codec finds bad is SP_E_BADHEADER, its WHY without the codec's
 * name: decode.c makes it BAD, the status that names the format. */
struct sp_codec_ops {
    const char *best;
    sp_status bad;
    sp_status (*begin)(const unsigned char *p, size_t len, void **state);
    sp_status (*header)(void *state, struct sp_header *hdr,
                        struct sp_meta *meta, char *why);
    unsigned long long (*least)(void *state);
    sp_status (*raster)(void *state, unsigned char *raster, char *why);
    /* shrink: decode the raster at 1/hdr->shrink, HDR then saying the
     * size decoded; NULL for a codec whose shrink_max is 1. */
    sp_status (*shrink)(void *state, struct sp_header *hdr, char *why);
    size_t (*used)(void *state);
    void (*end)(void *state);
};

/* The decoders, each in its file: decode_jpeg.c, decode_png.c. */
extern const struct sp_codec_ops sp_decode_jpeg, sp_decode_png;

/* sp_decode_layout: fill HDR's type from WIDTH x HEIGHT, CHANNELS (1 to
 * 4; 2 and 4 with alpha) and MAXVAL, as a binary PNM header would give
 * it; SP_E_TOOBIG when the raster does not fit in size_t. */
sp_status sp_decode_layout(struct sp_header *hdr, size_t width,
                           size_t height, unsigned channels, unsigned maxval,
                           char *why);

#endif
