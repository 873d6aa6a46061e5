/* test_load_meta.c: the metadata channel (meta.h): the ICC profile and
 * the EXIF block of JPEG and PNG inputs made here (chunks and markers
 * written by hand or by the libraries), read by every load path into the
 * input's META, the pixels the same as without them; corrupt, over-long
 * and misplaced profiles and EXIF blocks dropped with the image decoded,
 * in bounded memory; and the PNG and JPEG encoders writing them back. */
#include "load_lib.h"

#include <setjmp.h>

#include <jpeglib.h>
#include <png.h>
#include <zlib.h>

#include "meta.h"
#include "write.h"

/* ---- the metadata ---- */

static void be32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (24 - 8 * i));
}

/* make_icc: a LEN-byte ICC profile (a multiple of 4, at least 132) of
 * colour space SPACE ("RGB " or "GRAY"): a monitor profile's header, no
 * tags, the rest a pattern.  Malloc'd. */
static unsigned char *make_icc(size_t len, const char *space)
{
    static const unsigned char d50[12] = {0, 0, 0xf6, 0xd6, 0, 1, 0, 0,
                                          0, 0, 0xd3, 0x2d};
    unsigned char *p = calloc(1, len);

    ck_assert_ptr_nonnull(p);
    be32(p, (uint32_t)len);
    p[8] = 2;  /* version 2.1 */
    p[9] = 0x10;
    memcpy(p + 12, "mntr", 4);
    memcpy(p + 16, space, 4);
    memcpy(p + 20, "XYZ ", 4);
    memcpy(p + 36, "acsp", 4);
    memcpy(p + 68, d50, sizeof d50);
    for (size_t i = 132; i < len; i++)
        p[i] = (unsigned char)(i * 31 + (i >> 8));
    return p;
}

/* make_exif: a TIFF block (big-endian: MM) whose IFD0 holds one
 * Orientation tag of value O, into P (26 bytes); returns its length. */
static size_t make_exif(unsigned char *p, unsigned o)
{
    static const unsigned char block[26] = {
        'M', 'M', 0, 42, 0, 0, 0, 8,  /* the TIFF header: IFD0 at 8 */
        0, 1,                         /* one entry: */
        0x01, 0x12, 0, 3, 0, 0, 0, 1, /* Orientation, a SHORT, */
        0, 0, 0, 0,                   /* its value (below) */
        0, 0, 0, 0};                  /* no next IFD */

    memcpy(p, block, sizeof block);
    p[18] = (unsigned char)(o >> 8);
    p[19] = (unsigned char)o;
    return sizeof block;
}

/* ---- the inputs ---- */

enum { W = 5, H = 4 };

/* raster: the RGB samples of every input here. */
static const unsigned char *raster(void)
{
    static unsigned char r[W * H * 3];

    for (size_t i = 0; i < sizeof r; i++)
        r[i] = (unsigned char)(i * 37 + 11);
    return r;
}

/* chunk: the PNG chunk TYPE of LEN bytes at DATA appended to the file at
 * F (*N bytes, grown). */
static unsigned char *chunk(unsigned char *f, size_t *n, const char *type,
                            const unsigned char *data, size_t len)
{
    uLong crc = crc32(0, (const unsigned char *)type, 4);

    if (len > 0)  /* crc32 of NULL is its initial value */
        crc = crc32(crc, data, (uInt)len);

    f = realloc(f, *n + len + 12);
    ck_assert_ptr_nonnull(f);
    be32(f + *n, (uint32_t)len);
    memcpy(f + *n + 4, type, 4);
    if (len > 0)
        memcpy(f + *n + 8, data, len);
    be32(f + *n + 8 + len, (uint32_t)crc);
    *n += len + 12;
    return f;
}

/* iccp: an iCCP chunk's data for the LEN bytes of profile at P, deflated
 * (RAW_Z: P is the zlib stream already), into *OUT (malloc'd); returns
 * its length. */
static size_t iccp(const unsigned char *p, size_t len, int raw_z,
                   unsigned char **out)
{
    uLongf zlen = compressBound((uLong)len);

    *out = malloc(5 + (raw_z ? len : zlen));
    ck_assert_ptr_nonnull(*out);
    memcpy(*out, "icc\0\0", 5);
    if (raw_z) {
        memcpy(*out + 5, p, len);
        return 5 + len;
    }
    ck_assert_int_eq(compress(*out + 5, &zlen, p, (uLong)len), Z_OK);
    return 5 + zlen;
}

/* write_png: PATH holds the W x H RGB raster as a PNG with BEFORE (LEN
 * bytes of whole chunks) between IHDR and IDAT, AFTER (ALEN) after the
 * IDAT. */
