/* The scale kernels against a plain per-pixel reference written here, the
 * output size, a box mean worked by hand, and bands in any split; the wide
 * loads and stores against inaccessible pages and canaries; the box
 * filter's fast division at the edges of where it is used. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fixtures.h"
#include "scale.h"

/* expect: ck_assert_msg for hot loops: Check records the place of every
 * assertion that passes (a write() to its pipe in fork mode), so a loop
 * over many cases tests first and only calls into Check when one fails. */
#define expect(cond, ...)                                                    \
    do {                                                                     \
        if (!(cond))                                                         \
            ck_abort_msg(__VA_ARGS__);                                       \
    } while (0)

/* scale_all: sp_scale_size + sp_image_alloc + sp_scale_rows over all rows. */
static void scale_all(const struct sp_image *src, int factor,
                      enum sp_filter filter, struct sp_image *dst)
{
    size_t ow, oh;

    ck_assert_int_eq(sp_scale_size(src->width, src->height, factor, &ow, &oh),
                     SP_OK);
    ck_assert_int_eq(sp_image_alloc(dst, ow, oh, src->channels,
                                    src->sample_size, src->maxval), SP_OK);
    /* Garbage in the output shows rows the kernel forgot. */
    memset(dst->pixels, 0xa5, dst->base_len);
    sp_scale_rows(src, factor, filter, 0, oh, dst->pixels);
}

START_TEST(test_scale_size)
{
    static const struct {
        size_t w, h;
        int factor;
        size_t ow, oh;
    } cases[] = {
        {10, 7, 1, 10, 7},       {10, 7, -1, 10, 7},
        {10, 7, 2, 20, 14},      {10, 7, 8, 80, 56},
        {10, 7, -2, 5, 4},       {10, 7, -3, 4, 3},
        {9, 9, -3, 3, 3},        {10, 10, -3, 4, 4},
        {1, 1, -8, 1, 1},        {7, 1, -8, 1, 1},
        {451, 300, -2, 226, 150}, {451, 300, -7, 65, 43},
        {1, 1, SP_SCALE_MAX, SP_SCALE_MAX, SP_SCALE_MAX},
        {3, 100000, -SP_SCALE_MAX, 1, 2},
        {SIZE_MAX, SIZE_MAX, -1, SIZE_MAX, SIZE_MAX},
        {SIZE_MAX, 1, -2, SIZE_MAX / 2 + 1, 1},
        {SIZE_MAX / 2, 1, 2, SIZE_MAX - 1, 2},
    };
    size_t ow, oh;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ow = oh = 12345;
        ck_assert_int_eq(sp_scale_size(cases[i].w, cases[i].h,
                                       cases[i].factor, &ow, &oh), SP_OK);
        ck_assert_msg(ow == cases[i].ow && oh == cases[i].oh,
                      "%zux%zu by %d: %zux%zu, want %zux%zu", cases[i].w,
                      cases[i].h, cases[i].factor, ow, oh, cases[i].ow,
                      cases[i].oh);
    }
    ck_assert_int_eq(sp_scale_size(10, 10, 0, &ow, &oh), SP_E_USAGE);
    ck_assert_int_eq(sp_scale_size(10, 10, SP_SCALE_MAX + 1, &ow, &oh),
                     SP_E_USAGE);
    ck_assert_int_eq(sp_scale_size(10, 10, -SP_SCALE_MAX - 1, &ow, &oh),
                     SP_E_USAGE);
    ck_assert_int_eq(sp_scale_size(10, 10, INT32_MIN, &ow, &oh), SP_E_USAGE);
    ck_assert_int_eq(sp_scale_size(10, 10, INT32_MAX, &ow, &oh), SP_E_USAGE);
    ck_assert_int_eq(sp_scale_size(SIZE_MAX / 2 + 1, 1, 2, &ow, &oh),
                     SP_E_TOOBIG);
    ck_assert_int_eq(sp_scale_size(1, SIZE_MAX / 2 + 1, 2, &ow, &oh),
                     SP_E_TOOBIG);
    ck_assert_int_eq(sp_scale_size(SIZE_MAX / 3, 1, 4, &ow, &oh),
                     SP_E_TOOBIG);
    ck_assert_int_eq(sp_scale_size(1, (SIZE_MAX >> 16) + 1, SP_SCALE_MAX,
                                   &ow, &oh), SP_E_TOOBIG);
}
END_TEST

