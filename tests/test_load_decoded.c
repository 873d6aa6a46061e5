/* test_load_decoded.c: JPEG and PNG inputs (decode.h): made here by the
 * libraries' own encoders, loaded by every path and compared with what
 * they decode to (PNG: the very samples encoded; JPEG: libjpeg's own
 * decode at its default settings, djpeg's); the header asked about before
 * decoding; truncated and corrupt files one status, nothing left open. */
#include "load_lib.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <png.h>

#include "decode.h"

/* ---- the inputs ---- */

/* A W x H raster of C channels, SIZE bytes a sample, that compresses
 * poorly enough to exercise a decoder: a gradient and a hash. */
static unsigned char *make_raster(size_t w, size_t h, unsigned c,
                                  unsigned size)
{
    size_t n = w * h * c * size;
    unsigned char *p = malloc(n);

    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)((i * 7 + (i / (w * c * size)) * 3) ^
                               ((i * 2654435761u) >> 13 & 0x1f));
    return p;
}

/* write_jpeg: PATH holds RASTER (8-bit gray or RGB) as a baseline JPEG. */
static void write_jpeg(const char *path, const unsigned char *raster,
                       size_t w, size_t h, unsigned c)
{
    struct jpeg_compress_struct ci;
    struct jpeg_error_mgr err;
    FILE *f = fopen(path, "wb");

    ck_assert_ptr_nonnull(f);
    ci.err = jpeg_std_error(&err);
    jpeg_create_compress(&ci);
    jpeg_stdio_dest(&ci, f);
    ci.image_width = (JDIMENSION)w;
    ci.image_height = (JDIMENSION)h;
    ci.input_components = (int)c;
    ci.in_color_space = c == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&ci);
    jpeg_set_quality(&ci, 90, TRUE);
    jpeg_start_compress(&ci, TRUE);
    while (ci.next_scanline < ci.image_height) {
        JSAMPROW row = (JSAMPROW)raster + ci.next_scanline * w * c;

        jpeg_write_scanlines(&ci, &row, 1);
    }
    jpeg_finish_compress(&ci);
    jpeg_destroy_compress(&ci);
    ck_assert_int_eq(fclose(f), 0);
}

/* jpeg_reference: libjpeg's own decode of the file at PATH, as djpeg
 * makes it (the library's defaults), W x H x C bytes. */
static unsigned char *jpeg_reference(const char *path, size_t w, size_t h,
                                     unsigned c)
{
    struct jpeg_decompress_struct ci;
    struct jpeg_error_mgr err;
    unsigned char *out = malloc(w * h * c);
    FILE *f = fopen(path, "rb");

    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(out);
    ci.err = jpeg_std_error(&err);
    jpeg_create_decompress(&ci);
    jpeg_stdio_src(&ci, f);
    jpeg_read_header(&ci, TRUE);
    jpeg_start_decompress(&ci);
    ck_assert_uint_eq(ci.output_width, w);
    ck_assert_int_eq(ci.output_components, (int)c);
    while (ci.output_scanline < ci.output_height) {
        JSAMPROW row = out + ci.output_scanline * w * c;

        jpeg_read_scanlines(&ci, &row, 1);
    }
    jpeg_finish_decompress(&ci);
    jpeg_destroy_decompress(&ci);
    fclose(f);
    return out;
}

/* write_png: PATH holds RASTER (C channels of DEPTH bits, 16-bit
 * big-endian) as a PNG, interlaced if asked. */
static void write_png(const char *path, const unsigned char *raster,
                      size_t w, size_t h, unsigned c, int depth,
                      int interlace)
{
    static const int types[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GA,
                                PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGBA};
    size_t stride = w * c * (depth == 16 ? 2 : 1);
    png_structp png =
        png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    png_bytep *rows = malloc(h * sizeof *rows);
    FILE *f = fopen(path, "wb");

    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(rows);
    if (setjmp(png_jmpbuf(png)))
        ck_abort_msg("libpng could not write %s", path);
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, depth,
                 types[c - 1],
                 interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (size_t y = 0; y < h; y++)
        rows[y] = (png_bytep)raster + y * stride;
    png_write_image(png, rows);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(rows);
    ck_assert_int_eq(fclose(f), 0);
}

