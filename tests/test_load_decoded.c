/* test_load_decoded.c: JPEG and PNG inputs (decode.h): made here by the
 * libraries' own encoders, loaded by every path and compared with what
 * they decode to (PNG: the very samples encoded; JPEG: libjpeg's own
 * decode at its default settings, djpeg's); the header asked about before
 * decoding; truncated and corrupt files one status, nothing left open. */
#include "load_lib.h"

#include <setjmp.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <png.h>
#include <zlib.h>

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

/* A change to libjpeg's defaults for a JPEG written here. */
typedef void tune_fn(struct jpeg_compress_struct *ci, void *arg);

/* encode_jpeg: PATH holds RASTER (W x H of C samples a pixel, SPACE) as a
 * JPEG, libjpeg's defaults changed by TUNE (ARG its) if not NULL. */
static void encode_jpeg(const char *path, const unsigned char *raster,
                        size_t w, size_t h, unsigned c, J_COLOR_SPACE space,
                        tune_fn *tune, void *arg)
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
    ci.in_color_space = space;
    jpeg_set_defaults(&ci);
    if (tune != NULL)
        tune(&ci, arg);
    jpeg_start_compress(&ci, TRUE);
    while (ci.next_scanline < ci.image_height) {
        JSAMPROW row = (JSAMPROW)raster + ci.next_scanline * w * c;

        jpeg_write_scanlines(&ci, &row, 1);
    }
    jpeg_finish_compress(&ci);
    jpeg_destroy_compress(&ci);
    ck_assert_int_eq(fclose(f), 0);
}

static void quality_90(struct jpeg_compress_struct *ci, void *arg)
{
    (void)arg;
    jpeg_set_quality(ci, 90, TRUE);
}

/* write_jpeg: PATH holds RASTER (8-bit gray or RGB) as a baseline JPEG. */
static void write_jpeg(const char *path, const unsigned char *raster,
                       size_t w, size_t h, unsigned c)
{
    encode_jpeg(path, raster, w, h, c, c == 1 ? JCS_GRAYSCALE : JCS_RGB,
                quality_90, NULL);
}

static void adobe_marker(struct jpeg_compress_struct *ci, void *arg)
{
    ci->write_Adobe_marker = *(const int *)arg ? TRUE : FALSE;
}

/* write_cmyk: PATH holds RASTER (W x H CMYK, as libjpeg takes it) as a
 * JPEG, with the Adobe marker that says its inks are inverted or
 * without. */
static void write_cmyk(const char *path, const unsigned char *raster,
                       size_t w, size_t h, int adobe)
{
    encode_jpeg(path, raster, w, h, 4, JCS_CMYK, adobe_marker, &adobe);
}

/* The most scans a valid script has: every coefficient a band of its own,
 * sent a bit at a time from bit 10 (libjpeg's highest) down. */
enum { TOP_BIT = 10, MOST_SCANS = 64 * (TOP_BIT + 1) };

static void all_scans(struct jpeg_compress_struct *ci, void *arg)
{
    static jpeg_scan_info scan[MOST_SCANS];
    int n = 0;

    (void)arg;
    for (int k = 0; k < 64; k++)
        for (int al = TOP_BIT; al >= 0; al--)
            scan[n++] = (jpeg_scan_info){1, {0}, k, k,
                                         al == TOP_BIT ? 0 : al + 1, al};
    ci->scan_info = scan;
    ci->num_scans = n;
}

/* write_scans: PATH holds a W x H gray progressive JPEG of MOST_SCANS
 * scans. */
static void write_scans(const char *path, size_t w, size_t h)
{
    unsigned char *raster = make_raster(w, h, 1, 1);

    encode_jpeg(path, raster, w, h, 1, JCS_GRAYSCALE, all_scans, NULL);
    free(raster);
}

/* jpeg_scaled: libjpeg's own decode of the file at PATH at a DCT scale
 * of 1/DENOM, as djpeg -scale makes it (the library's defaults), W x H x
 * C bytes. */
static unsigned char *jpeg_scaled(const char *path, unsigned denom,
                                  size_t w, size_t h, unsigned c)
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
    ci.scale_num = 1;
    ci.scale_denom = denom;
    jpeg_start_decompress(&ci);
    ck_assert_uint_eq(ci.output_width, w);
    ck_assert_uint_eq(ci.output_height, h);
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

