/* The tables every place reads: the codecs (decode.h), the output formats
 * (outfmt.h) and the filters (filter.h), walked row by row.  A codec's
 * magic sniffs to itself and its key names it; an output format's
 * extensions map back to it; a filter's rows, each handed exactly the
 * source rows its span names, between inaccessible pages, give the bytes
 * they give with the whole image at hand: the span covers what the row
 * function reads (a read outside it faults, in any build). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "decode.h"
#include "filter.h"
#include "fixtures.h"
#include "outfmt.h"
#include "params.h"

START_TEST(test_codecs_sniff_to_themselves)
{
    for (size_t i = 0; i < sp_ncodecs; i++) {
        const struct sp_codec *c = &sp_codecs[i];

        ck_assert_msg(c->magic_len >= 1 &&
                          c->magic_len <= SP_DECODE_MAGIC_LEN,
                      "%s: a magic of %zu bytes", c->name, c->magic_len);
        ck_assert_msg(sp_decode_sniff((const unsigned char *)c->magic,
                                      c->magic_len) == c,
                      "%s: its magic is not sniffed as itself", c->name);
        ck_assert_msg(sp_decode_named(c->key) == c, "%s: key '%s'",
                      c->name, c->key);
        ck_assert(sp_decode_starts((unsigned char)c->magic[0]));
        ck_assert_msg(strncmp(c->media_type, "image/", 6) == 0,
                      "%s: media type '%s'", c->name, c->media_type);
        /* a decoder's raster is decoded into memory, whole */
        ck_assert_msg(c->ops == NULL || c->whole, "%s", c->name);
        for (size_t j = 0; j < i; j++) {
            ck_assert_str_ne(c->name, sp_codecs[j].name);
            ck_assert_str_ne(c->key, sp_codecs[j].key);
        }
    }
    ck_assert_ptr_eq(SP_CODEC_PNM, sp_decode_named("pnm"));
    ck_assert_ptr_null(SP_CODEC_PNM->ops);
    ck_assert_ptr_null(sp_decode_named("gif"));
}
END_TEST

/* The message for a format not read names every codec that is. */
START_TEST(test_codecs_named_when_refused)
{
    static const unsigned char gif[] = "GIF89a";
    char why[SP_WHY_MAX];

    sp_decode_unknown(gif, sizeof gif - 1, why);
    ck_assert_str_eq(why, "a GIF image (it reads PNM, PAM, JPEG and PNG)");
    sp_decode_unknown((const unsigned char *)"hello", 5, why);
    ck_assert_str_eq(why, "no PNM or PAM (P1 to P7), JPEG or PNG magic "
                          "number");
    for (size_t i = 0; i < sp_ncodecs; i++)
        ck_assert_msg(strstr(why, sp_codecs[i].name) != NULL, "%s",
                      sp_codecs[i].name);
}
END_TEST

/* job_key: whether NAME is a key of the job's (params.h). */
static int job_key(const char *name)
{
    const struct sp_param *r;

    for (size_t i = 0; (r = sp_params_row(i)) != NULL; i++)
        if (strcmp(r->name, name) == 0)
            return 1;
    return 0;
}

