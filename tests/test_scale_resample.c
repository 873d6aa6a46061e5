/* test_scale_resample.c: the area-average resample (resample.h): values
 * worked out by hand, a reference that sums every source pixel's covered
 * area, the box reduce where the ratio is a whole divisor, alpha, 16 bits,
 * PBM bits, and the same bytes for any split into bands. */
#include "scale_lib.h"
#include "resample.h"

/* resample_all: the whole of SRC resampled to OW x OH, in one call, into a
 * fresh DST. */
static void resample_all(const struct sp_image *src, size_t ow, size_t oh,
                         struct sp_image *dst)
{
    struct sp_resample r = {src->width, src->height, ow, oh};
    struct sp_image type;
    void *scratch = aligned_alloc(16, sp_resample_scratch(src, ow) + 16);

    ck_assert_ptr_nonnull(scratch);
    sp_resample_type(src, &type);
    ck_assert_int_eq(sp_image_alloc(dst, ow, oh, type.channels,
                                    type.sample_size, type.maxval), SP_OK);
    dst->alpha = type.alpha;
    memset(dst->pixels, 0xa5, dst->base_len);
    sp_resample_rows(src, 0, &r, 0, oh, scratch, dst->pixels);
    free(scratch);
}

/* gray_row: a W x 1 8-bit gray image of the samples V. */
static void gray_row(struct sp_image *img, size_t w, const unsigned *v)
{
    ck_assert_int_eq(sp_image_alloc(img, w, 1, 1, 1, 255), SP_OK);
    for (size_t x = 0; x < w; x++)
        img->pixels[x] = (unsigned char)v[x];
}

/* overlap: the length of [A0, A1) and [B0, B1) in common. */
static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
    uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

    return hi > lo ? hi - lo : 0;
}

/* reference: output sample (X, Y, C) of SRC resampled to OW x OH, from
 * every source pixel and the area of it the output pixel covers (in units
 * of 1/(OW OH) of a source pixel), a colour weighted by alpha where SRC
 * has it and the pixel is not all transparent: independent of
 * resample.c's spans and separable sums. */
static unsigned reference(const struct sp_image *src, size_t ow, size_t oh,
                          size_t x, size_t y, unsigned c)
{
    const uint64_t w = src->width, h = src->height;
    const unsigned last = src->channels - 1;
    const int colour = src->alpha && c < last;
    unsigned __int128 sum = 0, weighted = 0, alpha = 0;
    unsigned __int128 area = (unsigned __int128)w * h;

    for (uint64_t j = 0; j < h; j++) {
        uint64_t wy = overlap(j * oh, (j + 1) * oh, y * h, (y + 1) * h);

        for (uint64_t i = 0; wy != 0 && i < w; i++) {
            unsigned __int128 k = (unsigned __int128)wy *
                overlap(i * ow, (i + 1) * ow, x * w, (x + 1) * w);
            unsigned v = fx_sample(src, i, j, c);
            unsigned a = colour ? fx_sample(src, i, j, last) : 0;

            sum += v * k;
            weighted += (unsigned __int128)v * a * k;
            alpha += a * k;
        }
    }
    if (alpha > 0)
        return (unsigned)((weighted + alpha / 2) / alpha);
    return (unsigned)((sum + area / 2) / area);
}

/* check_row: the W samples V resampled to OW give WANT. */
static void check_row(size_t w, const unsigned *v, size_t ow,
                      const unsigned *want)
{
    struct sp_image src, dst;

    gray_row(&src, w, v);
    resample_all(&src, ow, 1, &dst);
    for (size_t x = 0; x < ow; x++)
        ck_assert_msg(dst.pixels[x] == want[x], "%zu -> %zu at %zu: %u, "
                      "want %u", w, ow, x, dst.pixels[x], want[x]);
    sp_image_release(&src);
    sp_image_release(&dst);
}

START_TEST(test_by_hand)
{
    /* 3 -> 2: out 0 is 2/3 of pixel 0 and 1/3 of pixel 1 */
    check_row(3, (const unsigned[]){0, 30, 60}, 2,
              (const unsigned[]){10, 50});
    /* 1/3 rounds down to 0 */
    check_row(3, (const unsigned[]){0, 1, 0}, 2, (const unsigned[]){0, 0});
    /* 2 -> 3 (an enlarge): the middle is half of each, 1.5 rounds up */
    check_row(2, (const unsigned[]){1, 2}, 3, (const unsigned[]){1, 2, 2});
}
END_TEST

