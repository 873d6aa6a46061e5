/* fuzz_decode: the JPEG and PNG decoders (decode.h) on any bytes.
 *
 * Bytes that are neither codec's are left alone (fuzz_scale runs the whole
 * load).  Besides "no crash, no exit, no leak", it checks what decode.h
 * promises: a status of the documented set at each step; a header that
 * decodes describes a binary PNM raster of its own size; a prefix of the
 * bytes decodes to the same header or says SP_E_TRUNCATED (the stream
 * path reads on on that word alone); no header passes sp_decode_bound()
 * that claims more pixels than its bytes can code at the best ratio of
 * any codec, or 2^26 where a codec has no floor (a bomb is refused); a
 * decode that sp_decode_bound() refused fails when run anyway (the bound
 * is sound); a raster decodes to
 * the same bytes twice, no sample above its maxval, and ends inside the
 * input. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "fuzz.h"
#include "input_path.h"  /* sp_input_decode_header */

/* Rasters decoded up to this many pixels (the harness allocates them;
 * --max-pixels stands here). */
#define PIXELS_MAX ((size_t)1 << 22)

/* The most pixels a byte codes (deflate's 1032 bytes in one, of 1-bit
 * pixels), and the most pixels of a codec with no such floor (an
 * arithmetic-coded JPEG). */
#define PIXELS_A_BYTE (8ull * 1032)
#define PIXELS_NO_FLOOR (1ull << 26)

static int header_status(sp_status st)
{
    return st == SP_OK || st == SP_E_BADJPEG || st == SP_E_BADPNG ||
           st == SP_E_TRUNCATED || st == SP_E_UNSUPPORTED ||
           st == SP_E_TOOBIG || st == ENOMEM;
}

static int raster_status(sp_status st)
{
    return st == SP_OK || st == SP_E_BADRASTER || st == SP_E_TRUNCATED ||
           st == ENOMEM;
}

/* check_header: a decoded header is a binary PNM one, its size right. */
static void check_header(const struct sp_header *h)
{
    SP_FUZZ_CHECK(h->width >= 1 && h->height >= 1);
    SP_FUZZ_CHECK(h->channels >= 1 && h->channels <= 4);
    SP_FUZZ_CHECK(h->magic == (h->channels == 1   ? '5'
                               : h->channels == 3 ? '6'
                                                  : '7'));
    SP_FUZZ_CHECK(h->alpha == (h->channels == 2 || h->channels == 4));
    SP_FUZZ_CHECK(h->maxval >= 1 && h->maxval <= 65535);
    SP_FUZZ_CHECK(h->sample_size == (h->maxval > 255 ? 2u : 1u));
    SP_FUZZ_CHECK(!h->plain && !h->packed);
    SP_FUZZ_CHECK(h->start == 0 && h->raster_offset == 0);
    SP_FUZZ_CHECK(h->raster_bytes / h->height / h->width ==
                      (size_t)h->channels * h->sample_size &&
                  h->raster_bytes % ((size_t)h->width * h->height) == 0);
}

/* decode: the raster of the LEN bytes at P into a fresh *OUT (HDR's size),
 * the bound asked first (*BOUND its status) and the decode run whatever it
 * said; *USED the bytes the image took. */
static sp_status decode(const struct sp_codec *codec, const uint8_t *p,
                        size_t len, const struct sp_header *hdr,
                        unsigned char **out, sp_status *bound, size_t *used)
{
    char why[SP_WHY_MAX];
    struct sp_header again;
    struct sp_decoder *dec;
    sp_status st = sp_decode_begin(codec, p, len, &dec);

    *out = NULL;
    *used = 0;
    if (st == SP_OK)
        st = sp_decode_header(dec, &again, why);
    if (st == SP_OK) {
        SP_FUZZ_CHECK(memcmp(&again, hdr, sizeof again) == 0);
        *bound = sp_decode_bound(dec, len, why);
        SP_FUZZ_CHECK(*bound == SP_OK ||
                      (*bound == SP_E_TRUNCATED && why[0] != '\0'));
        *out = malloc(hdr->raster_bytes);
        st = *out == NULL ? ENOMEM : sp_decode_raster(dec, *out, why);
        SP_FUZZ_CHECK(raster_status(st));
        SP_FUZZ_CHECK(st == SP_OK || why[0] != '\0' || st == ENOMEM);
    }
    if (st == SP_OK)
        *used = sp_decode_used(dec);
    sp_decode_end(dec);
    return st;
}

/* check_bomb: a header that sp_decode_bound() lets through claims no
 * more pixels than its LEN bytes can code, or PIXELS_NO_FLOOR. */
static void check_bomb(const struct sp_codec *codec, const uint8_t *p,
                       size_t len)
{
    char why[SP_WHY_MAX];
    struct sp_header hdr;
    struct sp_decoder *dec;
    unsigned long long pixels;

    if (sp_decode_begin(codec, p, len, &dec) != SP_OK)
        return;
    if (sp_decode_header(dec, &hdr, why) == SP_OK &&
        sp_decode_bound(dec, len, why) == SP_OK) {
        pixels = (unsigned long long)hdr.width * hdr.height;
        SP_FUZZ_CHECK(pixels <= PIXELS_NO_FLOOR ||
                      pixels / PIXELS_A_BYTE <= len);
    }
    sp_decode_end(dec);
}

/* check_samples: no sample of RASTER above HDR's maxval. */
static void check_samples(const struct sp_header *hdr,
                          const unsigned char *raster)
{
    for (size_t i = 0; i < hdr->raster_bytes; i += hdr->sample_size) {
        unsigned v = hdr->sample_size == 2
                         ? (unsigned)raster[i] << 8 | raster[i + 1]
                         : raster[i];

        SP_FUZZ_CHECK(v <= hdr->maxval);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct sp_codec *codec = sp_decode_sniff(data, size);
    struct sp_header hdr, part;
    char why[SP_WHY_MAX];
    unsigned char *a, *b;
    sp_status st, st2, bound = SP_OK, bound2 = SP_OK;
    size_t used, used2, cut;

    sp_fuzz_init();
    if (codec == NULL || codec->ops == NULL)
        return 0;
    st = sp_input_decode_header(codec, data, size, &hdr, why);
    SP_FUZZ_CHECK(header_status(st));
    if (st != SP_OK)
        return 0;
    check_header(&hdr);
    /* a prefix: the same header, or "more bytes" (a stream reads on) */
    cut = size / 2 + (size > 0 ? data[size - 1] % (size / 2 + 1) : 0);
    st = sp_input_decode_header(codec, data, cut, &part, why);
    SP_FUZZ_CHECK(st == SP_E_TRUNCATED ||
                  (st == SP_OK && memcmp(&part, &hdr, sizeof hdr) == 0));
    check_bomb(codec, data, size);
    if ((size_t)hdr.width * hdr.height > PIXELS_MAX)
        return 0;
    st = decode(codec, data, size, &hdr, &a, &bound, &used);
    if (bound != SP_OK)
        SP_FUZZ_CHECK(st != SP_OK);  /* the bound refused only bombs */
    if (st == SP_OK) {
        SP_FUZZ_CHECK(used > 0 && used <= size);
        check_samples(&hdr, a);
        st2 = decode(codec, data, size, &hdr, &b, &bound2, &used2);
        SP_FUZZ_CHECK(st2 == SP_OK && bound2 == SP_OK && used2 == used);
        SP_FUZZ_CHECK(memcmp(a, b, hdr.raster_bytes) == 0);
        free(b);
    }
    free(a);
    return 0;
}