static const size_t sizes[][2] = {
    {1, 1}, {1, 7}, {7, 1}, {2, 2}, {13, 11}, {31, 17}, {16, 16},
};

/* Every factor -8..8, both filters, on odd sizes; _i picks the layout:
 * channels 1, 3, 2, 4 or 5 (a PAM's: the pixel sizes with a kernel of
 * their own, and one without), bytes 1 or 2. */
START_TEST(test_against_reference)
{
    static const unsigned chans[] = {1, 3, 2, 4, 5};
    unsigned channels = chans[_i / 2], bytes = _i & 1 ? 2 : 1;
    unsigned maxval = bytes == 2 ? 65535 : 255;

    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        struct sp_image src, want, got;

        fx_make_image(&src, sizes[s][0], sizes[s][1], channels, bytes, maxval,
                      (unsigned)s);
        for (int factor = -8; factor <= 8; factor++) {
            if (factor == 0)
                continue;
            for (int f = SP_FILTER_SAMPLE; f <= SP_FILTER_BOX; f++) {
                fx_ref_scale(&src, factor, (enum sp_filter)f, &want);
                scale_all(&src, factor, (enum sp_filter)f, &got);
                ck_assert_msg(fx_images_equal(&got, &want),
                              "%zux%zu c%u b%u factor %d %s differs",
                              sizes[s][0], sizes[s][1], channels, bytes,
                              factor, sp_filter_name((enum sp_filter)f));
                sp_image_release(&want);
                sp_image_release(&got);
            }
        }
        sp_image_release(&src);
    }
}
END_TEST

/* Alpha weighs colour in a box: opaque red beside transparent blue is
 * red, half opaque: (255*255 + 0*0 + 127) / 255 = 255, alpha (255 + 0 + 1)
 * / 2 = 128; all transparent takes the plain mean. */
START_TEST(test_box_alpha_by_hand)
{
    static const unsigned char px[2][8] = {{255, 0, 0, 255, 0, 0, 255, 0},
                                           {10, 20, 30, 0, 30, 40, 50, 0}};
    static const unsigned char want[2][4] = {{255, 0, 0, 128},
                                             {20, 30, 40, 0}};
    struct sp_image src;
    unsigned char got[4];

    ck_assert_int_eq(sp_image_alloc(&src, 2, 1, 4, 1, 255), SP_OK);
    src.alpha = 1;
    for (int r = 0; r < 2; r++) {
        memcpy(src.pixels, px[r], sizeof px[r]);
        sp_scale_rows(&src, -2, SP_FILTER_BOX, 0, 1, got);
        ck_assert_mem_eq(got, want[r], sizeof got);
    }
    sp_image_release(&src);
}
END_TEST

/* bit_of: pixel (X, Y) of a packed image, 1 black. */
static unsigned bit_of(const struct sp_image *img, size_t x, size_t y)
{
    return img->pixels[y * img->stride + x / 8] >> (7 - x % 8) & 1u;
}

/* A PBM's bits, every factor -8..8 and both filters on odd widths (spare
 * bits in the last byte), against the same image as 0/1 gray through the
 * reference: sample and enlarge give its bits back, box the share of
 * white as 0..255. */