START_TEST(test_reference)
{
    static const size_t sizes[][4] = {
        {17, 13, 5, 4}, {40, 30, 7, 9}, {9, 31, 9, 2}, {23, 7, 23, 3},
        {5, 6, 11, 13}, {64, 1, 3, 1}, {33, 21, 8, 5}, {19, 40, 6, 11}};
    /* gray, RGB, 5 plain channels, RGBA, gray and alpha (the last two
     * with alpha) */
    static const unsigned kinds[] = {1, 3, 5, 4, 2};
    const size_t *z = sizes[_i];
    const unsigned channels = kinds[_i % 5];
    struct sp_image src, dst;

    fx_make_image(&src, z[0], z[1], channels, _i % 2 ? 2 : 1,
                  _i % 2 ? 65535 : 255, 7 + (unsigned)_i);
    src.alpha = channels == 2 || channels == 4;
    resample_all(&src, z[2], z[3], &dst);
    for (size_t y = 0; y < z[3]; y++)
        for (size_t x = 0; x < z[2]; x++)
            for (unsigned c = 0; c < channels; c++)
                ck_assert_msg(fx_sample(&dst, x, y, c) ==
                                  reference(&src, z[2], z[3], x, y, c),
                              "%zux%zu -> %zux%zu at (%zu, %zu, %u)", z[0],
                              z[1], z[2], z[3], x, y, c);
    sp_image_release(&src);
    sp_image_release(&dst);
}
END_TEST

START_TEST(test_ratio_one_copies)
{
    struct sp_image src, dst;

    fx_make_image(&src, 31, 17, 3, 2, 1000, 3);
    resample_all(&src, 31, 17, &dst);
    ck_assert(fx_images_equal(&src, &dst));
    sp_image_release(&src);
    sp_image_release(&dst);
}
END_TEST

/* A whole ratio that divides both sides is the box reduce, alpha
 * weighting included, 8 and 16 bits, any channel count. */
START_TEST(test_box_equal)
{
    static const unsigned types[][3] = {{1, 1, 255}, {3, 1, 255},
                                        {4, 1, 255}, {2, 2, 65535},
                                        {3, 2, 4095}, {5, 1, 200}};
    const unsigned *t = types[_i];
    struct sp_image src, box, res;

    fx_make_image(&src, 24, 18, t[0], t[1], t[2], 11 + (unsigned)_i);
    src.alpha = t[0] == 2 || t[0] == 4;
    for (int n = 2; n <= 6; n++) {
        if (24 % n || 18 % n)
            continue;
        scale_all(&src, -n, SP_REDUCE_BOX, &box);
        box.alpha = src.alpha;
        resample_all(&src, 24 / (size_t)n, 18 / (size_t)n, &res);
        ck_assert_msg(fx_images_equal(&box, &res), "%u channels by %d",
                      t[0], n);
        sp_image_release(&box);
        sp_image_release(&res);
    }
    sp_image_release(&src);
}
END_TEST

START_TEST(test_alpha_weighted)
{
    /* opaque red beside transparent green: the colour is red's, the
     * opacity half (127.5 rounds up) */
    static const unsigned char px[] = {255, 0, 0, 255, 0, 255, 0, 0};
    struct sp_image src, dst;

    ck_assert_int_eq(sp_image_alloc(&src, 2, 1, 4, 1, 255), SP_OK);
    src.alpha = 1;
    memcpy(src.pixels, px, sizeof px);
    resample_all(&src, 1, 1, &dst);
    ck_assert_uint_eq(dst.pixels[0], 255);
    ck_assert_uint_eq(dst.pixels[1], 0);
    ck_assert_uint_eq(dst.pixels[2], 0);
    ck_assert_uint_eq(dst.pixels[3], 128);
    sp_image_release(&dst);
    /* all transparent: the plain mean */
    src.pixels[3] = 0;
    resample_all(&src, 1, 1, &dst);
    ck_assert_uint_eq(dst.pixels[0], 128);
    ck_assert_uint_eq(dst.pixels[1], 128);
    ck_assert_uint_eq(dst.pixels[3], 0);
    sp_image_release(&dst);
    sp_image_release(&src);
}
END_TEST