/* jpeg_reference: libjpeg's own full-scale decode of the file at PATH. */
static unsigned char *jpeg_reference(const char *path, size_t w, size_t h,
                                     unsigned c)
{
    return jpeg_scaled(path, 1, w, h, c);
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

/* png_chunk: the chunk TYPE of LEN bytes at DATA at P (its length, type,
 * data and CRC); returns the bytes written. */
static size_t png_chunk(unsigned char *p, const char *type,
                        const unsigned char *data, size_t len)
{
    uLong crc;

    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(len >> (24 - 8 * i));
    memcpy(p + 4, type, 4);
    if (len > 0)
        memcpy(p + 8, data, len);
    crc = crc32(0, p + 4, (uInt)len + 4);
    for (int i = 0; i < 4; i++)
        p[8 + len + i] = (unsigned char)(crc >> (24 - 8 * i));
    return len + 12;
}

/* write_claim: PATH holds a PNG that claims W x H gray pixels of 8 bits
 * and holds IDAT bytes for a few rows of them. */
static void write_claim(const char *path, png_uint_32 w, png_uint_32 h)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G',
                                         '\r', '\n', 0x1a, '\n'};
    unsigned char ihdr[13] = {0}, raw[64] = {0}, z[128], file[256];
    uLongf zlen = sizeof z;
    size_t n = sizeof sig;

    for (int i = 0; i < 4; i++) {
        ihdr[i] = (unsigned char)(w >> (24 - 8 * i));
        ihdr[4 + i] = (unsigned char)(h >> (24 - 8 * i));
    }
    ihdr[8] = 8;
    ck_assert_int_eq(compress(z, &zlen, raw, sizeof raw), Z_OK);
    memcpy(file, sig, n);
    n += png_chunk(file + n, "IHDR", ihdr, sizeof ihdr);
    n += png_chunk(file + n, "IDAT", z, zlen);
    n += png_chunk(file + n, "IEND", NULL, 0);
    fx_write_file(path, file, n);
}

/* raw_deflate: LEN bytes at IN as raw deflate blocks at OUT (CAP bytes),
 * flushed to a byte boundary, not final (FINISH: the final block), the
 * stream fresh: blocks that may follow any others.  Returns their length. */
static size_t raw_deflate(const unsigned char *in, size_t len,
                          unsigned char *out, size_t cap, int finish)
{
    z_stream zs = {0};
    size_t n;

    ck_assert_int_eq(deflateInit2(&zs, 9, Z_DEFLATED, -15, 9,
                                  Z_DEFAULT_STRATEGY),
                     Z_OK);
    zs.next_in = (unsigned char *)in;
    zs.avail_in = (uInt)len;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    ck_assert_int_eq(deflate(&zs, finish ? Z_FINISH : Z_FULL_FLUSH),
                     finish ? Z_STREAM_END : Z_OK);
    n = zs.total_out;
    deflateEnd(&zs);
    return n;
}

/* write_long_idat: PATH holds a 1 x 1 gray PNG of sample 7 whose zlib
 * stream goes on past the image for MIB mebibytes of zeros, in one IDAT:
 * the blocks of a mebibyte of zeros, deflated once, repeated. */
