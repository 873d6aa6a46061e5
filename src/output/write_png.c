/* The streamed PNG encoder: libpng's write interface, a row at a time.
 * Samples of maxval 255 or 65535 go out as they are (8- or 16-bit PNG,
 * big-endian both in PNM and in PNG); a maxval below 255 is rescaled to 8
 * bits, one between 255 and 65535 to 16.  The zlib level is the caller's
 * (SP_PNG_LEVEL by default, zlib's and pamtopng's 6); every other zlib
 * setting is libpng's (its strategy, memory level and window), and each
 * row's filter is chosen by libpng's adaptive heuristic among all five
 * (none at level 0, where nothing is compressed).
 *
 * The heuristic is made here, not by libpng: libpng tries each filter in
 * turn, a byte at a time with a branch on each byte's sign; here the five
 * sums are loops the compiler vectorizes, and libpng is told the one
 * filter to apply to the row (png_set_filter before png_write_row).  The
 * choice is libpng's own, the same rule on the same rows (the least sum
 * of |filtered byte| taken as signed, the earlier filter on a tie, the row
 * above the first all zeros; a one-row image without the filters that
 * look up, a one-column image without those that look left), so the
 * bytes are the ones libpng's heuristic makes: stream_out_test.sh
 * compares them with pamtopng's.  A job's PNG is instead deflated in
 * segments on its threads (write_png_seg.c), with the same filters
 * (sp_png_filter, which also applies the filter) and zlib settings; this
 * serial encoder is sp_output_put's.  The metadata (meta.h) goes before
 * the rows: the ICC profile as it is, in an iCCP chunk (named "icc"),
 * and an eXIf chunk holding the orientation alone. */
#include <errno.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>
#include <zlib.h>

#include "encode.h"

struct penc {
    png_structp png;
    png_infop info;
    FILE *f;
    sp_status write_err;    /* the errno of a failed write, or 0 */
    int oom;                /* an allocation of libpng's (or zlib's)
                               failed */
    unsigned bytes;         /* a sample's in the PNG: 1 or 2 */
    int rescale;            /* rows go through ROW, rescaled */
    unsigned char *row;     /* a row rescaled */
    size_t row_bytes;
    unsigned bpp;           /* bytes a pixel, the filters' distance */
    unsigned allowed;       /* the filters a row may take (PNG_FILTER_*);
                               0: libpng's own (level 0: none) */
    unsigned char *prev;    /* the row above the next one (zeros at
                               first), for the choice */
    int started;            /* a row is written: libpng has set up its
                               rows for the filters set then */
    unsigned char *exif;    /* the eXIf chunk's (sp_meta_exif_block) */
    char msg[SP_WHY_MAX - 8];
};