START_TEST(test_outfmts_extensions_map_back)
{
    char known[SP_WHY_MAX], path[64], word[16];

    sp_outfmt_known(known);
    for (size_t i = 0; i < sp_noutfmts; i++) {
        const struct sp_outfmt_row *row = &sp_outfmts[i];

        ck_assert_ptr_nonnull(row->exts[0].ext);
        ck_assert_msg(row->streamed ? row->stream != NULL || row->put != NULL
                                    : row->stream == NULL && row->put != NULL,
                      "%s: no encoder for how it takes rows", row->name);
        ck_assert_ptr_nonnull(row->whole);
        for (size_t j = 0; j < i; j++)
            ck_assert_str_ne(row->name, sp_outfmts[j].name);
        for (const char *const *k = row->keys; k != NULL && *k != NULL; k++)
            ck_assert_msg(job_key(*k), "%s: %s is no job key", row->name,
                          *k);
        for (const struct sp_outext *e = row->exts; e->ext != NULL; e++) {
            enum sp_outfmt fmt = (enum sp_outfmt)99;
            enum sp_want want;

            snprintf(path, sizeof path, "dir.x/out.%s", e->ext);
            ck_assert_int_eq(sp_outfmt_for(path, &fmt, &want), SP_OK);
            ck_assert_int_eq(fmt, (int)i);
            for (size_t k = 0; path[k] != '\0'; k++)
                path[k] = (char)toupper((unsigned char)path[k]);
            ck_assert_int_eq(sp_outfmt_for(path, &fmt, &want), SP_OK);
            ck_assert_int_eq(fmt, (int)i);
            ck_assert_ptr_eq(sp_outfmt_ext(e->ext, &fmt), e);
            ck_assert_int_eq(want, row->netpbm ? e->want : SP_WANT_KEEP);
            ck_assert_msg(strncmp(e->media_type, "image/", 6) == 0, "%s",
                          e->ext);
            snprintf(word, sizeof word, " .%s", e->ext);
            ck_assert_msg(strstr(known, word) != NULL, "'%s' lacks %s",
                          known, word);
        }
    }
}
END_TEST

/* ---- the filters ---- */

/* An arena: a mapping with an inaccessible page on either side, its
 * accessible bytes [lo, hi). */
struct arena {
    unsigned char *map, *lo, *hi;
    size_t len;
};

#define ARENA_BYTES ((size_t)1 << 18)

static void arena_make(struct arena *a)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    a->len = ARENA_BYTES + 2 * page;
    a->map = mmap(NULL, a->len, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(a->map != MAP_FAILED);
    a->lo = a->map + page;
    a->hi = a->lo + ARENA_BYTES;
    ck_assert_int_eq(mprotect(a->map, page, PROT_NONE), 0);
    ck_assert_int_eq(mprotect(a->hi, page, PROT_NONE), 0);
}

/* place: LEN bytes in A, against its end page or against its start. */
static unsigned char *place(const struct arena *a, size_t len, int at_end)
{
    ck_assert_uint_le(len, ARENA_BYTES);
    return at_end ? a->hi - len : a->lo;
}

/* source: a W x H image of the type numbered KIND: gray, gray with alpha,
 * RGB, RGBA, in 8 and 16 bits, and a PBM's bits. */
static void source(struct sp_image *img, size_t w, size_t h, int kind,
                   unsigned seed)
{
    static const unsigned channels[] = {1, 2, 3, 4, 1, 2, 3, 4};

    if (kind == 8) {  /* PBM */
        fx_make_image(img, (w + 7) / 8, h, 1, 1, 255, seed);
        img->width = w;
        img->channels = 1;
        img->maxval = 1;
        img->packed = 1;
        img->magic = '4';
        return;
    }
    fx_make_image(img, w, h, channels[kind], kind < 4 ? 1 : 2,
                  kind < 4 ? 255 : 1000 + seed, seed);
    img->alpha = channels[kind] % 2 == 0;
}

/* The geometries each filter is tried on: sizes in and out, for a filter
 * by a whole factor its factor. */
static const struct {
    size_t w, h, ow, oh;
    int factor;
} shapes[] = {
    {23, 19, 0, 0, -2}, {23, 19, 0, 0, -3}, {16, 40, 0, 0, -5},
    {7, 3, 0, 0, -8},   {9, 9, 0, 0, -9},   {23, 19, 5, 4, 1},
    {23, 19, 40, 33, 1}, {23, 19, 23, 7, 1}, {8, 61, 3, 9, 1},
    {5, 5, 1, 1, 1},
};
#define NSHAPES (sizeof shapes / sizeof *shapes)

/* try_filter: F on shape SH of a source of type KIND: every output row's
 * span inside the source, no more than span_max, as many rows as the
 * support asks, going down; each row made from its span alone, placed
 * against an inaccessible page after it and then before it, with its
 * scratch and its output against one after, gives the row made with the
 * whole source at hand. */
