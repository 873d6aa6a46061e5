/* test_write_formats.c: the formats: chosen by extension, exact PNM bytes,
 * the stb formats (decoded back where lossless), a flat JPEG; stdout. */
#include "write_lib.h"

START_TEST(test_outfmt_for)
{
    static const struct {
        const char *path;
        sp_status st;
        enum sp_outfmt fmt;
    } cases[] = {
        {"a.ppm", SP_OK, SP_OUT_PNM},     {"a.pgm", SP_OK, SP_OUT_PNM},
        {"a.pnm", SP_OK, SP_OUT_PNM},     {"A.PPM", SP_OK, SP_OUT_PNM},
        {"a.PgM", SP_OK, SP_OUT_PNM},     {"a.png", SP_OK, SP_OUT_PNG},
        {"A.PNG", SP_OK, SP_OUT_PNG},     {"a.jpg", SP_OK, SP_OUT_JPEG},
        {"a.JPG", SP_OK, SP_OUT_JPEG},    {"a.jpeg", SP_OK, SP_OUT_JPEG},
        {"a.JpEg", SP_OK, SP_OUT_JPEG},   {"a.bmp", SP_OK, SP_OUT_BMP},
        {"a.BMP", SP_OK, SP_OUT_BMP},     {"a.tga", SP_OK, SP_OUT_TGA},
        {"a.TGA", SP_OK, SP_OUT_TGA},     {"a", SP_OK, SP_OUT_PNM},
        {"out", SP_OK, SP_OUT_PNM},       {"-", SP_OK, SP_OUT_PNM},
        {"dir.png/out", SP_OK, SP_OUT_PNM},
        {"/x.d/y.e/out", SP_OK, SP_OUT_PNM},
        {".png", SP_OK, SP_OUT_PNM},      {"dir/.png", SP_OK, SP_OUT_PNM},
        {".hidden", SP_OK, SP_OUT_PNM},   {"dir/.tga", SP_OK, SP_OUT_PNM},
        {"a.b.png", SP_OK, SP_OUT_PNG},   {"a.png.ppm", SP_OK, SP_OUT_PNM},
        {"dir/a.jpg", SP_OK, SP_OUT_JPEG},
        {"a.gif", SP_E_OUTFORMAT, SP_OUT_PNM},
        {"a.GIF", SP_E_OUTFORMAT, SP_OUT_PNM},
        {"a.tiff", SP_E_OUTFORMAT, SP_OUT_PNM},
        {"a.pngx", SP_E_OUTFORMAT, SP_OUT_PNM},
        {"a.pn", SP_E_OUTFORMAT, SP_OUT_PNM},
        {"a.ppm.gz", SP_E_OUTFORMAT, SP_OUT_PNM},
        {"dir/.x.gif", SP_E_OUTFORMAT, SP_OUT_PNM},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enum sp_outfmt fmt = (enum sp_outfmt)99;
        sp_status st = sp_outfmt_for(cases[i].path, &fmt, NULL);

        ck_assert_msg(st == cases[i].st, "'%s': %d", cases[i].path, st);
        if (st == SP_OK)
            ck_assert_msg(fmt == cases[i].fmt, "'%s': format %d, want %d",
                          cases[i].path, fmt, cases[i].fmt);
    }
}
END_TEST
START_TEST(test_pnm_exact)
{
    static const unsigned char rgb[18] = {0, 1, 2, 3, 4, 5, 250, 251, 252,
                                          253, 254, 255, 9, 8, 7, 6, 5, 4};
    static const unsigned char gray16[6] = {0x00, 0x00, 0x01, 0x02, 0xff,
                                            0xff};
    struct sp_image img;
    unsigned char *got;
    size_t len;

    ck_assert_int_eq(sp_image_alloc(&img, 3, 2, 3, 1, 255), SP_OK);
    memcpy(img.pixels, rgb, sizeof rgb);
    write_ok(&img, fx_path("a.ppm"));
    got = fx_read_file(fx_path("a.ppm"), &len);
    ck_assert_uint_eq(len, 11 + sizeof rgb);
    ck_assert_mem_eq(got, "P6\n3 2\n255\n", 11);
    ck_assert_mem_eq(got + 11, rgb, sizeof rgb);
    free(got);
    /* The name asks for a type: a .pgm of RGB is gray, as ppmtopgm
     * makes it ((77 R + 150 G + 29 B + 128) / 256). */
    write_ok(&img, fx_path("a.pgm"));
    got = fx_read_file(fx_path("a.pgm"), &len);
    ck_assert_uint_eq(len, 11 + sizeof rgb / 3);
    ck_assert_mem_eq(got, "P5\n3 2\n255\n", 11);
    for (size_t i = 0; i < sizeof rgb / 3; i++)
        ck_assert_uint_eq(got[11 + i],
                          (77u * rgb[3 * i] + 150u * rgb[3 * i + 1] +
                           29u * rgb[3 * i + 2] + 128u) >> 8);
    free(got);
    sp_image_release(&img);

    ck_assert_int_eq(sp_image_alloc(&img, 3, 1, 1, 2, 65535), SP_OK);
    memcpy(img.pixels, gray16, sizeof gray16);
    write_ok(&img, fx_path("b"));
    got = fx_read_file(fx_path("b"), &len);
    ck_assert_uint_eq(len, 13 + sizeof gray16);
    ck_assert_mem_eq(got, "P5\n3 1\n65535\n", 13);
    ck_assert_mem_eq(got + 13, gray16, sizeof gray16);
    free(got);
    sp_image_release(&img);

    ck_assert_int_eq(sp_image_alloc(&img, 2, 2, 1, 1, 1), SP_OK);
    memcpy(img.pixels, "\0\1\1\0", 4);
    write_ok(&img, fx_path("c.pnm"));
    got = fx_read_file(fx_path("c.pnm"), &len);
    ck_assert_uint_eq(len, 13);
    ck_assert_mem_eq(got, "P5\n2 2\n1\n\0\1\1\0", 13);
    free(got);
    sp_image_release(&img);
}
END_TEST