static void fail(png_structp png, png_const_charp msg)
{
    struct penc *e = png_get_error_ptr(png);

    snprintf(e->msg, sizeof e->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void warn(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;  /* libpng warns of what it wrote anyway */
}

static void write_bytes(png_structp png, png_bytep data, size_t n)
{
    struct penc *e = png_get_io_ptr(png);

    errno = 0;
    if (fwrite(data, 1, n, e->f) != n) {
        e->write_err = errno ? errno : EIO;
        png_error(png, "a write failed");
    }
}

/* alloc: libpng's and zlib's allocations, through malloc, a failure
 * remembered: libpng reports it in its own words, and it is ENOMEM. */
static png_voidp alloc(png_structp png, png_alloc_size_t n)
{
    void *p = malloc(n);

    if (p == NULL)
        ((struct penc *)png_get_mem_ptr(png))->oom = 1;
    return p;
}

static void release(png_structp png, png_voidp p)
{
    (void)png;
    free(p);
}

static void flush_none(png_structp png)
{
    (void)png;  /* the output is flushed as a whole at its close */
}

/* status_of: the status of the failure E met: a write's errno, ENOMEM,
 * or SP_E_ENCODE with libpng's words. */
static sp_status status_of(const struct penc *e, char *why)
{
    if (e->write_err != 0)
        return e->write_err;
    if (e->oom)
        return ENOMEM;
    snprintf(why, SP_WHY_MAX, "PNG: %s", e->msg);
    return SP_E_ENCODE;
}

/* cost: a filtered byte's weight in libpng's heuristic: its value taken
 * as signed, made positive (128 counts 128). */
static inline uint32_t cost(int v)
{
    int c = (signed char)v;

    return (uint32_t)(c < 0 ? -c : c);
}

/* paeth: the Paeth predictor of A (left), B (up), C (up left), without a
 * branch, so that its loop is vectorized. */
static inline int paeth(int a, int b, int c)
{
    int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
    int take_a = (pa <= pb) & (pa <= pc), take_b = pb <= pc;

    return take_a ? a : take_b ? b : c;
}

/* BLOCK: the bytes summed in 32 bits (128 at most a byte) before a sum
 * is carried into 64. */
#define BLOCK ((size_t)1 << 24)

/* block_sums: the five sums over ROW's bytes [I0, I1) (I0 >= BPP) under
 * UP, added to S: none, sub, up, average, Paeth.  Each a loop of its own,
 * which the compiler vectorizes. */
static void block_sums(const unsigned char *row, const unsigned char *up,
                       size_t i0, size_t i1, unsigned bpp, uint64_t s[5])
{
    uint32_t none = 0, sub = 0, vert = 0, avg = 0, pae = 0;

    for (size_t i = i0; i < i1; i++)
        none += cost(row[i]);
    for (size_t i = i0; i < i1; i++)
        sub += cost(row[i] - row[i - bpp]);
    for (size_t i = i0; i < i1; i++)
        vert += cost(row[i] - up[i]);
    for (size_t i = i0; i < i1; i++)
        avg += cost(row[i] - ((row[i - bpp] + up[i]) >> 1));
    for (size_t i = i0; i < i1; i++)
        pae += cost(row[i] - paeth(row[i - bpp], up[i], up[i - bpp]));
    s[0] += none;
    s[1] += sub;
    s[2] += vert;
    s[3] += avg;
    s[4] += pae;
}

/* sums: the heuristic's sum for each filter (none, sub, up, average,
 * Paeth) of ROW (N bytes, BPP a pixel) under UP, into S.  The first
 * pixel has no left neighbour: it counts as zeros. */
static void sums(const unsigned char *row, const unsigned char *up,
                 size_t n, unsigned bpp, uint64_t s[5])
{
    size_t lead = bpp < n ? bpp : n;

    s[0] = s[1] = s[2] = s[3] = s[4] = 0;
    for (size_t i = 0; i < lead; i++) {
        s[0] += cost(row[i]);
        s[1] += cost(row[i]);
        s[2] += cost(row[i] - up[i]);
        s[3] += cost(row[i] - (up[i] >> 1));
        s[4] += cost(row[i] - up[i]);
    }
    for (size_t i = lead; i < n; i += BLOCK)
        block_sums(row, up, i, n - i < BLOCK ? n : i + BLOCK, bpp, s);
}

/* choose: the filter (PNG_FILTER_*) libpng's heuristic gives ROW under
 * UP, among E's allowed ones. */
static int choose(const struct penc *e, const unsigned char *row,
                  const unsigned char *up)
{
    static const int flags[5] = {PNG_FILTER_NONE, PNG_FILTER_SUB,
                                 PNG_FILTER_UP, PNG_FILTER_AVG,
                                 PNG_FILTER_PAETH};
    uint64_t s[5];
    int best = 0;

    sums(row, up, e->row_bytes, e->bpp, s);
    for (int f = 1; f < 5; f++)
        if ((e->allowed & (unsigned)flags[f]) && s[f] < s[best])
            best = f;
    return flags[best];
}

/* apply: ROW filtered by FLAG (PNG_FILTER_*) under UP into OUT: the
 * filter's type byte, then N bytes. */
static void apply(unsigned char *out, const unsigned char *row,
                  const unsigned char *up, size_t n, unsigned bpp, int flag)
{
    unsigned char *d = out + 1;
    size_t lead = bpp < n ? bpp : n;

    out[0] = flag == PNG_FILTER_SUB     ? 1
             : flag == PNG_FILTER_UP    ? 2
             : flag == PNG_FILTER_AVG   ? 3
             : flag == PNG_FILTER_PAETH ? 4
                                        : 0;
    for (size_t i = 0; i < lead; i++)
        d[i] = (unsigned char)(out[0] == 0 || out[0] == 1 ? row[i]
                               : out[0] == 3 ? row[i] - (up[i] >> 1)
                                             : row[i] - up[i]);
    if (out[0] == 0)
        memcpy(d + lead, row + lead, n - lead);
    else if (out[0] == 1)
        for (size_t i = lead; i < n; i++)
            d[i] = (unsigned char)(row[i] - row[i - bpp]);
    else if (out[0] == 2)
        for (size_t i = lead; i < n; i++)
            d[i] = (unsigned char)(row[i] - up[i]);
    else if (out[0] == 3)
        for (size_t i = lead; i < n; i++)
            d[i] = (unsigned char)(row[i] - ((row[i - bpp] + up[i]) >> 1));
    else
        for (size_t i = lead; i < n; i++)
            d[i] = (unsigned char)(row[i] - paeth(row[i - bpp], up[i],
                                                  up[i - bpp]));
}

void sp_png_filter(unsigned char *out, const unsigned char *row,
                   const unsigned char *up, size_t n, unsigned bpp,
                   unsigned allowed)
{
    struct penc e = {.row_bytes = n, .bpp = bpp, .allowed = allowed};

    apply(out, row, up, n, bpp,
          allowed != 0 ? choose(&e, row, up) : PNG_FILTER_NONE);
}

unsigned sp_png_allowed(const struct sp_image *layout, int level)
{
    unsigned allowed = PNG_ALL_FILTERS;

    if (level == 0)
        return 0;
    if (layout->height == 1)
        allowed &= ~(unsigned)(PNG_FILTER_UP | PNG_FILTER_AVG |
                               PNG_FILTER_PAETH);
    if (layout->width == 1)
        allowed &= ~(unsigned)(PNG_FILTER_SUB | PNG_FILTER_AVG |
                               PNG_FILTER_PAETH);
    return allowed;
}

static const int color_types[] = {PNG_COLOR_TYPE_GRAY,
                                  PNG_COLOR_TYPE_GRAY_ALPHA,
                                  PNG_COLOR_TYPE_RGB,
                                  PNG_COLOR_TYPE_RGB_ALPHA};

/* set_meta: META's profile and EXIF set in E's info, for the header's
 * write (in E's jump: header()'s). */
static sp_status set_meta(struct penc *e, const struct sp_meta *meta)
{
    size_t len;
    sp_status st;

    if (meta == NULL)
        return SP_OK;
    if (meta->icc != NULL)
        png_set_iCCP(e->png, e->info, "icc", PNG_COMPRESSION_TYPE_BASE,
                     meta->icc, (png_uint_32)meta->icc_len);
    st = sp_meta_exif_block(meta, &e->exif, &len);
    if (st == SP_OK && e->exif != NULL)
        png_set_eXIf_1(e->png, e->info,
                       (png_uint_32)(len - SP_META_EXIF_HEAD),
                       e->exif + SP_META_EXIF_HEAD);
    return st;
}

/* header: E's IHDR for LAYOUT and its settings, and META, written. */
static sp_status header(struct penc *e, const struct sp_image *l,
                        int level, const struct sp_meta *meta, char *why)
{
    sp_status st;

    if (setjmp(png_jmpbuf(e->png)))
        return status_of(e, why);
    png_set_user_limits(e->png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
    png_set_write_fn(e->png, e, write_bytes, flush_none);
    png_set_IHDR(e->png, e->info, (png_uint_32)l->width,
                 (png_uint_32)l->height, (int)e->bytes * 8,
                 color_types[l->channels - 1], PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(e->png, level);
    png_set_filter(e->png, PNG_FILTER_TYPE_BASE,
                   level == 0 ? PNG_FILTER_NONE : PNG_ALL_FILTERS);
    /* libpng picks the strategy from the filters set when the first row
     * comes: Z_FILTERED for its adaptive filters, kept whatever filter
     * that row takes. */
    if (level != 0)
        png_set_compression_strategy(e->png, Z_FILTERED);
    st = set_meta(e, meta);
    if (st == SP_OK)
        png_write_info(e->png, e->info);
    return st;
}

static sp_status begin(FILE *f, const struct sp_image *layout,
                       const struct sp_encode_opts *opts, void **state,
                       char *why)
{
    struct penc *e = calloc(1, sizeof *e);
    int level = opts->compression >= 0 ? opts->compression : SP_PNG_LEVEL;

    *state = e;
    if (e == NULL)
        return ENOMEM;
    e->f = f;
    e->bytes = layout->maxval > 255 ? 2 : 1;
    e->rescale = layout->maxval != (e->bytes == 2 ? 65535u : 255u);
    e->bpp = layout->channels * e->bytes;
    e->row_bytes = layout->width * e->bpp;
    e->allowed = sp_png_allowed(layout, level);
    if (level != 0 && (e->prev = calloc(1, e->row_bytes)) == NULL)
        return ENOMEM;
    if (e->rescale && (e->row = malloc(e->row_bytes)) == NULL)
        return ENOMEM;
    e->png = png_create_write_struct_2(PNG_LIBPNG_VER_STRING, e, fail, warn,
                                       e, alloc, release);
    if (e->png != NULL)
        e->info = png_create_info_struct(e->png);
    if (e->info == NULL)
        return ENOMEM;
    return header(e, layout, level, opts->meta, why);
}

/* put_row: ROW written TIMES times, each time under the filter the
 * heuristic gives it (the first under E->prev, the others under ROW
 * itself); E->prev is then ROW.  The image's first row is left to
 * libpng's own heuristic, with every filter set: libpng makes the
 * buffers of the filters that look up only for those set when its first
 * row comes. */
static void put_row(struct penc *e, const unsigned char *row, unsigned times)
{
    for (unsigned t = 0; t < times; t++) {
        if (e->allowed != 0 && e->started && t < 2)
            png_set_filter(e->png, PNG_FILTER_TYPE_BASE,
                           choose(e, row, t == 0 ? e->prev : row));
        png_write_row(e->png, row);
        e->started = 1;
    }
    if (e->allowed != 0)
        memcpy(e->prev, row, e->row_bytes);
}

static sp_status rows(void *state, const struct sp_image *img,
                      unsigned times, char *why)
{
    struct penc *e = state;

    if (setjmp(png_jmpbuf(e->png)))
        return status_of(e, why);
    for (size_t y = 0; y < img->height; y++) {
        const unsigned char *row = img->pixels + y * img->stride;

        if (e->rescale) {
            sp_samples_rescale(e->row, row, img->width, img->channels,
                               img->channels, img->sample_size, img->maxval,
                               e->bytes, SP_BACKGROUND);  /* alpha kept */
            row = e->row;
        }
        put_row(e, row, times);
    }
    return SP_OK;
}

static sp_status finish(void *state, char *why)
{
    struct penc *e = state;

    if (setjmp(png_jmpbuf(e->png)))
        return status_of(e, why);
    png_write_end(e->png, NULL);
    return SP_OK;
}

static void end(void *state)
{
    struct penc *e = state;

    if (e == NULL)
        return;
    png_destroy_write_struct(&e->png, &e->info);
    free(e->row);
    free(e->prev);
    free(e->exif);
    free(e);
}

const struct sp_stream_ops sp_stream_png = {begin, rows, finish, end};