START_TEST(test_sixteen_bits)
{
    struct sp_image src, dst;

    ck_assert_int_eq(sp_image_alloc(&src, 3, 1, 1, 2, 65535), SP_OK);
    fx_set_sample(&src, 0, 0, 0, 65535);
    fx_set_sample(&src, 1, 0, 0, 65535);
    fx_set_sample(&src, 2, 0, 0, 0);
    /* 3 -> 2: out 1 is 1/3 of 65535 and 2/3 of 0: 21845 */
    resample_all(&src, 2, 1, &dst);
    ck_assert_uint_eq(fx_sample(&dst, 0, 0, 0), 65535);
    ck_assert_uint_eq(fx_sample(&dst, 1, 0, 0), 21845);
    ck_assert_uint_eq(dst.sample_size, 2);
    sp_image_release(&dst);
    sp_image_release(&src);
}
END_TEST

START_TEST(test_bits_gray)
{
    /* a PBM row 11110000 00000000 over two rows, black 1: 8 x 2 -> 2 x 1
     * gives the two blocks' white share of 255 */
    struct sp_image src = {0}, dst;
    unsigned char bits[] = {0xf0, 0x00};

    src.pixels = bits;
    src.width = 8;
    src.height = 2;
    src.stride = 1;
    src.channels = 1;
    src.sample_size = 1;
    src.maxval = 1;
    src.packed = 1;
    src.magic = '4';
    resample_all(&src, 2, 1, &dst);
    ck_assert_uint_eq(dst.maxval, 255);
    ck_assert_uint_eq(dst.pixels[0], 128);  /* 4 black of 8: 127.5 */
    ck_assert_uint_eq(dst.pixels[1], 255);
    sp_image_release(&dst);
}
END_TEST

/* Bands of any size, each from a view of only the source rows it reads,
 * give the bytes of the whole. */
START_TEST(test_bands_same_bytes)
{
    const size_t w = 97, h = 61, ow = 13, oh = 11 + (size_t)_i * 7;
    struct sp_resample r = {w, h, ow, oh};
    struct sp_image src, whole, type;
    unsigned char *out;
    void *scratch;
    uint32_t rng = 5 + (uint32_t)_i;
    size_t orow;

    fx_make_image(&src, w, h, 4, 1, 255, 21);
    src.alpha = 1;
    resample_all(&src, ow, oh, &whole);
    sp_resample_type(&src, &type);
    orow = sp_image_row_bytes(&type, ow);
    out = malloc(orow * oh);
    scratch = aligned_alloc(16, sp_resample_scratch(&src, ow) + 16);
    for (size_t y0 = 0, y1; y0 < oh; y0 = y1) {
        size_t s0, s1, e0, e1;
        struct sp_image band = src;

        rng = rng * 1103515245u + 12345u;
        y1 = y0 + 1 + (rng >> 16) % 4;
        if (y1 > oh)
            y1 = oh;
        sp_resample_span(h, oh, y0, &s0, &e0);
        sp_resample_span(h, oh, y1 - 1, &e1, &s1);
        band.pixels = src.pixels + s0 * src.stride;
        band.height = s1 - s0;
        sp_resample_rows(&band, s0, &r, y0, y1, scratch, out + y0 * orow);
    }
    ck_assert_int_eq(memcmp(out, whole.pixels, orow * oh), 0);
    free(out);
    free(scratch);
    sp_image_release(&whole);
    sp_image_release(&src);
}
END_TEST

static Suite *scale_resample_suite(void)
{
    Suite *s = suite_create("scale_resample");
    TCase *tc = fx_tcase("resample");

    tcase_add_test(tc, test_by_hand);
    tcase_add_loop_test(tc, test_reference, 0, 8);
    tcase_add_test(tc, test_ratio_one_copies);
    tcase_add_loop_test(tc, test_box_equal, 0, 6);
    tcase_add_test(tc, test_alpha_weighted);
    tcase_add_test(tc, test_sixteen_bits);
    tcase_add_test(tc, test_bits_gray);
    tcase_add_loop_test(tc, test_bands_same_bytes, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(scale_resample_suite());
}