static void write_png(const char *path, const unsigned char *before,
                      size_t len, const unsigned char *after, size_t alen)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G',
                                         '\r', '\n', 0x1a, '\n'};
    unsigned char ihdr[13] = {0, 0, 0, W, 0, 0, 0, H, 8, 2};
    unsigned char rows[H * (1 + W * 3)], z[512];
    uLongf zlen = sizeof z;
    unsigned char *f = malloc(sizeof sig);
    size_t n = sizeof sig;

    ck_assert_ptr_nonnull(f);
    memcpy(f, sig, n);
    for (size_t y = 0; y < H; y++) {
        rows[y * (1 + W * 3)] = 0;
        memcpy(rows + y * (1 + W * 3) + 1, raster() + y * W * 3, W * 3);
    }
    ck_assert_int_eq(compress(z, &zlen, rows, sizeof rows), Z_OK);
    f = chunk(f, &n, "IHDR", ihdr, sizeof ihdr);
    f = realloc(f, n + len);
    ck_assert_ptr_nonnull(f);
    if (len > 0)
        memcpy(f + n, before, len);
    n += len;
    f = chunk(f, &n, "IDAT", z, zlen);
    f = realloc(f, n + alen);
    ck_assert_ptr_nonnull(f);
    if (alen > 0)
        memcpy(f + n, after, alen);
    n += alen;
    f = chunk(f, &n, "IEND", NULL, 0);
    fx_write_file(path, f, n);
    free(f);
}

/* A JPEG's markers, written after libjpeg's header: an APP1 of the LEN
 * bytes at EXIF (with "Exif\0\0" before them) unless NULL, the profile
 * ICC (ICC_LEN) by jpeg_write_icc_profile unless NULL, then RAW (RAW_LEN
 * bytes of a marker's payload) as marker RAW_M unless NULL. */
struct markers {
    const unsigned char *exif;
    size_t len;
    const unsigned char *icc;
    size_t icc_len;
    const unsigned char *raw;
    size_t raw_len;
    int raw_m;
};

static void write_jpeg(const char *path, const struct markers *m)
{
    struct jpeg_compress_struct ci;
    struct jpeg_error_mgr err;
    FILE *f = fopen(path, "wb");

    ck_assert_ptr_nonnull(f);
    ci.err = jpeg_std_error(&err);
    jpeg_create_compress(&ci);
    jpeg_stdio_dest(&ci, f);
    ci.image_width = W;
    ci.image_height = H;
    ci.input_components = 3;
    ci.in_color_space = JCS_RGB;
    jpeg_set_defaults(&ci);
    jpeg_start_compress(&ci, TRUE);
    if (m->exif != NULL) {
        unsigned char app1[SP_META_EXIF_HEAD + 64];

        ck_assert_uint_le(m->len, 64);
        memcpy(app1, "Exif\0", SP_META_EXIF_HEAD);
        memcpy(app1 + SP_META_EXIF_HEAD, m->exif, m->len);
        jpeg_write_marker(&ci, JPEG_APP0 + 1, app1,
                          (unsigned)(SP_META_EXIF_HEAD + m->len));
    }
    if (m->icc != NULL)
        jpeg_write_icc_profile(&ci, m->icc, (unsigned)m->icc_len);
    if (m->raw != NULL)
        jpeg_write_marker(&ci, m->raw_m, m->raw, (unsigned)m->raw_len);
    while (ci.next_scanline < H) {
        JSAMPROW row = (JSAMPROW)raster() + ci.next_scanline * W * 3;

        jpeg_write_scanlines(&ci, &row, 1);
    }
    jpeg_finish_compress(&ci);
    jpeg_destroy_compress(&ci);
    ck_assert_int_eq(fclose(f), 0);
}

/* ---- what a load gives ---- */

/* load_meta: PATH's image by IO into *META (the caller's to free), its
 * pixels into *PIXELS (malloc'd, W x H x 3). */
static sp_status load_meta(const char *path, enum sp_io io,
                           struct sp_meta *meta, unsigned char **pixels)
{
    struct sp_input in;
    struct sp_load_info info;
    sp_status st;

    sp_meta_init(meta);
    *pixels = NULL;
    ck_assert_int_eq(fx_input_open(&in, path, 0, NULL), SP_OK);
    st = sp_input_next(&in, io, NULL, NULL, &info);
    if (st == SP_OK) {
        ck_assert_uint_eq(in.img.width, W);
        ck_assert_uint_eq(in.img.height, H);
        ck_assert_uint_eq(in.img.stride, W * 3);
        *pixels = malloc(W * H * 3);
        ck_assert_ptr_nonnull(*pixels);
        memcpy(*pixels, in.img.pixels, W * H * 3);
        ck_assert_int_eq(sp_meta_copy(meta, &in.meta), SP_OK);
    }
    sp_input_close(&in);
    ck_assert_ptr_null(in.meta.icc);  /* released with the image */
    return st;
}

