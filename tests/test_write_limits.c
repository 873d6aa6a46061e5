/* test_write_limits.c: the stb formats' limits: what fits each format, too
 * large refused, at the limit; the encoder's allocation failing, with
 * threads too. */
#include "write_lib.h"

/* ---- the stb formats' limits ---- */

/* One size against sp_outfmt_fits: its status, and a refusal's detail
 * names the size, the format and WORDS. */
struct fit_case {
    enum sp_outfmt fmt;
    size_t w, h;
    unsigned c;
    sp_status st;
    const char *words;
};

#define PNG SP_OUT_PNG
#define JPG SP_OUT_JPEG
#define BMP SP_OUT_BMP
#define TGA SP_OUT_TGA
#define BIG SP_E_TOOBIG

/* Each limit at its edge: the largest size accepted, and one more.
 * PNG: 2147483647 pixels a side (the format's 31 bits; libpng computes
 * in size_t).  JPEG: 65500 a side (libjpeg's JPEG_MAX_DIMENSION).  TGA:
 * 65535 a side (16-bit fields), and the last pixel's offset (w*h-1)*c in
 * an int (stb).  BMP: the file's size, 54 + rows padded to 4 bytes, in an
 * int. */
static const struct fit_case fit_cases[] = {
    {PNG, 2147483647, 1, 4, SP_OK, NULL},
    {PNG, 1, 2147483647, 4, SP_OK, NULL},
    {PNG, 40000, 40000, 3, SP_OK, NULL},
    {PNG, 1, (size_t)INT_MAX + 1, 1, BIG, "2147483647 pixels a side"},
    {PNG, (size_t)INT_MAX + 1, 1, 3, BIG, "2147483647 pixels a side"},
    {JPG, 65500, 1, 3, SP_OK, NULL},
    {JPG, 65501, 1, 3, BIG, "65500 pixels a side"},
    {JPG, 1, 65500, 1, SP_OK, NULL},
    {JPG, 1, 65501, 1, BIG, "65500 pixels a side"},
    {JPG, 70000, 10, 3, BIG, "65500 pixels a side"},
    {JPG, 65500, 65500, 3, SP_OK, NULL},
    {TGA, 65535, 1, 3, SP_OK, NULL},
    {TGA, 65536, 1, 3, BIG, "65535 pixels a side"},
    {TGA, 1, 65535, 1, SP_OK, NULL},
    {TGA, 1, 65536, 1, BIG, "65535 pixels a side"},
    {TGA, 70000, 10, 3, BIG, "65535 pixels a side"},
    {TGA, 65535, 10922, 3, SP_OK, NULL},
    {TGA, 65535, 10923, 3, BIG, "715827883 pixels"},
    {TGA, 26760, 26760, 3, BIG, "715827883 pixels"},
    {TGA, 65535, 32768, 1, SP_OK, NULL},
    {TGA, 65535, 32769, 1, BIG, "2147483648 pixels"},
    {BMP, 1, 536870898, 1, SP_OK, NULL},
    {BMP, 1, 536870899, 1, BIG, "2147483650 bytes"},
    {BMP, 1, 536870898, 3, SP_OK, NULL},
    {BMP, 1, 536870899, 3, BIG, "2147483650 bytes"},
    {BMP, 26754, 26754, 3, SP_OK, NULL},
    {BMP, 26755, 26755, 3, BIG, "2147570394 bytes"},
    {BMP, 26760, 26760, 3, BIG, "bytes"},
    {BMP, 715827864, 1, 1, SP_OK, NULL},
    {BMP, 715827865, 1, 1, BIG, "2147483650 bytes"},
    {BMP, (size_t)INT_MAX + 1, 1, 3, BIG, "2147483647 pixels a side"},
    {BMP, 23170, 23170, 4, SP_OK, NULL},
    {BMP, 23171, 23171, 4, BIG, "bytes"},
};

#undef PNG
#undef JPG
#undef BMP
#undef TGA
#undef BIG

static const char *const fmt_name[] = {"PNM", "PNG", "JPEG", "BMP", "TGA"};

/* sp_outfmt_fits at every format's limits, huge sizes that would wrap a
 * 64-bit product, empty images, and PNM, which has no such limit. */
