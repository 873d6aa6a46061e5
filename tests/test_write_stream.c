/* test_write_stream.c: the streamed PNG and JPEG encoders (write_png.c,
 * write_jpeg.c) behind sp_output: the same bytes however the rows are
 * cut into puts, each row repeated or not; a write that fails at any byte
 * of the file is that write's errno, with nothing leaked (the sanitizer
 * build's leak check) and nothing left; rows that do not fit the image
 * refused, and an image not given all its rows not committed; a PNG in
 * segments (write_png_seg.c) inflates to the serial encoder's rows. */
#include <zlib.h>

#include "write_lib.h"

static const enum sp_outfmt streamed[] = {SP_OUT_PNG, SP_OUT_JPEG};
static const char *const exts[] = {"png", "jpg"};

/* The layouts the tests write: channels, bytes a sample, maxval (some
 * rescaled). */
static const unsigned layouts[][3] = {
    {1, 1, 255}, {2, 1, 255}, {3, 1, 255}, {4, 1, 255},
    {1, 2, 65535}, {3, 2, 65535}, {4, 2, 1000}, {3, 1, 100},
};

/* put_cut: IMG written to PATH as FMT in puts of STEP rows (the last may
 * have fewer); the file's bytes, their count in *LEN. */
static unsigned char *put_cut(const struct sp_image *img, const char *path,
                              enum sp_outfmt fmt, size_t step, size_t *len)
{
    struct sp_output o;
    struct sp_image band = *img;
    char why[SP_WHY_MAX];

    ck_assert_int_eq(sp_open_named(&o, path, fmt, img, 0, why), SP_OK);
    for (size_t y = 0; y < img->height; y += step) {
        band.pixels = img->pixels + y * img->stride;
        band.height = img->height - y < step ? img->height - y : step;
        ck_assert_int_eq(sp_output_put(&o, &band, why), SP_OK);
    }
    ck_assert_int_eq(sp_output_close(&o, SP_OK), SP_OK);
    return fx_read_file(path, len);
}

/* The same bytes for one put of the whole image and for puts of 1, 2, 7
 * and 16 rows: for gray, gray+alpha, RGB and RGBA, 8 and 16 bits. */
START_TEST(test_stream_cuts)
{
    static const size_t steps[] = {1, 2, 7, 16};

    for (size_t f = 0; f < 2; f++)
        for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
            struct sp_image img;
            unsigned char *whole, *cut;
            size_t whole_len, cut_len;
            char name[32];

            fx_make_image(&img, 45, 37, layouts[l][0], layouts[l][1],
                          layouts[l][2], (unsigned)l);
            snprintf(name, sizeof name, "w%zu.%s", l, exts[f]);
            whole = put_cut(&img, fx_path(name), streamed[f], img.height,
                            &whole_len);
            for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
                cut = put_cut(&img, fx_path(name), streamed[f], steps[s],
                              &cut_len);
                ck_assert_msg(cut_len == whole_len &&
                              memcmp(cut, whole, cut_len) == 0,
                              "%s, %u channels, maxval %u: puts of %zu rows "
                              "give other bytes", exts[f], layouts[l][0],
                              layouts[l][2], steps[s]);
                free(cut);
            }
            free(whole);
            sp_image_release(&img);
        }
}
END_TEST

/* sp_output_put_repeated's rows, each TIMES times, give the bytes of the
 * image with its rows repeated, put whole. */
START_TEST(test_stream_repeated)
{
    for (size_t f = 0; f < 2; f++)
        for (unsigned times = 1; times <= 4; times++) {
            struct sp_image img, tall;
            struct sp_output o;
            char why[SP_WHY_MAX];
            unsigned char *want, *got;
            size_t want_len, len;

            fx_make_image(&img, 29, 13, 3, 1, 255, times);
            ck_assert_int_eq(sp_image_alloc(&tall, 29, 13 * times, 3, 1,
                                            255), SP_OK);
            for (size_t y = 0; y < tall.height; y++)
                memcpy(tall.pixels + y * tall.stride,
                       img.pixels + y / times * img.stride, img.stride);
            want = put_cut(&tall, fx_path("want"), streamed[f], tall.height,
                           &want_len);
            ck_assert_int_eq(sp_open_named(&o, fx_path("got"), streamed[f],
                                            &tall, 0, why), SP_OK);
            ck_assert_int_eq(sp_output_put_repeated(&o, &img, times, NULL,
                                                    why), SP_OK);
            ck_assert_int_eq(sp_output_close(&o, SP_OK), SP_OK);
            got = fx_read_file(fx_path("got"), &len);
            ck_assert_msg(len == want_len && memcmp(got, want, len) == 0,
                          "%s: rows %u times differ", exts[f], times);
            free(got);
            free(want);
            sp_image_release(&tall);
            sp_image_release(&img);
        }
}
END_TEST