/* same: the LEN bytes at GOT are the WANT_LEN at WANT (NULL: GOT NULL
 * too), WHAT of PATH by IO. */
static void same(const char *path, enum sp_io io, const char *what,
                 const unsigned char *got, size_t len,
                 const unsigned char *want, size_t want_len)
{
    ck_assert_msg(want == NULL ? got == NULL
                               : got != NULL && len == want_len &&
                                     memcmp(got, want, len) == 0,
                  "%s by %s: %s of %zu bytes, %zu wanted", path,
                  sp_io_name(io), what, got == NULL ? 0 : len,
                  want == NULL ? 0 : want_len);
}

/* check_meta: PATH loads by every path, its pixels PLAIN's (the same
 * image without metadata), its profile ICC (ICC_LEN; NULL: none), its
 * EXIF block EXIF (LEN; NULL: none) and its orientation O. */
static void check_meta(const char *path, const char *plain,
                       const unsigned char *icc, size_t icc_len,
                       const unsigned char *exif, size_t len, unsigned o)
{
    int fds = fx_count_fds();
    unsigned char *want;
    struct sp_meta none;

    ck_assert_int_eq(load_meta(plain, SP_IO_READ, &none, &want), SP_OK);
    ck_assert_ptr_null(none.icc);
    ck_assert_ptr_null(none.exif);
    for (size_t pi = 0; pi < FX_NIO; pi++) {
        struct sp_meta m;
        unsigned char *got;

        ck_assert_int_eq(load_meta(path, fx_io[pi], &m, &got), SP_OK);
        ck_assert_msg(memcmp(got, want, W * H * 3) == 0,
                      "%s by %s: the pixels are not those without metadata",
                      path, sp_io_name(fx_io[pi]));
        same(path, fx_io[pi], "a profile", m.icc, m.icc_len, icc, icc_len);
        same(path, fx_io[pi], "EXIF", m.exif, m.exif_len, exif, len);
        ck_assert_uint_eq(m.orientation, o);
        sp_meta_free(&m);
        free(got);
    }
    free(want);
    ck_assert_int_eq(fx_count_fds(), fds);
}

/* ---- the tests ---- */

/* A PNG's iCCP and eXIf, and a JPEG's APP1 and APP2 (a profile over two
 * markers), read as they are stored, by every path. */
START_TEST(test_read)
{
    unsigned char *icc = make_icc(100000, "RGB "), *data, exif[32];
    size_t len = make_exif(exif, 6), n = 0, dn;
    unsigned char *chunks = NULL;
    struct markers none = {0}, both = {exif, len, icc, 100000, NULL, 0, 0};

    dn = iccp(icc, 100000, 0, &data);
    chunks = chunk(chunks, &n, "iCCP", data, dn);
    chunks = chunk(chunks, &n, "eXIf", exif, len);
    write_png(fx_path("plain.png"), NULL, 0, NULL, 0);
    write_png(fx_path("meta.png"), chunks, n, NULL, 0);
    check_meta(fx_path("meta.png"), fx_path("plain.png"), icc, 100000, exif,
           len, 6);
    write_jpeg(fx_path("plain.jpg"), &none);
    write_jpeg(fx_path("meta.jpg"), &both);
    check_meta(fx_path("meta.jpg"), fx_path("plain.jpg"), icc, 100000, exif,
           len, 6);
    free(chunks);
    free(data);
    free(icc);
}
END_TEST

/* dropped_profile: PATH, a PNG whose one iCCP chunk holds the LEN bytes
 * of profile at P (RAW_Z: P is its zlib stream), loads with no
 * metadata. */
static void dropped_profile(const char *path, const unsigned char *p,
                            size_t len, int raw_z)
{
    unsigned char *data, *chunks;
    size_t n = 0, dn = iccp(p, len, raw_z, &data);

    chunks = chunk(NULL, &n, "iCCP", data, dn);
    write_png(path, chunks, n, NULL, 0);
    check_meta(path, fx_path("plain.png"), NULL, 0, NULL, 0, 0);
    free(chunks);
    free(data);
}