/* What is written loads back the same, every layout, by both paths. */
START_TEST(test_pnm_round_trip)
{
    static const unsigned layouts[][3] = {
        {1, 1, 255}, {3, 1, 255}, {1, 2, 65535}, {3, 2, 65535}, {3, 1, 7},
        {1, 2, 300},
    };
    struct sp_image want, img;
    struct sp_load_info info;
    const char *path = fx_path("r.pnm");

    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        size_t len, want_len;
        unsigned char *got, *expect;

        fx_make_image(&want, 41, 19, layouts[i][0], layouts[i][1],
                      layouts[i][2], (unsigned)i);
        write_ok(&want, path);
        got = fx_read_file(path, &len);
        expect = fx_pnm_bytes(&want, &want_len);
        ck_assert_uint_eq(len, want_len);
        ck_assert_mem_eq(got, expect, len);
        free(got);
        free(expect);
        for (size_t pi = 0; pi < FX_NIO; pi++) {
            enum sp_io io = fx_io[pi];

            ck_assert_int_eq(sp_load(path, io, &img, &info), SP_OK);
            fx_in_memory(&img);
            ck_assert(fx_images_equal(&img, &want));
            sp_image_release(&img);
        }
        sp_image_release(&want);
    }
}
END_TEST

/* to8: a sample rescaled to 0..255 as the writer documents, rounded. */
static unsigned to8(unsigned v, unsigned maxval)
{
    return (v * 255u + maxval / 2) / maxval;
}

static const struct {
    const char *ext;
    const unsigned char *sig;
    size_t sig_len;
    int lossless;
} stb_formats[] = {
    {"png", (const unsigned char *)"\x89PNG\r\n\x1a\n", 8, 1},
    {"jpg", (const unsigned char *)"\xff\xd8\xff", 3, 0},
    {"JPEG", (const unsigned char *)"\xff\xd8\xff", 3, 0},
    {"bmp", (const unsigned char *)"BM", 2, 1},
    {"tga", (const unsigned char *)"", 0, 1},
};

/* back16: a 16-bit PNG of IMG (23x17, C channels) in GOT reads back as
 * IMG's samples rescaled to 0..65535. */
static void back16(const unsigned char *got, size_t len,
                   const struct sp_image *img, unsigned c, const char *name)
{
    int w, h, comp;
    unsigned short *px = stbi_load_16_from_memory(got, (int)len, &w, &h,
                                                  &comp, (int)c);

    ck_assert_msg(px != NULL && w == 23 && h == 17, "%s: unreadable", name);
    for (size_t i = 0; i < (size_t)23 * 17 * c; i++) {
        size_t x = i / c % 23, y = i / c / 23;
        unsigned long v = fx_sample(img, x, y, (unsigned)(i % c));
        unsigned long want = (v * 65535 + img->maxval / 2) / img->maxval;

        ck_assert_msg(px[i] == want, "%s: sample %zu is %u, want %lu", name,
                      i, px[i], want);
    }
    stbi_image_free(px);
}

/* PNG, JPEG, BMP, TGA of every layout and maxval: the signature, and for
 * the lossless ones the pixels, rescaled to 8 bits (a PNG of maxval above
 * 255: to 16). */
