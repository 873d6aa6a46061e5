/* test_scale_box.c: the box filter's fast division at the edges of where it
 * is used. */
#include "scale_lib.h"

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
    sp_scale_rows(img, -(int)n, SP_REDUCE_BOX, 0, 1, out);
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
                fx_ref_scale(&src, -n, SP_REDUCE_BOX, &want);
                scale_all(&src, -n, SP_REDUCE_BOX, &got);
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
            fx_ref_scale(&src, -n, SP_REDUCE_BOX, &want);
            scale_all(&src, -n, SP_REDUCE_BOX, &got);
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
    ck_assert_str_eq(sp_filters[SP_REDUCE_SAMPLE]->name, "sample");
    ck_assert_str_eq(sp_filters[SP_REDUCE_BOX]->name, "box");
}
END_TEST

static Suite *scale_box_suite(void)
{
    Suite *s = suite_create("scale_box");
    TCase *tc = fx_tcase("kernels");
    tcase_add_test(tc, test_names);
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
    return fx_run(scale_box_suite());
}