START_TEST(test_outfmt_fits)
{
    static const size_t huge[] = {(size_t)INT_MAX + 1, (size_t)1 << 32,
                                  (size_t)1 << 33, SIZE_MAX / 3, SIZE_MAX};
    char why[SP_WHY_MAX], size[64];
    sp_status st;

    for (size_t i = 0; i < sizeof fit_cases / sizeof fit_cases[0]; i++) {
        const struct fit_case *k = &fit_cases[i];

        strcpy(why, "stale");
        st = sp_outfmt_fits(k->fmt, k->w, k->h, k->c, why);
        ck_assert_msg(st == k->st, "%s %zux%zu, %u channels: %s (%s)",
                      fmt_name[k->fmt], k->w, k->h, k->c, sp_strerror(st),
                      why);
        if (st == SP_OK) {
            ck_assert_str_eq(why, "");
            continue;
        }
        snprintf(size, sizeof size, "%zux%zu is too large for %s", k->w,
                 k->h, fmt_name[k->fmt]);
        ck_assert_msg(strstr(why, size) != NULL &&
                      strstr(why, k->words) != NULL,
                      "%s %zux%zu: '%s' lacks '%s' or '%s'",
                      fmt_name[k->fmt], k->w, k->h, why, size, k->words);
    }
    for (int f = SP_OUT_PNG; f <= SP_OUT_TGA; f++) {
        for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++)
            for (unsigned c = 1; c <= 4; c++) {
                ck_assert_int_eq(sp_outfmt_fits((enum sp_outfmt)f, huge[i],
                                                huge[i], c, why),
                                 SP_E_TOOBIG);
                ck_assert_int_eq(sp_outfmt_fits((enum sp_outfmt)f, huge[i],
                                                1, c, why),
                                 SP_E_TOOBIG);
                ck_assert_int_eq(sp_outfmt_fits((enum sp_outfmt)f, 1,
                                                huge[i], c, why),
                                 SP_E_TOOBIG);
            }
        ck_assert_int_eq(sp_outfmt_fits((enum sp_outfmt)f, 0, 5, 3, why),
                         SP_E_ENCODE);
        ck_assert_int_eq(sp_outfmt_fits((enum sp_outfmt)f, 5, 0, 1, why),
                         SP_E_ENCODE);
        ck_assert_int_eq(sp_outfmt_fits((enum sp_outfmt)f, 1, 1, 0, why),
                         SP_E_UNSUPPORTED);
        ck_assert_int_eq(sp_outfmt_fits((enum sp_outfmt)f, 1, 1, 5, why),
                         SP_E_UNSUPPORTED);
        ck_assert_int_eq(sp_outfmt_fits((enum sp_outfmt)f, 1, 1, 1, why),
                         SP_OK);
    }
    ck_assert_int_eq(sp_outfmt_fits(SP_OUT_PNM, SIZE_MAX, SIZE_MAX, 3, why),
                     SP_OK);
}
END_TEST

/* A layout over a format's limit: refused at open, with nothing created
 * and nothing left open; an image over it handed to an output opened for
 * a small one: refused by put, before an encoder sees it (BMP, TGA: too
 * large; PNG, JPEG: rows that are not the image's), and the close leaves
 * nothing behind.  The huge images have no pixels: none may be read. */
START_TEST(test_too_large_refused)
{
    static const struct { enum sp_outfmt fmt; size_t w, h; } cases[] = {
        {SP_OUT_PNG, 1, (size_t)INT_MAX + 1}, {SP_OUT_BMP, 26760, 26760},
        {SP_OUT_TGA, 26760, 26760}, {SP_OUT_JPEG, 65501, 10},
        {SP_OUT_TGA, 70000, 10},    {SP_OUT_JPEG, 70000, 10},
    };
    struct sp_image small, huge = {0};
    char why[SP_WHY_MAX];
    int fds = fx_count_fds();

    fx_make_image(&small, 2, 2, 3, 1, 255, 1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sp_output o;
        const char *path = fx_path("out");
        sp_status st, want;

        huge.width = cases[i].w;
        huge.height = cases[i].h;
        huge.channels = 3;
        huge.sample_size = 1;
        huge.maxval = 255;
        huge.stride = huge.width * 3;
        memset(&o, 0x5a, sizeof o);
        st = sp_open_named(&o, path, cases[i].fmt, &huge, 0, why);
        ck_assert_msg(st == SP_E_TOOBIG, "open %s %zux%zu: %s",
                      fmt_name[cases[i].fmt], huge.width, huge.height,
                      sp_strerror(st));
        ck_assert_ptr_null(o.to.f);
        ck_assert_int_eq(o.to.file.fd, -1);
        ck_assert_msg(strstr(why, fmt_name[cases[i].fmt]) != NULL, "%s",
                      why);
        ck_assert_int_eq(sp_write(&huge, path, cases[i].fmt, why),
                         SP_E_TOOBIG);

        ck_assert_int_eq(sp_open_named(&o, path, cases[i].fmt, &small, 0,
                                        why), SP_OK);
        st = sp_output_put(&o, &huge, why);
        want = sp_output_is_streamed(cases[i].fmt) ? SP_E_ENCODE
                                                   : SP_E_TOOBIG;
        ck_assert_msg(st == want, "put %s %zux%zu: %s",
                      fmt_name[cases[i].fmt], huge.width, huge.height,
                      sp_strerror(st));
        ck_assert_int_eq(sp_output_close(&o, st), want);
        ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 0);
    }
    ck_assert_int_eq(fx_count_fds(), fds);
    sp_image_release(&small);
}
END_TEST

