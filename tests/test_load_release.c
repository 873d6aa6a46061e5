/* test_load_release.c: release: idempotent, no descriptor or mapping
 * outlives it; odd inputs. */
#include "load_lib.h"

/* ---- release ---- */

START_TEST(test_release_idempotent)
{
    struct sp_image img;
    struct sp_load_info info;
    const char *path = fx_path("in.ppm");

    memset(&img, 0, sizeof img);
    ck_assert_int_eq(sp_image_release(&img), SP_OK);
    fx_make_image(&img, 3, 3, 3, 1, 255, 0);
    fx_write_image(path, &img);
    ck_assert_int_eq(sp_image_release(&img), SP_OK);
    ck_assert_int_eq(sp_image_release(&img), SP_OK);
    for (size_t pi = 0; pi < FX_NIO; pi++) {
        enum sp_io io = fx_io[pi];

        ck_assert_int_eq(sp_load(path, io, &img, &info), SP_OK);
        ck_assert_int_eq(sp_image_release(&img), SP_OK);
        ck_assert_int_eq(img.backing, SP_BACKING_NONE);
        ck_assert_ptr_null(img.base);
        ck_assert_ptr_null(img.pixels);
        ck_assert_uint_eq(img.base_len, 0);
        ck_assert_int_eq(sp_image_release(&img), SP_OK);
        ck_assert_int_eq(sp_image_release(&img), SP_OK);
    }
    ck_assert_int_eq(fx_count_maps(path), 0);
}
END_TEST

/* madvise is advice: its failure is ignored.  munmap's is reported. */
START_TEST(test_no_leaks)
{
    static const char *const bad[] = {
        "", "X", "P4\n1 1\n\0", "P5\n0 1\n255\n", "P6\n9 9\n255\nabc",
        "P2\n2 1\n9\n1 99\n", "P5\n1 1\n65536\nab",
    };
    struct sp_image want, img;
    struct sp_load_info info;
    const char *good = fx_path("good.ppm"), *plain = fx_path("plain.pgm");
    const char *badp = fx_path("bad.pnm");
    int fds;

    fx_make_image(&want, 64, 64, 3, 1, 255, 0);
    fx_write_image(good, &want);
    sp_image_release(&want);
    fx_write_text(plain, "P2\n2 2\n9\n1 2 3 4\n");

    for (int round = 0; round < 2; round++) {
        fds = fx_count_fds();
        for (int rep = 0; rep < 10; rep++) {
            for (size_t pi = 0; pi < FX_NIO; pi++) {
                enum sp_io io = fx_io[pi];

                ck_assert_int_eq(sp_load(good, io, &img, &info),
                                 SP_OK);
                if (io == SP_IO_MMAP)
                    ck_assert_int_ge(fx_count_maps(good), 1);
                ck_assert_int_eq(sp_image_release(&img), SP_OK);
                ck_assert_int_eq(fx_count_maps(good), 0);
                ck_assert_int_eq(sp_load(plain, io, &img, &info),
                                 SP_OK);
                ck_assert_int_eq(sp_image_release(&img), SP_OK);
                for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                    fx_write_file(badp, bad[i], strlen(bad[i]));
                    ck_assert_int_ne(sp_load(badp, io, &img,
                                             &info), SP_OK);
                    ck_assert_int_eq(fx_count_maps(badp), 0);
                }
                ck_assert_int_eq(sp_load(fx_dir, io, &img,
                                         &info), EISDIR);
                ck_assert_int_eq(sp_load(fx_path("none"), io,
                                         &img, &info), ENOENT);
            }
        }
        ck_assert_int_eq(fx_count_fds(), fds);
        /* No mapping of any file of this test is left. */
        ck_assert_int_eq(fx_count_maps(fx_dir), 0);
    }
}
END_TEST

/* Empty inputs of every kind, directories, missing files. */
START_TEST(test_odd_inputs)
{
    struct sp_image img;
    struct sp_load_info info;

    fx_write_text(fx_path("empty"), "");
    for (size_t pi = 0; pi < FX_NIO; pi++) {
        enum sp_io io = fx_io[pi];

        ck_assert_int_eq(sp_load(fx_path("empty"), io, &img,
                                 &info), SP_E_EMPTY);
        ck_assert_int_eq(sp_load("/dev/null", io, &img, &info),
                         SP_E_EMPTY);
        ck_assert_int_eq(sp_load(fx_dir, io, &img, &info),
                         EISDIR);
        ck_assert_int_eq(sp_load(fx_path("missing"), io, &img,
                                 &info), ENOENT);
        ck_assert_int_eq(sp_load(fx_path("missing/x"), io, &img,
                                 &info), ENOENT);
        ck_assert_ptr_null(img.base);
    }
}
END_TEST

static Suite *load_release_suite(void)
{
    Suite *s = suite_create("load_release");
    TCase *tc = fx_tcase("paths");
    tcase_add_test(tc, test_odd_inputs);
    suite_add_tcase(s, tc);

    tc = fx_tcase("release");
    tcase_add_test(tc, test_release_idempotent);
    tcase_add_test(tc, test_no_leaks);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(load_release_suite());
}