static void try_filter(const struct sp_filter_row *f, size_t sh, int kind,
                       struct arena *band_a, struct arena *scratch_a,
                       struct arena *out_a)
{
    struct sp_scaling s = {shapes[sh].w, shapes[sh].h, shapes[sh].ow,
                           shapes[sh].oh, shapes[sh].factor};
    struct sp_image src, type, band;
    size_t srow, orow, scratch_len, last0 = 0;
    unsigned char *whole, *scratch_whole;

    if (f->by_factor != (s.factor < -1))
        return;
    if (f->by_factor) {
        size_t n = (size_t)-s.factor;

        s.out_width = (s.in_width + n - 1) / n;
        s.out_height = (s.in_height + n - 1) / n;
    }
    source(&src, s.in_width, s.in_height, kind, (unsigned)(sh * 9 + 1));
    f->type(&src, &s, &type);
    srow = sp_image_row_bytes(&src, s.in_width);
    orow = sp_image_row_bytes(&type, s.out_width);
    scratch_len = f->scratch(&src, &s);
    whole = malloc(orow * s.out_height);
    scratch_whole = aligned_alloc(16, (scratch_len + 16) / 16 * 16);
    ck_assert(whole != NULL && scratch_whole != NULL);
    f->rows(&src, 0, &s, 0, s.out_height, scratch_whole, whole);
    for (size_t y = 0; y < s.out_height; y++) {
        size_t s0, s1, need = (size_t)(2 * f->support *
                                       (double)s.in_height /
                                       (double)s.out_height);

        f->span(&s, y, &s0, &s1);
        ck_assert_msg(s0 < s1 && s1 <= s.in_height && s0 >= last0,
                      "%s: row %zu's span [%zu, %zu) of %zu", f->name, y,
                      s0, s1, s.in_height);
        ck_assert_uint_le(s1 - s0, f->span_max(&s));
        ck_assert_msg(s1 == s.in_height || s1 - s0 >= need,
                      "%s: row %zu reads %zu rows, its support %zu",
                      f->name, y, s1 - s0, need);
        last0 = s0;
        for (int at_end = 0; at_end < 2; at_end++) {
            unsigned char *out = place(out_a, orow, 1);

            band = src;
            band.height = s1 - s0;
            band.stride = srow;
            band.pixels = place(band_a, srow * band.height, at_end);
            for (size_t r = s0; r < s1; r++)
                memcpy(band.pixels + (r - s0) * srow,
                       src.pixels + r * src.stride, srow);
            f->rows(&band, s0, &s, y, y + 1,
                    place(scratch_a, scratch_len, 1), out);
            ck_assert_msg(memcmp(out, whole + y * orow, orow) == 0,
                          "%s: row %zu from its span alone differs",
                          f->name, y);
        }
    }
    free(whole);
    free(scratch_whole);
    sp_image_release(&src);
}

START_TEST(test_filters_read_only_their_span)
{
    struct arena band, scratch, out;

    arena_make(&band);
    arena_make(&scratch);
    arena_make(&out);
    for (size_t i = 0; i < sp_nfilters; i++) {
        const struct sp_filter_row *f = sp_filters[i];

        ck_assert_ptr_eq(sp_filter_of(i == 0 ? NULL : f), f);
        for (size_t j = 0; j < i; j++)
            ck_assert_str_ne(f->name, sp_filters[j]->name);
        ck_assert_ptr_eq(sp_filter_named(f->name), f->by_factor ? f : NULL);
        for (size_t sh = 0; sh < NSHAPES; sh++)
            for (int kind = 0; kind <= 8; kind++)
                try_filter(f, sh, kind, &band, &scratch, &out);
    }
    munmap(band.map, band.len);
    munmap(scratch.map, scratch.len);
    munmap(out.map, out.len);
}
END_TEST

static Suite *tables_suite(void)
{
    Suite *s = suite_create("tables");
    TCase *tc = fx_tcase("rows");

    tcase_add_test(tc, test_codecs_sniff_to_themselves);
    tcase_add_test(tc, test_codecs_named_when_refused);
    tcase_add_test(tc, test_outfmts_extensions_map_back);
    tcase_add_test(tc, test_filters_read_only_their_span);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(tables_suite());
}