/* Images at a limit that are cheap to make are written, and their
 * headers hold the size: JPEG 65500 and TGA 65535 pixels a side, and a
 * PNG row of 16777215 bytes (stb's limit once). */
START_TEST(test_at_the_limit)
{
    static const struct {
        const char *name;
        size_t w, h;
        unsigned c;
    } cases[] = {
        {"w.tga", 65535, 1, 3}, {"h.tga", 1, 65535, 1},
        {"w.jpg", 65500, 1, 3}, {"h.jpg", 1, 65500, 1},
        {"row.png", 5592405, 1, 3}, {"row1.png", 16777215, 1, 1},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sp_image img;
        int w, h, comp;

        fx_make_image(&img, cases[i].w, cases[i].h, cases[i].c, 1, 255,
                      (unsigned)i);
        write_ok(&img, fx_path(cases[i].name));
        ck_assert_msg(stbi_info(fx_path(cases[i].name), &w, &h, &comp),
                      "%s: stb_image cannot read its header",
                      cases[i].name);
        ck_assert_uint_eq((size_t)w, cases[i].w);
        ck_assert_uint_eq((size_t)h, cases[i].h);
        sp_image_release(&img);
    }
}
END_TEST

/* One stb encode into a temporary file: its status, the allocations it
 * asked for, and the bytes it wrote. */
struct put_try {
    const struct sp_image *img;
    enum sp_outfmt fmt;
    unsigned long fail_at, allocs;
    sp_status st;
    long written;
    unsigned char first[8];
};

static void *put_try(void *arg)
{
    struct put_try *t = arg;
    char why[SP_WHY_MAX] = "";
    FILE *f = tmpfile();

    ck_assert_ptr_nonnull(f);
    t->st = sp_stb_put_failing(t->img, f, t->fmt, why, t->fail_at,
                               &t->allocs);
    ck_assert_int_eq(fflush(f), 0);
    t->written = ftell(f);
    rewind(f);
    memset(t->first, 0, sizeof t->first);
    (void)!fread(t->first, 1, sizeof t->first, f);
    fclose(f);
    return NULL;
}

/* Every allocation of the stb encoders made to fail in turn, the first to
 * the last: each time ENOMEM, nothing written, no abort (stb asserts on a
 * failed growth of its buffers), and nothing leaked (the sanitizer
 * build's leak check).  For 8- and 16-bit samples, gray and colour. */
START_TEST(test_encoder_alloc_failure)
{
    static const enum sp_outfmt fmts[] = {SP_OUT_BMP, SP_OUT_TGA};
    static const unsigned layouts[][3] = {{3, 1, 255}, {1, 2, 65535}};

    for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
        struct sp_image img;

        fx_make_image(&img, 19, 11, layouts[l][0], layouts[l][1],
                      layouts[l][2], 5);
        for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
            struct put_try whole = {&img, fmts[f], 0, 0, 0, 0, {0}};

            put_try(&whole);
            ck_assert_int_eq(whole.st, SP_OK);
            ck_assert_int_gt(whole.written, 0);
            for (unsigned long k = 1; k <= whole.allocs; k++) {
                struct put_try t = {&img, fmts[f], k, 0, 0, 0, {0}};

                put_try(&t);
                ck_assert_msg(t.st == ENOMEM && t.written == 0,
                              "%s, allocation %lu of %lu failing: status "
                              "%d, %ld bytes written", fmt_name[fmts[f]],
                              k, whole.allocs, t.st, t.written);
            }
        }
        sp_image_release(&img);
    }
}
END_TEST

static Suite *write_limits_suite(void)
{
    Suite *s = suite_create("write_limits");
    TCase *tc = fx_tcase("limits");
    tcase_add_test(tc, test_outfmt_fits);
    tcase_add_test(tc, test_too_large_refused);
    tcase_add_test(tc, test_at_the_limit);
    tcase_add_test(tc, test_encoder_alloc_failure);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(write_limits_suite());
}
