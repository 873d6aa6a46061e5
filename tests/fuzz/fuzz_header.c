/* fuzz_header: the PNM header parser and the plain-raster decoder.
 *
 * The input is a file's bytes, read through fmemopen().  Besides "no crash,
 * no exit, no leak", it checks what header.h promises: a parsed header
 * satisfies its own invariants, survives a round trip through
 * sp_header_write() (PBM, PGM, PPM, PAM), and a decoded plain raster holds
 * no sample above maxval and ends inside the input. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "header.h"
#include "image.h"
#include "../shared.h"

/* Decode plain rasters up to this size: the decoder allocates nothing of
 * its own, but the harness allocates the raster for it. */
#define PLAIN_MAX ((size_t)1 << 20)

static int known_status(sp_status st)
{
    return st == SP_OK || st == SP_E_EMPTY || st == SP_E_NOTPNM ||
           st == SP_E_UNSUPPORTED || st == SP_E_BADHEADER ||
           st == SP_E_TOOBIG;
}

/* check_header: the invariants of a header that parsed from SIZE bytes. */
static void check_header(const struct sp_header *h, size_t size)
{
    size_t samples;

    SP_FUZZ_CHECK(h->magic >= '1' && h->magic <= '7');
    SP_FUZZ_CHECK(h->plain == (h->magic >= '1' && h->magic <= '3'));
    SP_FUZZ_CHECK(h->packed == (h->magic == '1' || h->magic == '4'));
    if (h->magic != '7')
        SP_FUZZ_CHECK(h->channels == ((h->magic == '3' || h->magic == '6')
                                          ? 3u
                                          : 1u));
    SP_FUZZ_CHECK(h->channels >= 1);
    SP_FUZZ_CHECK(h->width >= 1 && h->width <= INT_MAX);
    SP_FUZZ_CHECK(h->height >= 1 && h->height <= INT_MAX);
    SP_FUZZ_CHECK(h->maxval >= 1 && h->maxval <= 65535);
    SP_FUZZ_CHECK(h->sample_size == (h->maxval > 255 ? 2u : 1u));
    SP_FUZZ_CHECK(h->start == 0);
    SP_FUZZ_CHECK(h->raster_offset > 0 && (size_t)h->raster_offset <= size);
    /* raster_bytes is the product, and the product did not overflow */
    if (h->packed) {
        SP_FUZZ_CHECK(h->channels == 1 && h->maxval == 1);
        SP_FUZZ_CHECK(h->raster_bytes / h->height ==
                          (h->width + 7) / 8 &&
                      h->raster_bytes % h->height == 0);
        return;
    }
    samples = h->raster_bytes / h->sample_size / h->channels;
    SP_FUZZ_CHECK(samples % h->width == 0 && samples / h->width == h->height);
    SP_FUZZ_CHECK(h->raster_bytes % ((size_t)h->sample_size * h->channels) == 0);
}

/* round_trip: write H's header as libnetpbm would and parse it back. */
static void round_trip(const struct sp_header *h)
{
    char why[SP_WHY_MAX], *buf = NULL;
    size_t len = 0;
    struct sp_header back;
    struct sp_image type;
    sp_status st;
    FILE *f = open_memstream(&buf, &len);

    if (f == NULL)
        return;
    sp_image_type_of(&type, h);  /* written raw: P1-P3 as P4-P6 */
    st = sp_header_write(f, &type, why);
    if (h->magic == '7' && strlen(h->tuple_type) > SP_TUPLE_LINE_MAX) {
        /* more than netpbm would read back from one line: refused */
        SP_FUZZ_CHECK(st == SP_E_BADHEADER);
        fclose(f);
        free(buf);
        return;
    }
    SP_FUZZ_CHECK(st == SP_OK);
    SP_FUZZ_CHECK(fclose(f) == 0);
    f = fmemopen(buf, len, "r");
    if (f != NULL) {
        st = sp_header_parse(f, &back, why);
        SP_FUZZ_CHECK(st == SP_OK);
        SP_FUZZ_CHECK(back.width == h->width && back.height == h->height);
        SP_FUZZ_CHECK(back.maxval == h->maxval);
        SP_FUZZ_CHECK(back.channels == h->channels && !back.plain);
        SP_FUZZ_CHECK(back.raster_bytes == h->raster_bytes);
        SP_FUZZ_CHECK((size_t)back.raster_offset == len);
        fclose(f);
    }
    free(buf);
}

/* decode: decode H's plain raster from F, SIZE bytes. */
static void decode(FILE *f, const struct sp_header *h, size_t size)
{
    char why[SP_WHY_MAX];
    unsigned char *raster = malloc(h->raster_bytes);
    struct sp_plain_text t = {.pull = fx_file_pull, .arg = f};
    off_t end = -1;
    sp_status st;

    if (raster == NULL || fseeko(f, h->raster_offset, SEEK_SET) != 0) {
        free(raster);
        return;
    }
    st = sp_header_decode_plain(&t, h, raster, why);
    end = h->raster_offset + (off_t)t.used;
    free(t.buf);
    SP_FUZZ_CHECK(strnlen(why, sizeof why) < sizeof why);
    SP_FUZZ_CHECK(st == SP_OK || st == SP_E_BADRASTER ||
                  st == SP_E_BADHEADER);
    if (st == SP_OK) {
        SP_FUZZ_CHECK(end >= h->raster_offset && (size_t)end <= size);
        for (size_t i = 0; !h->packed && i < h->raster_bytes;
             i += h->sample_size) {
            unsigned v = h->sample_size == 2
                             ? (unsigned)raster[i] << 8 | raster[i + 1]
                             : raster[i];
            SP_FUZZ_CHECK(v <= h->maxval);
        }
    }
    free(raster);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy, so that nothing can read past the input unnoticed. */
    unsigned char *buf = malloc(size ? size : 1);
    char why[SP_WHY_MAX];
    struct sp_header hdr;
    sp_status st;
    FILE *f;

    sp_fuzz_init();
    if (buf == NULL)
        return 0;
    if (size)
        memcpy(buf, data, size);
    f = fmemopen(buf, size, "r");
    if (f == NULL) {
        free(buf);
        return 0;
    }
    st = sp_header_parse(f, &hdr, why);
    SP_FUZZ_CHECK(known_status(st));
    SP_FUZZ_CHECK(strnlen(why, sizeof why) < sizeof why);
    SP_FUZZ_CHECK((st == SP_E_EMPTY) == (size == 0));
    if (st == SP_OK) {
        check_header(&hdr, size);
        round_trip(&hdr);
        if (hdr.plain && hdr.raster_bytes <= PLAIN_MAX)
            decode(f, &hdr, size);
    }
    fclose(f);
    free(buf);
    return 0;
}