/* load_all: PATH by every path: an image of W x H, C channels, MAXVAL,
 * whose raster is EXPECT's bytes; nothing left open after. */
static void load_all(const char *path, size_t w, size_t h, unsigned c,
                     unsigned maxval, const unsigned char *expect)
{
    int fds = fx_count_fds();

    for (size_t pi = 0; pi < FX_NIO; pi++) {
        struct sp_image img;
        struct sp_load_info info;
        size_t stride;

        ck_assert_int_eq(sp_load(path, fx_io[pi], &img, &info), SP_OK);
        ck_assert_uint_eq(img.width, w);
        ck_assert_uint_eq(img.height, h);
        ck_assert_uint_eq(img.channels, c);
        ck_assert_uint_eq(img.maxval, maxval);
        ck_assert_int_eq(img.alpha, c == 2 || c == 4);
        stride = w * c * (maxval > 255 ? 2 : 1);
        ck_assert_uint_eq(img.stride, stride);
        for (size_t y = 0; y < h; y++)
            ck_assert_msg(memcmp(img.pixels + y * img.stride,
                                 expect + y * stride, stride) == 0,
                          "%s by %s: row %zu differs", path,
                          sp_io_name(fx_io[pi]), y);
        ck_assert_int_eq(info.io_used,
                         fx_io[pi] == SP_IO_MMAP ? SP_IO_MMAP : SP_IO_READ);
        ck_assert_int_eq(sp_image_release(&img), SP_OK);
    }
    ck_assert_int_eq(fx_count_fds(), fds);
    ck_assert_int_eq(fx_count_maps(path), 0);
}

/* ---- the tests ---- */

START_TEST(test_sniff)
{
    static const unsigned char jpeg[] = {0xff, 0xd8, 0xff, 0xe0};
    static const unsigned char png[] = {0x89, 'P', 'N', 'G',
                                        '\r', '\n', 0x1a, '\n'};

    ck_assert_int_eq(sp_decode_sniff(jpeg, sizeof jpeg), SP_CODEC_JPEG);
    ck_assert_int_eq(sp_decode_sniff(jpeg, 2), SP_CODEC_NONE);
    ck_assert_int_eq(sp_decode_sniff(png, sizeof png), SP_CODEC_PNG);
    ck_assert_int_eq(sp_decode_sniff(png, 7), SP_CODEC_NONE);
    ck_assert_int_eq(sp_decode_sniff((const unsigned char *)"P6\n", 3),
                     SP_CODEC_NONE);
}
END_TEST

/* A JPEG, gray and RGB, odd sizes: libjpeg's own decode, by every path. */
START_TEST(test_jpeg_as_libjpeg)
{
    static const size_t sizes[][2] = {{1, 1}, {17, 9}, {203, 131}};

    for (unsigned c = 1; c <= 3; c += 2)
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            size_t w = sizes[i][0], h = sizes[i][1];
            unsigned char *raster = make_raster(w, h, c, 1), *ref;
            const char *path = fx_path("in.jpg");

            write_jpeg(path, raster, w, h, c);
            ref = jpeg_reference(path, w, h, c);
            load_all(path, w, h, c, 255, ref);
            free(ref);
            free(raster);
        }
}
END_TEST

/* A PNG gives back the samples encoded: 8 and 16 bits, 1 to 4 channels,
 * interlaced or not, by every path. */
START_TEST(test_png_exact)
{
    const size_t w = 37, h = 23;

    for (unsigned c = 1; c <= 4; c++)
        for (int depth = 8; depth <= 16; depth += 8)
            for (int interlace = 0; interlace <= 1; interlace++) {
                unsigned char *raster = make_raster(w, h, c, depth / 8);
                const char *path = fx_path("in.png");

                write_png(path, raster, w, h, c, depth, interlace);
                load_all(path, w, h, c, depth == 16 ? 65535 : 255, raster);
                free(raster);
            }
}
END_TEST

static int asked;