/* inflated: the filtered rows in the PNG of LEN bytes at PNG (its IDAT
 * chunks' data, inflated; the zlib stream's Adler-32 checked), their
 * count in *N. */
static unsigned char *inflated(const unsigned char *png, size_t len,
                               size_t *n)
{
    unsigned char *z = malloc(len), *out = malloc(1 << 20);
    size_t zlen = 0;
    z_stream st = {0};

    ck_assert_ptr_nonnull(z);
    ck_assert_ptr_nonnull(out);
    for (size_t i = 8; i + 12 <= len;) {
        size_t c = (size_t)png[i] << 24 | (size_t)png[i + 1] << 16 |
                   (size_t)png[i + 2] << 8 | png[i + 3];

        if (memcmp(png + i + 4, "IDAT", 4) == 0) {
            memcpy(z + zlen, png + i + 8, c);
            zlen += c;
        }
        i += 12 + c;
    }
    ck_assert_int_eq(inflateInit(&st), Z_OK);
    st.next_in = z;
    st.avail_in = (uInt)zlen;
    st.next_out = out;
    st.avail_out = 1 << 20;
    ck_assert_int_eq(inflate(&st, Z_FINISH), Z_STREAM_END);
    *n = st.total_out;
    inflateEnd(&st);
    free(z);
    return out;
}

/* put_segments: IMG written to PATH as a PNG in segments that end at the
 * rows in ENDS (N of them, the last IMG's height), each encoded with the
 * rows above it it asks for, the last segment first and with deflaters
 * taken in turn from two (as threads would); the file's bytes, their
 * count in *LEN. */
static unsigned char *put_segments(const struct sp_image *img,
                                   const char *path, const size_t *ends,
                                   size_t n, size_t *len)
{
    struct sp_output o;
    struct sp_deflater *def[2] = {NULL, NULL};
    struct sp_segment *seg[8] = {NULL};
    char why[SP_WHY_MAX];
    size_t lookback;

    ck_assert_uint_le(n, 8);
    ck_assert_int_eq(sp_open_named(&o, path, SP_OUT_PNG, img, 0, why), SP_OK);
    ck_assert(sp_output_segmented(&o, &lookback));
    for (size_t k = n; k-- > 0;) {
        size_t y0 = k ? ends[k - 1] : 0, back = y0 < lookback ? y0 : lookback;
        struct sp_image rows = *img, before = *img;

        rows.pixels = img->pixels + y0 * img->stride;
        rows.height = ends[k] - y0;
        before.pixels = img->pixels + (y0 - back) * img->stride;
        before.height = back;
        ck_assert_int_eq(sp_segment_encode(&o, &def[k % 2], &seg[k], &rows,
                                           1, y0, &before), SP_OK);
    }
    for (size_t k = 0; k < n; k++) {
        ck_assert_int_eq(sp_output_put_segment(&o, seg[k], why), SP_OK);
        sp_segment_free(seg[k]);
    }
    sp_deflater_free(def[0]);
    sp_deflater_free(def[1]);
    ck_assert_int_eq(sp_output_close(&o, SP_OK), SP_OK);
    return fx_read_file(path, len);
}

/* A PNG in segments inflates to the serial encoder's filtered rows, for
 * any cut into segments (of one row, or many; a cut where the rows above
 * do not hold the whole dictionary); the same cut gives the same bytes
 * whichever deflater made each segment; gray to RGBA, 8 and 16 bits, and
 * maxvals rescaled. */
START_TEST(test_stream_segments)
{
    static const size_t cuts[][4] = {{37}, {1, 2, 20, 37}, {36, 37},
                                     {5, 6, 30, 37}};
    static const size_t counts[] = {1, 4, 2, 4};

    for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
        struct sp_image img;
        unsigned char *serial, *want, *got, *again, *rows;
        size_t serial_len, want_len, len, again_len, n;

        fx_make_image(&img, 400, 37, layouts[l][0], layouts[l][1],
                      layouts[l][2], (unsigned)l);
        /* Rows that repeat every third, so that deflate matches reach
         * into the dictionary, and a wrong one shows. */
        for (size_t y = 3; y < img.height; y += 3)
            memcpy(img.pixels + y * img.stride, img.pixels,
                   img.stride * (img.height - y < 3 ? img.height - y : 3));
        serial = put_cut(&img, fx_path("s.png"), SP_OUT_PNG, 37, &serial_len);
        want = inflated(serial, serial_len, &want_len);
        for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
            got = put_segments(&img, fx_path("g.png"), cuts[c], counts[c],
                               &len);
            again = put_segments(&img, fx_path("a.png"), cuts[c], counts[c],
                                 &again_len);
            rows = inflated(got, len, &n);
            ck_assert_msg(n == want_len && memcmp(rows, want, n) == 0,
                          "%u channels, maxval %u, cut %zu: other rows",
                          layouts[l][0], layouts[l][2], c);
            ck_assert_msg(again_len == len && memcmp(again, got, len) == 0,
                          "cut %zu: other bytes from other deflaters", c);
            free(rows);
            free(again);
            free(got);
        }
        free(want);
        free(serial);
        sp_image_release(&img);
    }
}
END_TEST