START_TEST(test_bits_against_reference)
{
    static const size_t dims[][2] = {{1, 1}, {7, 3}, {8, 2}, {9, 5},
                                     {37, 13}, {64, 9}};
    uint32_t rng = 5;

    for (size_t s = 0; s < sizeof dims / sizeof dims[0]; s++) {
        size_t w = dims[s][0], h = dims[s][1];
        struct sp_image bits = {.width = w, .height = h, .channels = 1,
                                .sample_size = 1, .maxval = 1, .packed = 1,
                                .magic = '4'};
        struct sp_image gray, want, got, type;

        ck_assert_int_eq(sp_image_alloc_like(&bits, w, h, &bits), SP_OK);
        ck_assert_int_eq(sp_image_alloc(&gray, w, h, 1, 1, 255), SP_OK);
        for (size_t i = 0; i < bits.base_len; i++) {
            rng = rng * 1103515245u + 12345u;
            bits.pixels[i] = (unsigned char)(rng >> 16);
        }
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w; x++)
                fx_set_sample(&gray, x, y, 0, bit_of(&bits, x, y) ? 0 : 255);
        for (int factor = -8; factor <= 8; factor++) {
            for (int f = SP_FILTER_SAMPLE; f <= SP_FILTER_BOX; f++) {
                size_t ow, oh;

                if (factor == 0 || (f == SP_FILTER_BOX && factor > -2))
                    continue;
                fx_ref_scale(&gray, factor, (enum sp_filter)f, &want);
                ck_assert_int_eq(sp_scale_size(w, h, factor, &ow, &oh), SP_OK);
                sp_scale_type(&bits, factor, (enum sp_filter)f, &type);
                ck_assert_int_eq(sp_image_alloc_like(&got, ow, oh, &type),
                                 SP_OK);
                memset(got.pixels, 0xa5, got.base_len);
                sp_scale_rows(&bits, factor, (enum sp_filter)f, 0, oh,
                              got.pixels);
                for (size_t y = 0; y < oh; y++) {
                    for (size_t x = 0; x < ow; x++) {
                        unsigned v = got.packed
                                         ? (bit_of(&got, x, y) ? 0 : 255)
                                         : got.pixels[y * got.stride + x];
                        ck_assert_msg(v == fx_sample(&want, x, y, 0),
                                      "%zux%zu by %d %s: (%zu, %zu) is %u, "
                                      "want %u", w, h, factor,
                                      sp_filter_name((enum sp_filter)f), x,
                                      y, v, fx_sample(&want, x, y, 0));
                    }
                    /* the last byte's spare bits are 0 */
                    if (got.packed && ow % 8 != 0)
                        ck_assert_uint_eq(got.pixels[y * got.stride +
                                                     ow / 8] &
                                              (0xffu >> (ow % 8)), 0);
                }
                sp_image_release(&want);
                sp_image_release(&got);
            }
        }
        sp_image_release(&bits);
        sp_image_release(&gray);
    }
}
END_TEST

/* A larger odd size, and a maxval that is not 2^k - 1. */
START_TEST(test_reference_larger)
{
    static const int factors[] = {-7, -5, -4, -3, -2, 2, 3};
    struct sp_image src, want, got;

    fx_make_image(&src, 451, 300, 3, 2, 1000, 11);
    for (size_t i = 0; i < sizeof factors / sizeof factors[0]; i++) {
        for (int f = SP_FILTER_SAMPLE; f <= SP_FILTER_BOX; f++) {
            if (factors[i] > 0 && f == SP_FILTER_BOX)
                continue;
            fx_ref_scale(&src, factors[i], (enum sp_filter)f, &want);
            scale_all(&src, factors[i], (enum sp_filter)f, &got);
            ck_assert_msg(fx_images_equal(&got, &want), "factor %d %s",
                          factors[i], sp_filter_name((enum sp_filter)f));
            sp_image_release(&want);
            sp_image_release(&got);
        }
    }
    sp_image_release(&src);
}
END_TEST

/* A 3x3 gray image reduced by 2, worked by hand:
 *   10 20 30      box:  (10+20+40+50+2)/4 = 30   (30+61+1)/2 = 46
 *   40 50 61            (70+80+1)/2 = 75          90
 *   70 80 90      sample: 10 30 / 70 90 */
START_TEST(test_box_by_hand)
{
    static const unsigned char in[9] = {10, 20, 30, 40, 50, 61, 70, 80, 90};
    static const unsigned char box[4] = {30, 46, 75, 90};
    static const unsigned char sample[4] = {10, 30, 70, 90};
    struct sp_image src, dst;

    ck_assert_int_eq(sp_image_alloc(&src, 3, 3, 1, 1, 255), SP_OK);
    memcpy(src.pixels, in, sizeof in);
    scale_all(&src, -2, SP_FILTER_BOX, &dst);
    ck_assert_uint_eq(dst.width, 2);
    ck_assert_uint_eq(dst.height, 2);
    ck_assert_mem_eq(dst.pixels, box, sizeof box);
    sp_image_release(&dst);
    scale_all(&src, -2, SP_FILTER_SAMPLE, &dst);
    ck_assert_mem_eq(dst.pixels, sample, sizeof sample);
    sp_image_release(&dst);
    /* By 3 the one block is the whole image: 451 / 9 = 50.1 -> 50. */
    scale_all(&src, -3, SP_FILTER_BOX, &dst);
    ck_assert_uint_eq(dst.width, 1);
    ck_assert_uint_eq(dst.pixels[0], 50);
    sp_image_release(&dst);
    sp_image_release(&src);
}
END_TEST

/* 16-bit samples: a half rounds up, full-scale blocks do not overflow,
 * and the bytes stay big-endian. */