/* Corrupt metadata is dropped and the image decoded: a profile whose
 * length is not its header's, one of another colour space (PNG and
 * JPEG), one that is not deflate; an eXIf of no byte order; an EXIF
 * block libexif cannot parse (kept, orientation 0), an orientation out
 * of range; a second profile or eXIf; metadata after the image; a JPEG
 * profile whose markers do not add up. */
START_TEST(test_corrupt)
{
    unsigned char *icc = make_icc(400, "RGB "), *gray = make_icc(400, "GRAY");
    unsigned char exif[32], bad[32], *data, *chunks;
    size_t len = make_exif(exif, 3), n, dn;
    static const unsigned char junk[8] = "notzlib";
    static const unsigned char order[6] = {'X', 'X', 0, 42, 0, 0};
    /* an ICC_PROFILE marker of sequence 2 of 1, and 0 of 0 */
    static const unsigned char seq[2][20] = {"ICC_PROFILE\0\2\1abcdef",
                                             "ICC_PROFILE\0\0\0abcdef"};
    struct markers m = {0};

    write_png(fx_path("plain.png"), NULL, 0, NULL, 0);
    write_jpeg(fx_path("plain.jpg"), &m);
    /* the profile's header says 404 bytes; a gray profile on RGB
     * samples; a zlib stream that is none; an eXIf of no byte order */
    be32(icc, 404);
    dropped_profile(fx_path("a.png"), icc, 400, 0);
    be32(icc, 400);
    dropped_profile(fx_path("b.png"), gray, 400, 0);
    dropped_profile(fx_path("c.png"), junk, sizeof junk, 1);
    n = 0;
    chunks = chunk(NULL, &n, "eXIf", order, sizeof order);
    write_png(fx_path("d.png"), chunks, n, NULL, 0);
    check_meta(fx_path("d.png"), fx_path("plain.png"), NULL, 0, NULL, 0, 0);
    free(chunks);
    /* EXIF that libexif cannot parse: kept as it is, no orientation; an
     * orientation of 9; a second eXIf and profile ignored (the first
     * kept); after IDAT nothing is read */
    memcpy(bad, exif, len);
    bad[7] = 200;  /* IFD0 past the block's end */
    n = 0;
    chunks = chunk(NULL, &n, "eXIf", bad, len);
    write_png(fx_path("x.png"), chunks, n, NULL, 0);
    check_meta(fx_path("x.png"), fx_path("plain.png"), NULL, 0, bad, len, 0);
    free(chunks);
    make_exif(bad, 9);
    dn = iccp(icc, 400, 0, &data);
    n = 0;
    chunks = chunk(NULL, &n, "eXIf", bad, len);
    chunks = chunk(chunks, &n, "eXIf", exif, len);
    chunks = chunk(chunks, &n, "iCCP", data, dn);
    chunks = chunk(chunks, &n, "iCCP", data, dn);
    write_png(fx_path("e.png"), chunks, n, NULL, 0);
    check_meta(fx_path("e.png"), fx_path("plain.png"), icc, 400, bad, len, 0);
    write_png(fx_path("f.png"), NULL, 0, chunks, n);
    check_meta(fx_path("f.png"), fx_path("plain.png"), NULL, 0, NULL, 0, 0);
    free(chunks);
    free(data);
    /* JPEG: a gray profile on RGB samples; ICC markers that do not add
     * up; an EXIF block of junk */
    {
        struct markers j = {NULL, 0, gray, 400, NULL, 0, 0};

        write_jpeg(fx_path("g.jpg"), &j);
        check_meta(fx_path("g.jpg"), fx_path("plain.jpg"), NULL, 0, NULL, 0,
                   0);
    }
    for (int i = 0; i < 2; i++) {
        struct markers j = {order, sizeof order, NULL, 0, seq[i],
                            sizeof seq[i], JPEG_APP0 + 2};

        write_jpeg(fx_path("g.jpg"), &j);
        check_meta(fx_path("g.jpg"), fx_path("plain.jpg"), NULL, 0, order,
               sizeof order, 0);
    }
    free(icc);
    free(gray);
}
END_TEST

/* Past its bound metadata is dropped, the image decoded, in bounded
 * memory: a profile that inflates past SP_META_ICC_MAX, one whose header
 * claims 2 GiB, an EXIF block past SP_META_EXIF_MAX (skipped unread). */