static sp_status refuse(struct sp_header *hdr, void *arg, char *why)
{
    (void)arg;
    asked++;
    ck_assert_uint_eq(hdr->width, 300);
    ck_assert_uint_eq(hdr->height, 200);
    snprintf(why, SP_WHY_MAX, "refused");
    return SP_E_LIMIT;
}

/* The header is offered before the raster is decoded; a refusal is the
 * load's status, nothing held. */
START_TEST(test_header_asked)
{
    unsigned char *raster = make_raster(300, 200, 3, 1);
    const char *jpg = fx_path("in.jpg"), *png = fx_path("in.png");

    write_jpeg(jpg, raster, 300, 200, 3);
    write_png(png, raster, 300, 200, 3, 8, 0);
    for (size_t pi = 0; pi < FX_NIO; pi++) {
        struct sp_image img;
        struct sp_load_info info;

        asked = 0;
        ck_assert_int_eq(sp_load_checked(jpg, fx_io[pi], refuse, NULL, &img,
                                         &info),
                         SP_E_LIMIT);
        ck_assert_int_eq(sp_load_checked(png, fx_io[pi], refuse, NULL, &img,
                                         &info),
                         SP_E_LIMIT);
        ck_assert_int_eq(asked, 2);
        ck_assert_str_eq(info.why, "refused");
        ck_assert_ptr_null(img.base);
    }
    ck_assert_int_eq(fx_count_maps(jpg), 0);
    ck_assert_int_eq(fx_count_maps(png), 0);
    free(raster);
}
END_TEST

/* A file cut anywhere, or with bytes of its data changed, is one status
 * that is not SP_OK, with a detail; nothing held, nothing left open. */
START_TEST(test_truncated_and_corrupt)
{
    unsigned char *raster = make_raster(64, 48, 3, 1);
    const char *names[] = {"in.jpg", "in.png"}, *cut = fx_path("cut");
    int fds = fx_count_fds();

    write_jpeg(fx_path(names[0]), raster, 64, 48, 3);
    write_png(fx_path(names[1]), raster, 64, 48, 3, 8, 0);
    for (size_t k = 0; k < 2; k++) {
        size_t len;
        unsigned char *bytes = fx_read_file(fx_path(names[k]), &len);

        for (size_t n = 8; n < len; n += len / 13 + 1)
            for (size_t pi = 0; pi < FX_NIO; pi++) {
                struct sp_image img;
                struct sp_load_info info;
                sp_status st;

                fx_write_file(cut, bytes, n);
                st = sp_load(cut, fx_io[pi], &img, &info);
                ck_assert_msg(st == SP_E_TRUNCATED || st == SP_E_BADHEADER,
                              "%s cut at %zu by %s: %d (%s)", names[k], n,
                              sp_io_name(fx_io[pi]), st, info.why);
                ck_assert_str_ne(info.why, "");
                ck_assert_ptr_null(img.base);
            }
        /* the middle of the data overwritten */
        memset(bytes + len / 2, 0x55, 16);
        fx_write_file(cut, bytes, len);
        for (size_t pi = 0; pi < FX_NIO; pi++) {
            struct sp_image img;
            struct sp_load_info info;
            sp_status st = sp_load(cut, fx_io[pi], &img, &info);

            ck_assert_msg(st == SP_E_BADRASTER, "%s corrupt by %s: %d (%s)",
                          names[k], sp_io_name(fx_io[pi]), st, info.why);
            ck_assert_ptr_null(img.base);
        }
        free(bytes);
    }
    ck_assert_int_eq(fx_count_fds(), fds);
    ck_assert_int_eq(fx_count_maps(cut), 0);
    free(raster);
}
END_TEST

static Suite *load_decoded_suite(void)
{
    Suite *s = suite_create("load_decoded");
    TCase *tc = fx_tcase("decoded");

    tcase_add_test(tc, test_sniff);
    tcase_add_test(tc, test_jpeg_as_libjpeg);
    tcase_add_test(tc, test_png_exact);
    tcase_add_test(tc, test_header_asked);
    tcase_add_test(tc, test_truncated_and_corrupt);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(load_decoded_suite());
}
