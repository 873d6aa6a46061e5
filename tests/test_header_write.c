/* test_header_write.c: the plain-format decoder, and the header writer. */
#include "header_lib.h"

struct plain {
    const char *text;
    unsigned char raster[16];
    size_t n;
    size_t end;            /* offset just past the last sample */
};

/* END is where libnetpbm stops: just past the one separator character
 * that ends the last sample. */
static const struct plain plains[] = {
    {"P2\n3 1\n255\n0 128 255\n", {0, 128, 255}, 3, 21},
    {"P2\n2 2\n1\n0 1\n1 0\n", {0, 1, 1, 0}, 4, 17},
    {"P2\n2 1\n65535\n65535 256\n", {0xff, 0xff, 0x01, 0x00}, 4, 23},
    {"P3\n2 1\n255\n1 2 3 4 5 6\n", {1, 2, 3, 4, 5, 6}, 6, 23},
    {"P3\n1 1\n1000\n1000 999 0\n", {0x03, 0xe8, 0x03, 0xe7, 0, 0}, 6, 23},
    {"P2\n2 1\n9\n  7\t\n\r 8 ", {7, 8}, 2, 18},
    {"P2\n2 1\n9\n7 # a comment inside the raster\n8\n", {7, 8}, 2, 43},
    {"P2 2 1 99 10 7 ", {10, 7}, 2, 15},
    /* netpbm reads this too; the "x" is left over */
    {"P3\n1 1\n255\n1 2 3x", {1, 2, 3}, 3, 17},
    {"P2\n1 1\n9\n7\nP2\n1 1\n9\n8\n", {7}, 1, 11},
    {"P2\n2 1\n9\n1 2 \r\n", {1, 2}, 2, 13},
};

/* The plain rasters decode right, by the decoder and by the loader. */
START_TEST(test_plain_decode)
{
    const struct plain *p = &plains[_i];
    const char *path = fx_path("p.pnm");
    struct sp_header hdr;
    struct sp_image img;
    struct sp_load_info info;
    unsigned char raster[16];
    char why[SP_WHY_MAX];
    struct sp_plain_text t = {.pull = fx_file_pull};
    off_t end = -1;
    FILE *f;

    fx_write_text(path, p->text);
    f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(sp_header_parse(f, &hdr, why), SP_OK);
    ck_assert_uint_eq(hdr.raster_bytes, p->n);
    ck_assert_int_eq(fseeko(f, hdr.raster_offset, SEEK_SET), 0);
    t.arg = f;
    ck_assert_int_eq(sp_header_decode_plain(&t, &hdr, raster, why), SP_OK);
    end = hdr.raster_offset + (off_t)t.used;
    free(t.buf);
    fclose(f);
    ck_assert_mem_eq(raster, p->raster, p->n);
    ck_assert_int_eq(end, (off_t)p->end);

    for (size_t pi = 0; pi < FX_NIO; pi++) {
        enum sp_io io = fx_io[pi];

        ck_assert_int_eq(sp_load(path, io, &img, &info), SP_OK);
        ck_assert_int_eq(info.io_used, SP_IO_READ);
        ck_assert_int_eq(info.magic, p->text[1]);
        ck_assert_mem_eq(img.pixels, p->raster, p->n);
        ck_assert_uint_eq(info.trailing_bytes, strlen(p->text) - p->end);
        ck_assert_int_eq(sp_image_release(&img), SP_OK);
    }
}
END_TEST

/* The header writer writes what netpbm's tools write (pamenlarge 2 of a
 * 3x2 image starts "P6\n6 4\n255\n"): magic, newline, width, space,
 * height, newline, maxval, newline. */
/* write_header: sp_header_write() of a W x H PGM (C 1), PPM (3) or PAM
 * (any other C) with MAXVAL. */
static sp_status write_header(FILE *f, size_t w, size_t h, unsigned c,
                              unsigned maxval, char *why)
{
    struct sp_image type = {.width = w, .height = h, .channels = c,
                            .sample_size = maxval > 255 ? 2 : 1,
                            .maxval = maxval};

    type.magic = c == 1 ? '5' : c == 3 ? '6' : '7';
    return sp_header_write(f, &type, why);
}