/* A sink with room for LEFT bytes: a write that does not fit fails with
 * ENOSPC (0: fopencookie's failed write; stdio does not retry a cookie's
 * short write, as it does write()'s, so none is made). */
static ssize_t full_after(void *cookie, const char *buf, size_t n)
{
    size_t *left = cookie;

    (void)buf;
    if (n > *left) {
        errno = ENOSPC;
        return 0;
    }
    *left -= n;
    return (ssize_t)n;
}

/* encode_into: IMG through OPS into a sink of LEFT bytes, unbuffered, in
 * puts of 5 rows: the first failure's status. */
static sp_status encode_into(const struct sp_stream_ops *ops,
                             const struct sp_image *img, size_t left)
{
    cookie_io_functions_t io = {.write = full_after};
    struct sp_encode_opts opts = {0, -1, 0, NULL, SP_BACKGROUND};
    struct sp_image band = *img;
    char why[SP_WHY_MAX];
    void *enc = NULL;
    FILE *f = fopencookie(&left, "w", io);
    sp_status st;

    ck_assert_ptr_nonnull(f);
    setvbuf(f, NULL, _IONBF, 0);
    st = ops->begin(f, img, &opts, &enc, why);
    for (size_t y = 0; st == SP_OK && y < img->height; y += 5) {
        band.pixels = img->pixels + y * img->stride;
        band.height = img->height - y < 5 ? img->height - y : 5;
        st = ops->rows(enc, &band, 1, why);
    }
    if (st == SP_OK)
        st = ops->finish(enc, why);
    ops->end(enc);
    fclose(f);
    return st;
}

/* A write that fails at any byte of the file, from the first to the last
 * (every byte of a small file, then steps), is ENOSPC from the call that
 * met it; with room for the whole file, 0. */
START_TEST(test_stream_write_fails)
{
    static const struct sp_stream_ops *const ops[] = {&sp_stream_png,
                                                      &sp_stream_jpeg};
    struct sp_image img;

    fx_make_image(&img, 300, 40, 3, 2, 65535, 3);
    for (size_t f = 0; f < 2; f++) {
        size_t len;
        unsigned char *whole = put_cut(&img, fx_path("whole"), streamed[f],
                                       img.height, &len);

        free(whole);
        ck_assert_int_eq(encode_into(ops[f], &img, len), SP_OK);
        for (size_t at = 0; at < len; at += at < 300 ? 1 : 997) {
            sp_status st = encode_into(ops[f], &img, at);

            ck_assert_msg(st == ENOSPC, "%s, room for %zu of %zu bytes: %s",
                          exts[f], at, len, sp_strerror(st));
        }
    }
    sp_image_release(&img);
}
END_TEST

/* Rows of another width, or past the image's last, are refused; an image
 * closed short of its rows is not committed, and nothing is left. */
START_TEST(test_stream_rows_checked)
{
    for (size_t f = 0; f < 2; f++) {
        struct sp_image img, narrow;
        struct sp_output o;
        char why[SP_WHY_MAX], name[16];

        fx_make_image(&img, 20, 10, 3, 1, 255, 1);
        fx_make_image(&narrow, 19, 10, 3, 1, 255, 1);
        snprintf(name, sizeof name, "r.%s", exts[f]);
        ck_assert_int_eq(sp_open_named(&o, fx_path(name), streamed[f], &img,
                                        0, why), SP_OK);
        ck_assert_int_eq(sp_output_put(&o, &narrow, why), SP_E_ENCODE);
        ck_assert_ptr_nonnull(strstr(why, "do not fit"));
        ck_assert_int_eq(sp_output_put_repeated(&o, &img, 2, NULL, why),
                         SP_E_ENCODE);
        img.height = 9;
        ck_assert_int_eq(sp_output_put(&o, &img, why), SP_OK);
        ck_assert_int_eq(sp_output_close(&o, SP_OK), SP_E_ENCODE);
        ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 0);
        img.height = 10;
        sp_image_release(&narrow);
        sp_image_release(&img);
    }
}
END_TEST

static Suite *write_stream_suite(void)
{
    Suite *s = suite_create("write_stream");
    TCase *tc = fx_tcase("stream");
    tcase_add_test(tc, test_stream_cuts);
    tcase_add_test(tc, test_stream_repeated);
    tcase_add_test(tc, test_stream_segments);
    tcase_add_test(tc, test_stream_write_fails);
    tcase_add_test(tc, test_stream_rows_checked);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(write_stream_suite());
}
