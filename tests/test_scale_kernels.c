/* test_scale_kernels.c: the scale kernels against a plain per-pixel
 * reference written here, the output size, a box mean worked by hand, and
 * bands in any split. */
#include "scale_lib.h"

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
            for (int f = SP_REDUCE_SAMPLE; f <= SP_REDUCE_BOX; f++) {
                fx_ref_scale(&src, factor, (enum sp_reduce)f, &want);
                scale_all(&src, factor, (enum sp_reduce)f, &got);
                ck_assert_msg(fx_images_equal(&got, &want),
                              "%zux%zu c%u b%u factor %d %s differs",
                              sizes[s][0], sizes[s][1], channels, bytes,
                              factor, sp_filters[f]->name);
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
        sp_scale_rows(&src, -2, SP_REDUCE_BOX, 0, 1, got);
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
            for (int f = SP_REDUCE_SAMPLE; f <= SP_REDUCE_BOX; f++) {
                size_t ow, oh;

                if (factor == 0 || (f == SP_REDUCE_BOX && factor > -2))
                    continue;
                fx_ref_scale(&gray, factor, (enum sp_reduce)f, &want);
                ck_assert_int_eq(sp_scale_size(w, h, factor, &ow, &oh), SP_OK);
                sp_scale_type(&bits, factor, (enum sp_reduce)f, &type);
                ck_assert_int_eq(sp_image_alloc_like(&got, ow, oh, &type),
                                 SP_OK);
                memset(got.pixels, 0xa5, got.base_len);
                sp_scale_rows(&bits, factor, (enum sp_reduce)f, 0, oh,
                              got.pixels);
                for (size_t y = 0; y < oh; y++) {
                    for (size_t x = 0; x < ow; x++) {
                        unsigned v = got.packed
                                         ? (bit_of(&got, x, y) ? 0 : 255)
                                         : got.pixels[y * got.stride + x];
                        ck_assert_msg(v == fx_sample(&want, x, y, 0),
                                      "%zux%zu by %d %s: (%zu, %zu) is %u, "
                                      "want %u", w, h, factor,
                                      sp_filters[f]->name, x,
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
        for (int f = SP_REDUCE_SAMPLE; f <= SP_REDUCE_BOX; f++) {
            if (factors[i] > 0 && f == SP_REDUCE_BOX)
                continue;
            fx_ref_scale(&src, factors[i], (enum sp_reduce)f, &want);
            scale_all(&src, factors[i], (enum sp_reduce)f, &got);
            ck_assert_msg(fx_images_equal(&got, &want), "factor %d %s",
                          factors[i], sp_filters[f]->name);
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
    scale_all(&src, -2, SP_REDUCE_BOX, &dst);
    ck_assert_uint_eq(dst.width, 2);
    ck_assert_uint_eq(dst.height, 2);
    ck_assert_mem_eq(dst.pixels, box, sizeof box);
    sp_image_release(&dst);
    scale_all(&src, -2, SP_REDUCE_SAMPLE, &dst);
    ck_assert_mem_eq(dst.pixels, sample, sizeof sample);
    sp_image_release(&dst);
    /* By 3 the one block is the whole image: 451 / 9 = 50.1 -> 50. */
    scale_all(&src, -3, SP_REDUCE_BOX, &dst);
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
    scale_all(&src, -2, SP_REDUCE_BOX, &dst);
    ck_assert_uint_eq(dst.pixels[0], 1001 >> 8);
    ck_assert_uint_eq(dst.pixels[1], 1001 & 0xff);
    sp_image_release(&dst);
    sp_image_release(&src);

    ck_assert_int_eq(sp_image_alloc(&src, 64, 64, 3, 2, 65535), SP_OK);
    memset(src.pixels, 0xff, src.base_len);
    for (int n = 2; n <= 64; n *= 2) {
        scale_all(&src, -n, SP_REDUCE_BOX, &dst);
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
    scale_all(&src, 2, SP_REDUCE_SAMPLE, &dst);
    ck_assert_uint_eq(dst.width, 4);
    ck_assert_uint_eq(dst.height, 2);
    ck_assert_mem_eq(dst.pixels, want, sizeof want);
    sp_image_release(&dst);
    /* The filter does not matter when enlarging or copying. */
    scale_all(&src, 2, SP_REDUCE_BOX, &dst);
    ck_assert_mem_eq(dst.pixels, want, sizeof want);
    sp_image_release(&dst);
    scale_all(&src, -1, SP_REDUCE_BOX, &dst);
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
        for (int f = SP_REDUCE_SAMPLE; f <= SP_REDUCE_BOX; f++) {
            scale_all(&src, factor, (enum sp_reduce)f, &whole);
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
                    sp_scale_rows(&src, factor, (enum sp_reduce)f,
                                  cuts[k - 1], cuts[k],
                                  banded.pixels + cuts[k - 1] * banded.stride);
                ck_assert_msg(fx_images_equal(&banded, &whole),
                              "c%u b%u factor %d %s trial %d", channels,
                              bytes, factor,
                              sp_filters[f]->name, trial);
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
        for (int f = SP_REDUCE_SAMPLE; f <= SP_REDUCE_BOX; f++) {
            scale_all(&src, factors[i], (enum sp_reduce)f, &whole);
            ck_assert_int_eq(sp_image_alloc(&banded, whole.width,
                                            whole.height, 3, 1, 255), SP_OK);
            for (size_t y = whole.height; y-- > 0;)
                sp_scale_rows(&src, factors[i], (enum sp_reduce)f, y, y + 1,
                              banded.pixels + y * banded.stride);
            ck_assert(fx_images_equal(&banded, &whole));
            sp_image_release(&banded);
            sp_image_release(&whole);
        }
    }
    sp_image_release(&src);
}
END_TEST

static Suite *scale_kernels_suite(void)
{
    Suite *s = suite_create("scale_kernels");
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
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(scale_kernels_suite());
}