START_TEST(test_box_16bit)
{
    struct sp_image src, dst;

    ck_assert_int_eq(sp_image_alloc(&src, 2, 1, 1, 2, 65535), SP_OK);
    fx_set_sample(&src, 0, 0, 0, 1000);
    fx_set_sample(&src, 1, 0, 0, 1001);
    scale_all(&src, -2, SP_FILTER_BOX, &dst);
    ck_assert_uint_eq(dst.pixels[0], 1001 >> 8);
    ck_assert_uint_eq(dst.pixels[1], 1001 & 0xff);
    sp_image_release(&dst);
    sp_image_release(&src);

    ck_assert_int_eq(sp_image_alloc(&src, 64, 64, 3, 2, 65535), SP_OK);
    memset(src.pixels, 0xff, src.base_len);
    for (int n = 2; n <= 64; n *= 2) {
        scale_all(&src, -n, SP_FILTER_BOX, &dst);
        for (size_t i = 0; i < dst.base_len; i++)
            ck_assert_uint_eq(dst.pixels[i], 0xff);
        sp_image_release(&dst);
    }
    sp_image_release(&src);
}
END_TEST

/* Enlarge by hand: a 2x1 RGB image by 2. */
START_TEST(test_enlarge_by_hand)
{
    static const unsigned char in[6] = {1, 2, 3, 4, 5, 6};
    static const unsigned char want[24] = {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6,
                                           1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6};
    struct sp_image src, dst;

    ck_assert_int_eq(sp_image_alloc(&src, 2, 1, 3, 1, 255), SP_OK);
    memcpy(src.pixels, in, sizeof in);
    scale_all(&src, 2, SP_FILTER_SAMPLE, &dst);
    ck_assert_uint_eq(dst.width, 4);
    ck_assert_uint_eq(dst.height, 2);
    ck_assert_mem_eq(dst.pixels, want, sizeof want);
    sp_image_release(&dst);
    /* The filter does not matter when enlarging or copying. */
    scale_all(&src, 2, SP_FILTER_BOX, &dst);
    ck_assert_mem_eq(dst.pixels, want, sizeof want);
    sp_image_release(&dst);
    scale_all(&src, -1, SP_FILTER_BOX, &dst);
    ck_assert_mem_eq(dst.pixels, in, sizeof in);
    sp_image_release(&dst);
    sp_image_release(&src);
}
END_TEST

/* Bands [y0, y1) in arbitrary splits, in any order, give what one call
 * over every row gives; an empty band writes nothing. */
START_TEST(test_bands_any_split)
{
    unsigned channels = _i & 1 ? 3 : 1, bytes = _i & 2 ? 2 : 1;
    uint32_t rng = 12345;

    for (int factor = -8; factor <= 8; factor++) {
        struct sp_image src, whole, banded;

        if (factor == 0)
            continue;
        fx_make_image(&src, 23, 19, channels, bytes, bytes == 2 ? 65535 : 255,
                      (unsigned)(factor + 8));
        for (int f = SP_FILTER_SAMPLE; f <= SP_FILTER_BOX; f++) {
            scale_all(&src, factor, (enum sp_filter)f, &whole);
            for (int trial = 0; trial < 6; trial++) {
                size_t cuts[16], ncut = 0, y = 0;

                ck_assert_int_eq(sp_image_alloc(&banded, whole.width,
                                                whole.height, channels, bytes,
                                                whole.maxval), SP_OK);
                memset(banded.pixels, 0x5a, banded.base_len);
                /* Cut points, some bands one row, some empty. */
                cuts[ncut++] = 0;
                while (y < whole.height && ncut < 15) {
                    rng = rng * 1103515245u + 12345u;
                    y += (rng >> 16) % (trial + 2);
                    if (y > whole.height)
                        y = whole.height;
                    cuts[ncut++] = y;
                }
                cuts[ncut++] = whole.height;
                /* Last band first, then the rest backwards. */
                for (size_t k = ncut - 1; k > 0; k--)
                    sp_scale_rows(&src, factor, (enum sp_filter)f,
                                  cuts[k - 1], cuts[k],
                                  banded.pixels + cuts[k - 1] * banded.stride);
                ck_assert_msg(fx_images_equal(&banded, &whole),
                              "c%u b%u factor %d %s trial %d", channels,
                              bytes, factor,
                              sp_filter_name((enum sp_filter)f), trial);
                sp_image_release(&banded);
            }
            sp_image_release(&whole);
        }
        sp_image_release(&src);
    }
}
END_TEST