static void write_long_idat(const char *path, size_t mib)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G',
                                         '\r', '\n', 0x1a, '\n'};
    static unsigned char zeros[1 << 20], seg[8192];
    unsigned char ihdr[13] = {0, 0, 0, 1, 0, 0, 0, 1, 8}, row[2] = {0, 7};
    size_t seg_len = raw_deflate(zeros, sizeof zeros, seg, sizeof seg, 0);
    size_t cap = mib * seg_len + 256, n = 2, len_png;
    unsigned char *z = malloc(cap), *file = malloc(cap + 64);
    uLong adler = adler32(adler32(0, NULL, 0), row, sizeof row);
    uLong adler_zeros = adler32(adler32(0, NULL, 0), zeros, sizeof zeros);

    ck_assert_ptr_nonnull(z);
    ck_assert_ptr_nonnull(file);
    z[0] = 0x78;  /* zlib's header: deflate, 32 KiB window, no dictionary */
    z[1] = 0x01;
    n += raw_deflate(row, sizeof row, z + n, cap - n, 0);
    for (size_t i = 0; i < mib; i++) {
        memcpy(z + n, seg, seg_len);
        n += seg_len;
        adler = adler32_combine(adler, adler_zeros, sizeof zeros);
    }
    n += raw_deflate(NULL, 0, z + n, cap - n, 1);
    for (int i = 0; i < 4; i++)
        z[n++] = (unsigned char)(adler >> (24 - 8 * i));
    memcpy(file, sig, sizeof sig);
    len_png = sizeof sig;
    len_png += png_chunk(file + len_png, "IHDR", ihdr, sizeof ihdr);
    len_png += png_chunk(file + len_png, "IDAT", z, n);
    len_png += png_chunk(file + len_png, "IEND", NULL, 0);
    fx_write_file(path, file, len_png);
    free(z);
    free(file);
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

    ck_assert_ptr_eq(sp_decode_sniff(jpeg, sizeof jpeg),
                     sp_decode_named("jpeg"));
    ck_assert_ptr_null(sp_decode_sniff(jpeg, 2));
    ck_assert_ptr_eq(sp_decode_sniff(png, sizeof png),
                     sp_decode_named("png"));
    ck_assert_ptr_null(sp_decode_sniff(png, 7));
    ck_assert_ptr_eq(sp_decode_sniff((const unsigned char *)"P6\n", 3),
                     SP_CODEC_PNM);
    ck_assert_ptr_null(sp_decode_sniff((const unsigned char *)"P8\n", 3));
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
    const sp_status bad[] = {SP_E_BADJPEG, SP_E_BADPNG};
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
                ck_assert_msg(st == SP_E_TRUNCATED || st == bad[k],
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

/* A CMYK JPEG is made RGB: inverted inks (the Adobe marker) R = C K /
 * 255, as jpegtopnm makes it; plain ones (255 - C)(255 - K) / 255, from
 * libjpeg's own decode of the inks. */
START_TEST(test_jpeg_cmyk)
{
    const size_t w = 29, h = 13;
    unsigned char *raster = make_raster(w, h, 4, 1);
    unsigned char *rgb = malloc(w * h * 3);
    const char *path = fx_path("cmyk.jpg");

    ck_assert_ptr_nonnull(rgb);
    for (int adobe = 0; adobe <= 1; adobe++) {
        unsigned char *ink;

        write_cmyk(path, raster, w, h, adobe);
        ink = jpeg_reference(path, w, h, 4);
        for (size_t i = 0; i < w * h; i++) {
            const unsigned char *q = ink + 4 * i;
            unsigned k = adobe ? q[3] : 255u - q[3];

            for (int c = 0; c < 3; c++)
                rgb[3 * i + c] = (unsigned char)(
                    (adobe ? q[c] : 255u - q[c]) * k / 255u);
        }
        load_all(path, w, h, 3, 255, rgb);
        free(ink);
    }
    free(rgb);
    free(raster);
}
END_TEST

/* A progressive JPEG of more than 500 scans is refused before its scans
 * are all decoded, one status and a detail, nothing held. */
START_TEST(test_jpeg_scan_limit)
{
    const char *path = fx_path("scans.jpg");

    ck_assert_uint_gt(MOST_SCANS, 500);
    write_scans(path, 16, 16);
    for (size_t pi = 0; pi < FX_NIO; pi++) {
        struct sp_image img;
        struct sp_load_info info;

        ck_assert_int_eq(sp_load(path, fx_io[pi], &img, &info),
                         SP_E_BADRASTER);
        ck_assert_str_eq(info.why, "JPEG: more than 500 scans");
        ck_assert_ptr_eq(info.codec, sp_decode_named("jpeg"));
        ck_assert_ptr_null(img.base);
    }
    ck_assert_int_eq(fx_count_maps(path), 0);
}
END_TEST

static void progressive(struct jpeg_compress_struct *ci, void *arg)
{
    (void)arg;
    jpeg_simple_progression(ci);
}

/* shrink_by: the accept hook that asks for a decode at 1/(*ARG). */
static sp_status shrink_by(struct sp_header *hdr, void *arg, char *why)
{
    (void)why;
    hdr->shrink = *(const unsigned *)arg;
    return SP_OK;
}

/* load_shrunk: PATH loaded at 1/DENOM by every path: the status, and the
 * pixels (W x H x C) EXPECT's when it is SP_OK. */
static sp_status load_shrunk(const char *path, unsigned denom, size_t w,
                             size_t h, unsigned c, const unsigned char *expect)
{
    sp_status st = SP_OK;

    for (size_t pi = 0; pi < FX_NIO; pi++) {
        struct sp_image img;
        struct sp_load_info info;

        st = sp_load_checked(path, fx_io[pi], shrink_by, &denom, &img, &info);
        if (st != SP_OK)
            continue;
        ck_assert_uint_eq(img.width, w);
        ck_assert_uint_eq(img.height, h);
        for (size_t y = 0; y < h; y++)
            ck_assert_msg(memcmp(img.pixels + y * img.stride,
                                 expect + y * w * c, w * c) == 0,
                          "%s at 1/%u by %s: row %zu differs", path, denom,
                          sp_io_name(fx_io[pi]), y);
        ck_assert_int_eq(sp_image_release(&img), SP_OK);
    }
    ck_assert_int_eq(fx_count_maps(path), 0);
    return st;
}

/* A progressive JPEG at 1/8 stops after the scans its output needs, with
 * libjpeg's full 1/8 decode: RGB at 4:2:0 (its chroma's inverse DCT reads
 * AC coefficients) and gray; a gray file of more than 500 scans whose DC
 * comes whole in its first ones loads at 1/8 (its other scans never
 * decoded), and is refused at 1/4, which needs them all. */
START_TEST(test_jpeg_progressive_eighth)
{
    const char *path = fx_path("prog.jpg");
    size_t w = 203, h = 131, w8 = (w + 7) / 8, h8 = (h + 7) / 8;
    unsigned char *ref;

    for (unsigned c = 1; c <= 3; c += 2) {
        unsigned char *raster = make_raster(w, h, c, 1);

        encode_jpeg(path, raster, w, h, c, c == 1 ? JCS_GRAYSCALE : JCS_RGB,
                    progressive, NULL);
        ref = jpeg_scaled(path, 8, w8, h8, c);
        ck_assert_int_eq(load_shrunk(path, 8, w8, h8, c, ref), SP_OK);
        free(ref);
        free(raster);
    }
    write_scans(path, 64, 48);
    ref = jpeg_scaled(path, 8, 8, 6, 1);
    ck_assert_int_eq(load_shrunk(path, 8, 8, 6, 1, ref), SP_OK);
    ck_assert_int_eq(load_shrunk(path, 4, 16, 12, 1, NULL), SP_E_BADRASTER);
    free(ref);
}
END_TEST

/* A PNG or JPEG whose file is too short for the pixels its header claims
 * is refused before its raster is allocated (the header asked first); a
 * claim the bytes can hold goes on to the decode. */
START_TEST(test_bomb)
{
    unsigned char *raster = make_raster(64, 48, 3, 1), *bytes;
    const char *png = fx_path("claim.png"), *jpg = fx_path("claim.jpg");
    size_t len, at;

    write_claim(png, 40000, 40000);
    write_jpeg(jpg, raster, 64, 48, 3);
    /* the JPEG's SOF0 made to claim 60000 x 60000 */
    bytes = fx_read_file(jpg, &len);
    for (at = 2; at + 9 < len && !(bytes[at] == 0xff && bytes[at + 1] == 0xc0);
         at++)
        ;
    ck_assert_uint_lt(at + 9, len);
    bytes[at + 5] = bytes[at + 7] = 60000 >> 8;
    bytes[at + 6] = bytes[at + 8] = 60000 & 0xff;
    fx_write_file(jpg, bytes, len);
    for (size_t pi = 0; pi < FX_NIO; pi++) {
        struct sp_image img;
        struct sp_load_info info;

        ck_assert_int_eq(sp_load(png, fx_io[pi], &img, &info),
                         SP_E_TRUNCATED);
        ck_assert_ptr_nonnull(strstr(info.why, "cannot hold 40000 x 40000"));
        ck_assert_int_eq(sp_load(jpg, fx_io[pi], &img, &info),
                         SP_E_TRUNCATED);
        ck_assert_ptr_nonnull(strstr(info.why, "cannot hold 60000 x 60000"));
    }
    /* 64 x 64 pixels fit in the same bytes: the IDAT is then short */
    write_claim(png, 64, 64);
    {
        struct sp_image img;
        struct sp_load_info info;

        ck_assert_int_eq(sp_load(png, SP_IO_READ, &img, &info),
                         SP_E_BADRASTER);
    }
    free(bytes);
    free(raster);
}
END_TEST

/* Gray of 2 bits with a tRNS chunk: gray and alpha of maxval 3, alpha 0
 * where the gray is the transparent value (pngtopam -alphapam's). */
START_TEST(test_png_low_bit_trns)
{
    static const unsigned char packed[2] = {0x1b, 0xe4};  /* 0123, 3210 */
    static const unsigned char expect[16] = {0, 3, 1, 0, 2, 3, 3, 3,
                                             3, 3, 2, 3, 1, 0, 0, 3};
    png_color_16 key = {.gray = 1};
    png_structp png =
        png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    png_bytep rows[2] = {(png_bytep)packed, (png_bytep)packed + 1};
    const char *path = fx_path("trns.png");
    FILE *f = fopen(path, "wb");

    ck_assert_ptr_nonnull(f);
    if (setjmp(png_jmpbuf(png)))
        ck_abort_msg("libpng could not write %s", path);
    png_init_io(png, f);
    png_set_IHDR(png, info, 4, 2, 2, PNG_COLOR_TYPE_GRAY,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_set_tRNS(png, info, NULL, 0, &key);
    png_write_info(png, info);
    png_write_image(png, rows);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    ck_assert_int_eq(fclose(f), 0);
    load_all(path, 4, 2, 2, 3, expect);
}
END_TEST

/* What follows a PNG's IEND: whitespace is skipped, another image loaded
 * (a PNM, a PNG); what begins with a byte no image begins with is ignored
 * to the end, as djpeg and pngtopam ignore it (a motion photo's video);
 * what begins as a PNM would and is not one is refused as after a PNM
 * image; by a file and by a pipe. */
START_TEST(test_after_image)
{
    static const struct {
        const char *tail;
        sp_status next;  /* SP_OK: a 1 x 1 image of gray 7 */
    } tails[] = {{"\n \n", -100}, {"junk", -100},
                 {"\0\0\0\030ftypmp42", -100}, {"Pjunk", SP_E_NOTPNM},
                 {"\nP5 1 1 255\n\007", SP_OK}, {"+png", SP_OK}};
    unsigned char gray = 7, *bytes, *all;
    const char *png = fx_path("one.png"), *path = fx_path("two");
    size_t len;

    write_png(png, &gray, 1, 1, 1, 8, 0);
    bytes = fx_read_file(png, &len);
    all = malloc(2 * len + 32);
    ck_assert_ptr_nonnull(all);
    for (size_t i = 0; i < sizeof tails / sizeof *tails; i++) {
        size_t n = len, t = strlen(tails[i].tail);
        struct sp_input in;
        struct sp_load_info info;
        int more;

        memcpy(all, bytes, len);
        if (strcmp(tails[i].tail, "+png") == 0) {
            memcpy(all + n, bytes, len);
            n += len;
        } else {
            memcpy(all + n, tails[i].tail, t);
            n += t;
        }
        fx_write_file(path, all, n);
        ck_assert_int_eq(fx_input_open(&in, path, 0, NULL), SP_OK);
        ck_assert_int_eq(sp_input_next(&in, SP_IO_MMAP, NULL, NULL, &info),
                         SP_OK);
        ck_assert_ptr_eq(info.codec, sp_decode_named("png"));
        ck_assert_uint_eq(info.next, len);
        ck_assert_int_eq(sp_input_more(&in, &more), SP_OK);
        ck_assert_int_eq(more, tails[i].next != -100);
        if (more) {
            ck_assert_int_eq(sp_input_next(&in, SP_IO_READ, NULL, NULL,
                                           &info),
                             tails[i].next);
            if (tails[i].next == SP_OK)
                ck_assert_uint_eq(in.img.pixels[0], 7);
        }
        sp_input_close(&in);
    }
    free(all);
    free(bytes);
}
END_TEST

/* IDAT data past the image is not inflated to its end: a 1 x 1 PNG whose
 * zlib stream goes on for 4 GiB (seconds of inflate) loads, its pixel
 * right, its end found, in well under a second of CPU time. */
START_TEST(test_png_long_idat)
{
    const char *path = fx_path("long.png");
    struct sp_input in;
    struct sp_load_info info;
    clock_t t0;
    double cpu;

    write_long_idat(path, 4096);
    t0 = clock();
    ck_assert_int_eq(fx_input_open(&in, path, 0, NULL), SP_OK);
    ck_assert_int_eq(sp_input_next(&in, SP_IO_MMAP, NULL, NULL, &info),
                     SP_OK);
    cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
    ck_assert_uint_eq(in.img.pixels[0], 7);
    ck_assert_uint_eq((size_t)info.next, info.input_bytes);
    sp_input_close(&in);
    ck_assert_msg(cpu < 1.0, "%.2f s of CPU time", cpu);
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
    tcase_add_test(tc, test_jpeg_cmyk);
    tcase_add_test(tc, test_jpeg_scan_limit);
    tcase_add_test(tc, test_jpeg_progressive_eighth);
    tcase_add_test(tc, test_bomb);
    tcase_add_test(tc, test_png_low_bit_trns);
    tcase_add_test(tc, test_after_image);
    tcase_add_test(tc, test_png_long_idat);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(load_decoded_suite());
}