START_TEST(test_bounds)
{
    size_t big = (SP_META_ICC_MAX + 4) & ~(size_t)3, n, dn;
    unsigned char *icc = make_icc(big, "RGB "), *data, *chunks;
    unsigned char *exif = calloc(1, SP_META_EXIF_MAX + 1);
    static const char *const names[3] = {"big1.png", "big2.png",
                                         "big3.png"};
    struct sp_meta m;
    unsigned char *got;

    ck_assert_ptr_nonnull(exif);
    write_png(fx_path("plain.png"), NULL, 0, NULL, 0);
    for (int i = 0; i < 3; i++) {
        n = 0;
        if (i == 2) {
            make_exif(exif, 6);
            chunks = chunk(NULL, &n, "eXIf", exif, SP_META_EXIF_MAX + 1);
        } else {
            if (i == 1)
                be32(icc, 0x80000000u);
            dn = iccp(icc, i == 0 ? big : 400, 0, &data);
            chunks = chunk(NULL, &n, "iCCP", data, dn);
            free(data);
        }
        write_png(fx_path(names[i]), chunks, n, NULL, 0);
        free(chunks);
    }
    free(icc);
    /* the most a decode may take: what libpng reads of one chunk, and
     * the inflate */
    fx_limit_as((size_t)64 << 20);
    for (int i = 0; i < 3; i++)
        check_meta(fx_path(names[i]), fx_path("plain.png"), NULL, 0, NULL, 0,
               0);
    /* an eXIf that claims more bytes than the file holds: cut, as a file
     * is with any chunk that does */
    n = 0;
    chunks = chunk(NULL, &n, "eXIf", exif, 64);
    be32(chunks, (uint32_t)SP_META_ICC_MAX + 1);
    write_png(fx_path("huge.png"), chunks, n, NULL, 0);
    ck_assert_int_eq(load_meta(fx_path("huge.png"), SP_IO_READ, &m, &got),
                     SP_E_TRUNCATED);
    free(chunks);
    free(exif);
}
END_TEST

/* put_meta: PATH written by sp_output_put (the serial PNG encoder, the
 * JPEG one) from the W x H raster, with META. */
static void put_meta(const char *path, enum sp_outfmt fmt,
                     const struct sp_meta *meta)
{
    struct sp_output o;
    struct sp_image img;
    char why[SP_WHY_MAX];

    memset(&img, 0, sizeof img);
    img.width = W;
    img.height = H;
    img.channels = 3;
    img.sample_size = 1;
    img.maxval = 255;
    img.magic = '6';
    snprintf(img.tuple_type, sizeof img.tuple_type, "RGB");
    img.stride = W * 3;
    img.pixels = (unsigned char *)raster();
    struct sp_target t = sp_target_path(path);
    enum sp_outfmt named;
    enum sp_want want;

    ck_assert_int_eq(sp_outfmt_for(path, &named, &want), SP_OK);
    ck_assert_int_eq(named, fmt);
    ck_assert_int_eq(sp_output_open(&o, &t, fmt, want, &img, 0, why), SP_OK);
    ck_assert_int_eq(sp_meta_copy(&o.meta, meta), SP_OK);
    ck_assert_int_eq(sp_output_put(&o, &img, why), SP_OK);
    ck_assert_int_eq(sp_output_close(&o, SP_OK), SP_OK);
}

/* The encoders write the profile as it is and an EXIF block of the
 * orientation alone; read back, the same profile and orientation. */
START_TEST(test_write)
{
    unsigned char *icc = make_icc(70000, "RGB "), exif[32], *got;
    struct sp_meta meta, back;
    static const char *const names[2] = {"out.png", "out.jpg"};
    static const enum sp_outfmt fmts[2] = {SP_OUT_PNG, SP_OUT_JPEG};

    sp_meta_init(&meta);
    ck_assert_int_eq(sp_meta_set_icc(&meta, icc, 70000, 3), SP_OK);
    ck_assert_int_eq(sp_meta_set_exif(&meta, exif, make_exif(exif, 8)),
                     SP_OK);
    ck_assert_uint_eq(meta.orientation, 8);
    for (int i = 0; i < 2; i++) {
        put_meta(fx_path(names[i]), fmts[i], &meta);
        ck_assert_int_eq(load_meta(fx_path(names[i]), SP_IO_READ, &back,
                                   &got),
                         SP_OK);
        ck_assert_uint_eq(back.icc_len, 70000);
        ck_assert_mem_eq(back.icc, icc, 70000);
        ck_assert_uint_eq(back.orientation, 8);
        sp_meta_free(&back);
        free(got);
    }
    sp_meta_free(&meta);
    free(icc);
}
END_TEST

static Suite *load_meta_suite(void)
{
    Suite *s = suite_create("load_meta");
    TCase *tc = fx_tcase("meta");

    tcase_add_test(tc, test_read);
    tcase_add_test(tc, test_corrupt);
    tcase_add_test(tc, test_bounds);
    tcase_add_test(tc, test_write);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(load_meta_suite());
}