/* Every single-row band on its own gives the same rows. */
START_TEST(test_bands_one_row)
{
    static const int factors[] = {-3, -2, 2, 3, 5};
    struct sp_image src, whole, banded;

    fx_make_image(&src, 13, 11, 3, 1, 255, 1);
    for (size_t i = 0; i < sizeof factors / sizeof factors[0]; i++) {
        for (int f = SP_FILTER_SAMPLE; f <= SP_FILTER_BOX; f++) {
            scale_all(&src, factors[i], (enum sp_filter)f, &whole);
            ck_assert_int_eq(sp_image_alloc(&banded, whole.width,
                                            whole.height, 3, 1, 255), SP_OK);
            for (size_t y = whole.height; y-- > 0;)
                sp_scale_rows(&src, factors[i], (enum sp_filter)f, y, y + 1,
                              banded.pixels + y * banded.stride);
            ck_assert(fx_images_equal(&banded, &whole));
            sp_image_release(&banded);
            sp_image_release(&whole);
        }
    }
    sp_image_release(&src);
}
END_TEST

/* ---- the wide loads and stores: fences ----
 *
 * An arena is a mapping with an inaccessible page on either side.  A
 * buffer is placed in it against the page after (a load or store past its
 * end faults), against the page before, or between canary bytes.  The
 * source raster is placed so too and made read-only (a mapped input is
 * PROT_READ).  A fault names the case it happened in on stderr. */

#define CANARY 64

struct arena {
    unsigned char *map;
    size_t map_len;
    unsigned char *lo, *hi;    /* the accessible bytes: [lo, hi) */
};

enum place { AGAINST_END, AGAINST_START, BETWEEN_CANARIES };

static char where[256];

static void on_fault(int sig)
{
    static const char pre[] = "fault in case: ";
    ssize_t ignored;

    ignored = write(STDERR_FILENO, pre, sizeof pre - 1);
    ignored = write(STDERR_FILENO, where, strnlen(where, sizeof where));
    ignored = write(STDERR_FILENO, "\n", 1);
    (void)ignored;
    signal(sig, SIG_DFL);  /* the access faults again, and kills */
}

static void catch_faults(void)
{
    signal(SIGSEGV, on_fault);
    signal(SIGBUS, on_fault);
}