START_TEST(test_header_write)
{
    static const struct {
        size_t w, h;
        unsigned c, maxval;
        const char *want;
    } cases[] = {
        {3, 2, 3, 255, "P6\n3 2\n255\n"},
        {3, 2, 1, 255, "P5\n3 2\n255\n"},
        {6, 4, 3, 255, "P6\n6 4\n255\n"},
        {1, 1, 1, 1, "P5\n1 1\n1\n"},
        {1, 1, 3, 256, "P6\n1 1\n256\n"},
        {70000, 12, 1, 65535, "P5\n70000 12\n65535\n"},
        {INT_MAX, INT_MAX, 3, 65535, "P6\n2147483647 2147483647\n65535\n"},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *buf = NULL, why[SP_WHY_MAX];
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(write_header(f, cases[i].w, cases[i].h,
                                      cases[i].c, cases[i].maxval, why),
                         SP_OK);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_str_eq(buf, cases[i].want);
        free(buf);
    }
}
END_TEST

/* Sizes PNM cannot carry and maxvals libnetpbm refuses: a status, no
 * exit. */
START_TEST(test_header_write_refused)
{
    char *buf = NULL, why[SP_WHY_MAX];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(write_header(f, (size_t)INT_MAX + 1, 1, 3, 255, why),
                     SP_E_TOOBIG);
    ck_assert_int_eq(write_header(f, 1, (size_t)INT_MAX + 1, 1, 255, why),
                     SP_E_TOOBIG);
    ck_assert_int_eq(write_header(f, 1, 1, 3, 65536, why),
                     SP_E_BADHEADER);
    ck_assert_msg(strstr(why, "65536") != NULL, "why: '%s'", why);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_uint_eq(len, 0);
    free(buf);
}
END_TEST

/* What the writer writes, the parser reads back. */
START_TEST(test_header_round_trip)
{
    static const unsigned maxvals[] = {1, 2, 100, 255, 256, 1000, 65535};
    struct sp_header hdr;
    char why[SP_WHY_MAX];

    for (size_t i = 0; i < sizeof maxvals / sizeof maxvals[0]; i++) {
        for (unsigned c = 1; c <= 3; c += 2) {
            char *buf = NULL;
            size_t len = 0;
            FILE *f = open_memstream(&buf, &len);

            ck_assert_ptr_nonnull(f);
            ck_assert_int_eq(write_header(f, 5, 7, c, maxvals[i], why),
                             SP_OK);
            ck_assert_int_eq(fclose(f), 0);
            ck_assert_int_eq(parse_bytes(buf, len, &hdr, why), SP_OK);
            ck_assert_uint_eq(hdr.width, 5);
            ck_assert_uint_eq(hdr.height, 7);
            ck_assert_uint_eq(hdr.channels, c);
            ck_assert_uint_eq(hdr.maxval, maxvals[i]);
            ck_assert_uint_eq(hdr.sample_size, maxvals[i] > 255 ? 2 : 1);
            ck_assert_int_eq(hdr.raster_offset, (off_t)len);
            free(buf);
        }
    }
}
END_TEST

/* Every status has a name, and errno values pass through. */
START_TEST(test_strerror)
{
    for (sp_status st = SP_E_CHANGED; st < SP_E_BASE; st++) {
        ck_assert_ptr_nonnull(sp_strerror(st));
        ck_assert_str_ne(sp_strerror(st), "unknown error");
    }
    ck_assert_str_eq(sp_strerror(SP_OK), "success");
    ck_assert_str_eq(sp_strerror(SP_E_TRUNCATED), "file is truncated");
    ck_assert_str_eq(sp_strerror(ENOSPC), strerror(ENOSPC));
    ck_assert_str_eq(sp_strerror(SP_E_BASE), "unknown error");
}
END_TEST

static Suite *header_write_suite(void)
{
    Suite *s = suite_create("header_write");
    TCase *tc = fx_tcase("parse");
    tcase_add_loop_test(tc, test_plain_decode, 0,
                        sizeof plains / sizeof plains[0]);
    suite_add_tcase(s, tc);

    tc = fx_tcase("write");
    tcase_add_test(tc, test_header_write);
    tcase_add_test(tc, test_header_write_refused);
    tcase_add_test(tc, test_header_round_trip);
    tcase_add_test(tc, test_strerror);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(header_write_suite());
}
