/* What the Check suites and the fuzz harnesses share (shared.h): the list
 * of I/O paths, the default first, and the one image comparison, which
 * must see the type (packed or not) and compare each row's own bytes,
 * neither more (a PBM row is a bit a pixel) nor less. */
#include <string.h>

#include "fixtures.h"

/* view: IMG views BUF as W x H pixels of STRIDE bytes a row; PACKED a PBM
 * (a bit a pixel), else gray of maxval 1, a byte a pixel. */
static void view(struct sp_image *img, unsigned char *buf, size_t w,
                 size_t h, size_t stride, int packed)
{
    memset(img, 0, sizeof *img);
    img->pixels = buf;
    img->width = w;
    img->height = h;
    img->stride = stride;
    img->channels = 1;
    img->sample_size = 1;
    img->maxval = 1;
    img->packed = packed;
    img->magic = packed ? '4' : '5';
}

/* Two PBM images of the same rows (12 pixels: 2 bytes a row) kept at
 * different strides, with different bytes after each row: equal.  The
 * old comparison took 12 bytes a row and saw the bytes after them. */
START_TEST(test_packed_rows_by_their_bytes)
{
    unsigned char a[64], b[64];
    struct sp_image ia, ib;

    memset(a, 0xaa, sizeof a);
    memset(b, 0x55, sizeof b);
    for (size_t y = 0; y < 3; y++) {
        a[y * 8] = b[y * 2] = (unsigned char)(0x81 + y);
        a[y * 8 + 1] = b[y * 2 + 1] = (unsigned char)(0xf0 + y);
    }
    view(&ia, a, 12, 3, 8, 1);
    view(&ib, b, 12, 3, 2, 1);
    ck_assert(fx_images_equal(&ia, &ib));
    ck_assert(fx_images_equal(&ib, &ia));
    /* a bit of the last row's last byte is its own */
    b[5] ^= 0x10;
    ck_assert(!fx_images_equal(&ia, &ib));
    ck_assert(!fx_images_equal(&ib, &ia));
}
END_TEST

/* The same bytes as a PBM and as a gray image of maxval 1 are different
 * images: packed is part of the type. */
START_TEST(test_packed_is_type)
{
    unsigned char a[16], b[16];
    struct sp_image ia, ib;

    memset(a, 1, sizeof a);
    memset(b, 1, sizeof b);
    view(&ia, a, 8, 2, 8, 1);
    view(&ib, b, 8, 2, 8, 0);
    ck_assert(!fx_images_equal(&ia, &ib));
    ck_assert(!fx_images_equal(&ib, &ia));
    ib.packed = 1;
    ck_assert(fx_images_equal(&ia, &ib));
}
END_TEST

/* Samples of two bytes: the last sample's low byte counts. */
START_TEST(test_unpacked_rows)
{
    struct sp_image a, b;

    fx_make_image(&a, 5, 4, 3, 2, 65535, 7);
    fx_make_image(&b, 5, 4, 3, 2, 65535, 7);
    ck_assert(fx_images_equal(&a, &b));
    fx_set_sample(&b, 4, 3, 2, fx_sample(&b, 4, 3, 2) ^ 1);
    ck_assert(!fx_images_equal(&a, &b));
    sp_image_release(&a);
    sp_image_release(&b);
}
END_TEST

/* The list of paths: each path once, the default first (what --io auto
 * takes for a regular file). */
START_TEST(test_io_paths)
{
    const char *in = fx_path("in.ppm");
    struct sp_image img, src;
    struct sp_load_info info;

    for (size_t i = 0; i < FX_NIO; i++) {
        ck_assert_int_ne(fx_io[i], SP_IO_AUTO);
        for (size_t j = 0; j < i; j++)
            ck_assert_int_ne(fx_io[i], fx_io[j]);
    }
    fx_make_image(&src, 4, 4, 3, 1, 255, 1);
    fx_write_image(in, &src);
    ck_assert_int_eq(sp_load(in, SP_IO_AUTO, &img, &info), SP_OK);
    ck_assert_int_eq(info.io_used, fx_io[0]);
    sp_image_release(&img);
    sp_image_release(&src);
}
END_TEST

static Suite *shared_suite(void)
{
    Suite *s = suite_create("shared");
    TCase *tc = fx_tcase("shared");

    tcase_add_test(tc, test_packed_rows_by_their_bytes);
    tcase_add_test(tc, test_packed_is_type);
    tcase_add_test(tc, test_unpacked_rows);
    tcase_add_test(tc, test_io_paths);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(shared_suite());
}