static void arena_make(struct arena *a, size_t max_len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t data = (max_len + 2 * CANARY + page - 1) / page * page;

    a->map_len = data + 2 * page;
    a->map = mmap(NULL, a->map_len, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(a->map != MAP_FAILED);
    ck_assert_int_eq(mprotect(a->map, page, PROT_NONE), 0);
    ck_assert_int_eq(mprotect(a->map + page + data, page, PROT_NONE), 0);
    a->lo = a->map + page;
    a->hi = a->lo + data;
}

static void arena_free(struct arena *a)
{
    ck_assert_int_eq(munmap(a->map, a->map_len), 0);
}

static unsigned char canary(size_t i)
{
    return (unsigned char)(i * 37 + 11);
}

/* arena_place: a LEN-byte buffer in A placed as P says; with canaries, the
 * CANARY bytes either side are set. */
static unsigned char *arena_place(struct arena *a, size_t len, enum place p)
{
    unsigned char *b;

    ck_assert_uint_le(len + 2 * CANARY, (size_t)(a->hi - a->lo));
    switch (p) {
    case AGAINST_END:
        return a->hi - len;
    case AGAINST_START:
        return a->lo;
    case BETWEEN_CANARIES:
        break;
    }
    b = a->lo + CANARY;
    for (size_t i = 0; i < CANARY; i++) {
        b[-1 - (ptrdiff_t)i] = canary(i);
        b[len + i] = canary(i + 1000);
    }
    return b;
}

/* canaries_intact: the bytes either side of B (placed between canaries)
 * are as arena_place() left them. */
static int canaries_intact(const unsigned char *b, size_t len)
{
    for (size_t i = 0; i < CANARY; i++)
        if (b[-1 - (ptrdiff_t)i] != canary(i) ||
            b[len + i] != canary(i + 1000))
            return 0;
    return 1;
}

/* fenced_source: SRC's raster copied into A as P says, read-only, in a
 * view *IMG that owns nothing.  Undo with source_writable(). */
static void fenced_source(struct arena *a, const struct sp_image *src,
                          enum place p, struct sp_image *img)
{
    size_t row = src->width * sp_image_pixel_size(src);
    size_t len = row * src->height;
    unsigned char *b = arena_place(a, len, p);

    for (size_t y = 0; y < src->height; y++)
        memcpy(b + y * row, src->pixels + y * src->stride, row);
    *img = *src;
    img->backing = SP_BACKING_NONE;
    img->base = NULL;
    img->base_len = 0;
    img->pixels = b;
    img->stride = row;
    ck_assert_int_eq(mprotect(a->lo, (size_t)(a->hi - a->lo), PROT_READ), 0);
}

static void source_writable(struct arena *a)
{
    ck_assert_int_eq(mprotect(a->lo, (size_t)(a->hi - a->lo),
                              PROT_READ | PROT_WRITE), 0);
}

/* fenced_rows: rows [Y0, Y1) of SRC by FACTOR and FILTER into a buffer of
 * exactly their size placed in OUT as P says: with canaries they are
 * intact, and the rows are WANT's. */
static void fenced_rows(const struct sp_image *src, int factor,
                        enum sp_filter filter, size_t y0, size_t y1,
                        struct arena *out, enum place p,
                        const struct sp_image *want)
{
    size_t row = want->width * sp_image_pixel_size(want);
    size_t len = row * (y1 - y0);
    unsigned char *b = arena_place(out, len, p);

    if (p != BETWEEN_CANARIES)
        memset(b, 0xa5, len);
    sp_scale_rows(src, factor, filter, y0, y1, b);
    expect(p != BETWEEN_CANARIES || canaries_intact(b, len),
           "%s: rows [%zu, %zu) wrote past their buffer", where, y0, y1);
    expect(memcmp(b, want->pixels + y0 * want->stride, len) == 0,
           "%s: rows [%zu, %zu) differ from the reference", where, y0, y1);
}

/* Every width 1..24, height 1..5, factor 2..9 and -2..-9; _i picks
 * channels 1 or 3, bytes 1 or 2, and the filter.  The source's last byte
 * is the last before an inaccessible page (then its first the first
 * after one), so any read past the raster faults; the output is exactly
 * its size, against an inaccessible page or between canaries; and bands
 * of rows, split in 2, 3 or 4 and one row each, are each filled into an
 * exact buffer of their own (for the stb formats the job's items are
 * neighbours in one image: a store past an item's end would race with
 * the next item's thread). */
START_TEST(test_fenced)
{
    unsigned channels = _i & 1 ? 3 : 1, bytes = _i & 2 ? 2 : 1;
    enum sp_filter filter = _i & 4 ? SP_FILTER_BOX : SP_FILTER_SAMPLE;
    unsigned maxval = bytes == 2 ? 65535 : 255;
    struct arena in, out;

    catch_faults();
    arena_make(&in, 24 * 5 * 6);
    arena_make(&out, 24 * 9 * 5 * 9 * 6);
    for (size_t w = 1; w <= 24; w++) {
        for (size_t h = 1; h <= 5; h++) {
            struct sp_image src;

            fx_make_image(&src, w, h, channels, bytes, maxval,
                          (unsigned)(w * 8 + h));
            for (int k = 0; k < 16; k++) {
                int factor = k < 8 ? k + 2 : 6 - k;  /* 2..9, -2..-9 */
                struct sp_image want, fenced;
                size_t oh;

                fx_ref_scale(&src, factor, filter, &want);
                oh = want.height;
                snprintf(where, sizeof where, "%zux%zu c%u b%u by %d %s", w,
                         h, channels, bytes, factor, sp_filter_name(filter));

                fenced_source(&in, &src, AGAINST_END, &fenced);
                fenced_rows(&fenced, factor, filter, 0, oh, &out,
                            BETWEEN_CANARIES, &want);
                fenced_rows(&fenced, factor, filter, 0, oh, &out,
                            AGAINST_END, &want);
                source_writable(&in);

                fenced_source(&in, &src, AGAINST_START, &fenced);
                fenced_rows(&fenced, factor, filter, 0, oh, &out,
                            AGAINST_START, &want);
                for (size_t t = 2; t <= 5; t++) {
                    size_t bands = t == 5 ? oh : t;

                    if (bands > oh)
                        continue;
                    for (size_t b = 0; b < bands; b++)
                        fenced_rows(&fenced, factor, filter, oh * b / bands,
                                    oh * (b + 1) / bands, &out,
                                    b % 2 ? BETWEEN_CANARIES : AGAINST_END,
                                    &want);
                }
                source_writable(&in);
                sp_image_release(&want);
            }
            sp_image_release(&src);
        }
    }
    arena_free(&in);
    arena_free(&out);
}
END_TEST

/* ---- the box filter's division ----
 *
 * A box's sum is divided by its pixel count D with a multiply-high by a
 * reciprocal when D * maxval + D / 2 fits in 32 bits, by a divide
 * otherwise.  One box over a whole W x H image (factor -max(W, H)) has
 * D = W * H exactly, so D can be put on either side of that line: the
 * largest D that is fast and the smallest that is not, for several
 * maxvals, with every sample maxval (the sum at its largest) and then k
 * of them one less, k = D/2 (still maxval, a half rounds up) and
 * D/2 + 1 (maxval - 1), and with values near the top at random. */
struct box_case {
    size_t w, h;
    unsigned sample_size, maxval;
};

static const struct box_case box_edges[] = {
    {256, 256, 2, 65535},     /* D 65536: fast, the sum 2^32 - 2^16 */
    {331, 198, 2, 65535},     /* D 65538: divides */
    {1, 65536, 2, 65535},     /* one column: D 65536 */
    {65536, 1, 2, 65535},     /* one row */
    {43691, 3, 2, 32767},     /* D 131073: fast */
    {535, 245, 2, 32767},     /* D 131075: divides */
    {2731, 384, 2, 4095},     /* D 1048704: fast */
    {1577, 665, 2, 4095},     /* D 1048705: divides */
    {3407, 1260, 2, 1000},    /* D 4292820: fast */
    {3287, 1306, 2, 1000},    /* D 4292822: divides */
    {4100, 4100, 1, 255},     /* D 16810000: fast */
    {4843, 3471, 1, 255},     /* D 16810053: divides */
};

/* one_box: the one output pixel of IMG reduced by max(w, h) with the box
 * filter, against the exact rounded mean of its samples. */
static void one_box(const struct sp_image *img, const char *what)
{
    size_t n = img->width > img->height ? img->width : img->height;
    uint64_t sum = 0, d = (uint64_t)img->width * img->height, want;
    unsigned char out[2] = {0, 0};
    unsigned got;

    for (size_t y = 0; y < img->height; y++)
        for (size_t x = 0; x < img->width; x++)
            sum += fx_sample(img, x, y, 0);
    want = (sum + d / 2) / d;
    sp_scale_rows(img, -(int)n, SP_FILTER_BOX, 0, 1, out);
    got = img->sample_size == 2 ? (unsigned)out[0] << 8 | out[1] : out[0];
    ck_assert_msg(got == want, "%zux%zu maxval %u (D %llu, sum %llu) %s: "
                  "%u, want %llu", img->width, img->height, img->maxval,
                  (unsigned long long)d, (unsigned long long)sum, what, got,
                  (unsigned long long)want);
}

START_TEST(test_box_divisor_edges)
{
    const struct box_case *c = &box_edges[_i];
    uint64_t d = (uint64_t)c->w * c->h;
    uint32_t rng = 99;
    struct sp_image img;
    size_t k;

    ck_assert_int_eq(sp_image_alloc(&img, c->w, c->h, 1, c->sample_size,
                                    c->maxval), SP_OK);
    for (size_t y = 0; y < c->h; y++)
        for (size_t x = 0; x < c->w; x++)
            fx_set_sample(&img, x, y, 0, c->maxval);
    one_box(&img, "all maxval");
    /* k samples one less, in raster order. */
    for (k = 0; k < d / 2; k++)
        fx_set_sample(&img, k % c->w, k / c->w, 0, c->maxval - 1);
    one_box(&img, "D/2 of them maxval - 1");
    fx_set_sample(&img, k % c->w, k / c->w, 0, c->maxval - 1);
    one_box(&img, "D/2 + 1 of them maxval - 1");
    /* Near the top at random. */
    for (size_t y = 0; y < c->h; y++) {
        for (size_t x = 0; x < c->w; x++) {
            rng = rng * 1103515245u + 12345u;
            fx_set_sample(&img, x, y, 0, c->maxval - (rng >> 16) % 3);
        }
    }
    one_box(&img, "near the top at random");
    /* And all zero but one maxval. */
    memset(img.pixels, 0, img.base_len);
    fx_set_sample(&img, c->w - 1, c->h - 1, 0, c->maxval);
    one_box(&img, "one maxval");
    sp_image_release(&img);
}
END_TEST

/* Whole blocks at the line for 16 bits: N 256 (D 65536, fast) and 257
 * (D 66049, divides), gray and RGB, edge blocks too, samples near the top
 * at random, against the reference. */
START_TEST(test_box_divisor_blocks)
{
    static const size_t dims[][2] = {{512, 512}, {600, 530}, {514, 257}};
    uint32_t rng = 7;

    for (unsigned channels = 1; channels <= 3; channels += 2) {
        for (size_t s = 0; s < sizeof dims / sizeof dims[0]; s++) {
            struct sp_image src, want, got;

            ck_assert_int_eq(sp_image_alloc(&src, dims[s][0], dims[s][1],
                                            channels, 2, 65535), SP_OK);
            for (size_t i = 0; i < src.base_len; i += 2) {
                rng = rng * 1103515245u + 12345u;
                src.pixels[i] = 0xff;
                src.pixels[i + 1] = (unsigned char)(0xff - (rng >> 16) % 4);
            }
            for (int n = 256; n <= 257; n++) {
                fx_ref_scale(&src, -n, SP_FILTER_BOX, &want);
                scale_all(&src, -n, SP_FILTER_BOX, &got);
                ck_assert_msg(fx_images_equal(&got, &want), "%zux%zu c%u by "
                              "-%d differs", dims[s][0], dims[s][1],
                              channels, n);
                sp_image_release(&want);
                sp_image_release(&got);
            }
            sp_image_release(&src);
        }
    }
}
END_TEST

/* Binary samples are not checked against maxval: a 16-bit maxval of 256
 * whose samples are 65535 makes sums past what the fast path was chosen
 * for.  The box must still be the mean of the samples that are there. */
START_TEST(test_box_samples_over_maxval)
{
    static const size_t dims[][2] = {{257, 257}, {256, 256}, {600, 300}};

    for (size_t s = 0; s < sizeof dims / sizeof dims[0]; s++) {
        struct sp_image src, want, got;

        ck_assert_int_eq(sp_image_alloc(&src, dims[s][0], dims[s][1], 1, 2,
                                        256), SP_OK);
        memset(src.pixels, 0xff, src.base_len);
        src.pixels[1] = 0xfe;
        for (int n = 255; n <= 257; n++) {
            fx_ref_scale(&src, -n, SP_FILTER_BOX, &want);
            scale_all(&src, -n, SP_FILTER_BOX, &got);
            ck_assert_msg(fx_images_equal(&got, &want), "%zux%zu by -%d",
                          dims[s][0], dims[s][1], n);
            sp_image_release(&want);
            sp_image_release(&got);
        }
        sp_image_release(&src);
    }
}
END_TEST

START_TEST(test_names)
{
    ck_assert_str_eq(sp_filter_name(SP_FILTER_SAMPLE), "sample");
    ck_assert_str_eq(sp_filter_name(SP_FILTER_BOX), "box");
}
END_TEST

static Suite *scale_suite(void)
{
    Suite *s = suite_create("scale");
    TCase *tc = fx_tcase("kernels");

    tcase_add_test(tc, test_scale_size);
    tcase_add_loop_test(tc, test_against_reference, 0, 10);
    tcase_add_test(tc, test_box_alpha_by_hand);
    tcase_add_test(tc, test_bits_against_reference);
    tcase_add_test(tc, test_reference_larger);
    tcase_add_test(tc, test_box_by_hand);
    tcase_add_test(tc, test_box_16bit);
    tcase_add_test(tc, test_enlarge_by_hand);
    tcase_add_loop_test(tc, test_bands_any_split, 0, 4);
    tcase_add_test(tc, test_bands_one_row);
    tcase_add_test(tc, test_names);
    suite_add_tcase(s, tc);

    tc = fx_tcase("fences");
    tcase_add_loop_test(tc, test_fenced, 0, 8);
    suite_add_tcase(s, tc);

    tc = fx_tcase("box division");
    tcase_add_loop_test(tc, test_box_divisor_edges, 0,
                        (int)(sizeof box_edges / sizeof box_edges[0]));
    tcase_add_test(tc, test_box_divisor_blocks);
    tcase_add_test(tc, test_box_samples_over_maxval);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(scale_suite());
}