START_TEST(test_stb_formats)
{
    static const unsigned layouts[][3] = {
        {1, 1, 255}, {3, 1, 255}, {1, 2, 65535}, {3, 2, 65535}, {3, 1, 1},
        {1, 1, 100}, {3, 2, 1000}, {1, 2, 256},
    };
    char name[32];

    for (size_t f = 0; f < sizeof stb_formats / sizeof stb_formats[0]; f++) {
        for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
            struct sp_image img;
            unsigned char *got, *px;
            size_t len;
            int w, h, comp;
            unsigned c = layouts[i][0];

            fx_make_image(&img, 23, 17, c, layouts[i][1], layouts[i][2],
                          (unsigned)i);
            snprintf(name, sizeof name, "o%zu.%s", i, stb_formats[f].ext);
            write_ok(&img, fx_path(name));
            got = fx_read_file(fx_path(name), &len);
            ck_assert_uint_gt(len, 18);
            ck_assert_msg(memcmp(got, stb_formats[f].sig,
                                 stb_formats[f].sig_len) == 0,
                          "%s: bad signature", name);
            if (strcmp(stb_formats[f].ext, "tga") == 0) {
                /* No id, no colour map; true-colour or gray, maybe RLE. */
                ck_assert_uint_eq(got[0], 0);
                ck_assert_uint_eq(got[1], 0);
                ck_assert_uint_eq(got[2], c == 3 ? (got[2] == 10 ? 10 : 2)
                                                 : (got[2] == 11 ? 11 : 3));
            }
            if (f == 0 && img.maxval > 255)
                back16(got, len, &img, c, name);
            px = stbi_load_from_memory(got, (int)len, &w, &h, &comp, (int)c);
            ck_assert_msg(px != NULL, "%s: stb_image cannot read it back",
                          name);
            ck_assert_int_eq(w, 23);
            ck_assert_int_eq(h, 17);
            if (stb_formats[f].lossless && !(f == 0 && img.maxval > 255)) {
                for (size_t y = 0; y < 17; y++)
                    for (size_t x = 0; x < 23; x++)
                        for (unsigned k = 0; k < c; k++)
                            ck_assert_msg(px[(y * 23 + x) * c + k] ==
                                          to8(fx_sample(&img, x, y, k),
                                              img.maxval),
                                          "%s (%u ch, %u bytes, maxval %u): "
                                          "(%zu,%zu,%u) is %u, want %u",
                                          name, c, img.sample_size,
                                          img.maxval, x, y, k,
                                          px[(y * 23 + x) * c + k],
                                          to8(fx_sample(&img, x, y, k),
                                              img.maxval));
            }
            stbi_image_free(px);
            free(got);
            sp_image_release(&img);
        }
    }
}
END_TEST

/* JPEG is lossy: a flat colour comes back close. */
START_TEST(test_jpeg_flat)
{
    static const unsigned rgb[3] = {200, 100, 50};
    struct sp_image img;
    unsigned char *got, *px;
    size_t len;
    int w, h, comp;

    ck_assert_int_eq(sp_image_alloc(&img, 16, 16, 3, 2, 65535), SP_OK);
    for (size_t y = 0; y < 16; y++)
        for (size_t x = 0; x < 16; x++)
            for (unsigned c = 0; c < 3; c++)
                fx_set_sample(&img, x, y, c, rgb[c] * 257);
    write_ok(&img, fx_path("flat.jpg"));
    got = fx_read_file(fx_path("flat.jpg"), &len);
    px = stbi_load_from_memory(got, (int)len, &w, &h, &comp, 3);
    ck_assert_ptr_nonnull(px);
    for (int i = 0; i < 16 * 16 * 3; i++)
        ck_assert_int_le(abs((int)px[i] - (int)rgb[i % 3]), 4);
    stbi_image_free(px);
    free(got);
    sp_image_release(&img);
}
END_TEST

START_TEST(test_stdout)
{
    const char *path = fx_path("stdout");
    struct sp_image img;
    unsigned char *got, *want;
    size_t len, want_len;
    char why[SP_WHY_MAX];
    int fd;

    fx_make_image(&img, 7, 5, 1, 2, 4095, 6);
    want = fx_pnm_bytes(&img, &want_len);
    fflush(stdout);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    if (fd != STDOUT_FILENO) {
        ck_assert_int_eq(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
        close(fd);
    }
    ck_assert_int_eq(sp_write(&img, "-", SP_OUT_PNM, why), SP_OK);
    fflush(stdout);
    got = fx_read_file(path, &len);
    ck_assert_uint_eq(len, want_len);
    ck_assert_mem_eq(got, want, len);
    free(got);
    free(want);
    sp_image_release(&img);
}
END_TEST

/* A relative name in the current directory. */

static Suite *write_formats_suite(void)
{
    Suite *s = suite_create("write_formats");
    TCase *tc = fx_tcase("formats");
    tcase_add_test(tc, test_outfmt_for);
    tcase_add_test(tc, test_pnm_exact);
    tcase_add_test(tc, test_pnm_round_trip);
    tcase_add_test(tc, test_stb_formats);
    tcase_add_test(tc, test_jpeg_flat);
    tcase_add_test(tc, test_stdout);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(write_formats_suite());
}
