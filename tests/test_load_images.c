/* test_load_images.c: an input's images (sp_input): two streams on one
 * thread, what may follow an image, an input reused. */
#include "load_lib.h"

/* --- an input's images (sp_input) ------------------------------------- */

/* text_pipe: a pipe holding TEXT, its writer closed; returns the read
 * end. */
static int text_pipe(const char *text)
{
    int p[2];

    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(write(p[1], text, strlen(text)), (ssize_t)strlen(text));
    close(p[1]);
    return p[0];
}

/* next_gray: load IN's next image, a 1x1 or 2x1 P5/P2, and return its
 * first sample; sp_input_more() into *MORE. */
static unsigned next_gray(struct sp_input *in, int *more)
{
    struct sp_load_info info;
    unsigned v;

    ck_assert_int_eq(sp_input_next(in, SP_IO_READ, NULL, NULL, &info), SP_OK);
    v = in->img.pixels[0];
    ck_assert_int_eq(sp_input_release(in), SP_OK);
    ck_assert_int_eq(sp_input_more(in, more), SP_OK);
    return v;
}

/* Two streams read in turn on one thread: what each read past an image
 * is its own input's (it lived in a thread-local keyed by the descriptor
 * at 1cd7bc8, which two inputs on one thread would have shared).  The
 * whitespace between images, CRLF and all, is skipped and counted; the
 * end is found; nothing is left open. */
START_TEST(test_input_two_streams)
{
    int fds = fx_count_fds();
    int a = text_pipe("P5 1 1 255\n\001\r\nP2 1 1 9 2 \t\nP5 1 1 255\n\003");
    int b = text_pipe("P5 1 1 255\n\011P5 1 1 255\n\012\n\n");
    char pa[64], pb[64];
    struct sp_input ia, ib;
    int ma, mb;

    snprintf(pa, sizeof pa, "/dev/fd/%d", a);
    snprintf(pb, sizeof pb, "/dev/fd/%d", b);
    ck_assert_int_eq(fx_input_open(&ia, pa, 0, NULL), SP_OK);
    ck_assert_int_eq(fx_input_open(&ib, pb, 0, NULL), SP_OK);
    close(a);
    close(b);
    ck_assert_uint_eq(next_gray(&ia, &ma), 1);
    ck_assert_int_eq(ma, 1);
    ck_assert_uint_eq(ia.skipped, 2);
    ck_assert_uint_eq(next_gray(&ib, &mb), 9);
    ck_assert_int_eq(mb, 1);
    ck_assert_uint_eq(next_gray(&ia, &ma), 2);
    ck_assert_int_eq(ma, 1);
    ck_assert_uint_eq(next_gray(&ib, &mb), 10);
    ck_assert_int_eq(mb, 0);
    ck_assert_uint_eq(ib.skipped, 2);
    ck_assert_uint_eq(next_gray(&ia, &ma), 3);
    ck_assert_int_eq(ma, 0);
    ck_assert_uint_eq(ia.images, 3);
    sp_input_close(&ia);
    sp_input_close(&ib);
    ck_assert_int_eq(fx_count_fds(), fds);
}
END_TEST

/* After an image, a file's bytes that are not whitespace are the next
 * image's start, and refused as any file's start is: the same statuses
 * from a file and from a stream; whitespace only is the end. */
START_TEST(test_input_after_image)
{
    static const struct {
        const char *tail;
        sp_status more_st;  /* of the load after sp_input_more() */
        int more;
    } tails[] = {
        {"", SP_OK, 0},
        {" \t\n\v\f\r", SP_OK, 0},
        {"\n\377\330\377\340", SP_E_TRUNCATED, 1},  /* a JPEG, cut */
        {"x", SP_E_NOTPNM, 1},
        {"\nP", SP_E_NOTPNM, 1},
        {" P9", SP_E_NOTPNM, 1},
        {"\nP5 0 1 255\n", SP_E_BADHEADER, 1},
        {"\r\nP5 2 2 255\n\001", SP_E_TRUNCATED, 1},
    };
    const char *path = fx_path("in.pgm");

    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
        for (int stream = 0; stream < 2; stream++) {
            char text[64], by[64];
            struct sp_input in;
            struct sp_load_info info;
            int more, fd = -1;

            snprintf(text, sizeof text, "P5 1 1 255\n\007%s", tails[i].tail);
            if (stream) {
                fd = text_pipe(text);
                snprintf(by, sizeof by, "/dev/fd/%d", fd);
            } else {
                fx_write_text(path, text);
            }
            ck_assert_int_eq(fx_input_open(&in, stream ? by : path, 0, NULL),
                             SP_OK);
            if (fd >= 0)
                close(fd);
            ck_assert_uint_eq(next_gray(&in, &more), 7);
            ck_assert_msg(more == tails[i].more, "tail %zu, %s", i,
                          stream ? "stream" : "file");
            if (more)
                ck_assert_int_eq(sp_input_next(&in, SP_IO_READ, NULL, NULL,
                                               &info),
                                 tails[i].more_st);
            sp_input_close(&in);
        }
    }
}
END_TEST

/* The buffer a caller passes to reuse: an image read into memory is
 * released into it, and the next one that fits is read into that very
 * buffer; a larger one takes a new buffer, which is then kept instead; a
 * mapped image leaves it alone. */
START_TEST(test_input_reuse)
{
    struct sp_reuse reuse = {NULL, 0};
    struct sp_load_info info;
    struct sp_input in;
    struct sp_image img;
    const char *small = fx_path("small.ppm"), *large = fx_path("large.ppm");
    unsigned char *kept;

    fx_make_image(&img, 20, 10, 3, 1, 255, 1);
    fx_write_image(small, &img);
    sp_image_release(&img);
    fx_make_image(&img, 40, 10, 3, 1, 255, 2);
    fx_write_image(large, &img);
    sp_image_release(&img);

    ck_assert_int_eq(fx_input_open(&in, small, 0, &reuse), SP_OK);
    ck_assert_int_eq(sp_input_next(&in, SP_IO_READ, NULL, NULL, &info),
                     SP_OK);
    kept = in.img.pixels;
    ck_assert_ptr_null(reuse.p);
    ck_assert_int_eq(sp_input_release(&in), SP_OK);
    ck_assert_ptr_eq(reuse.p, kept);
    ck_assert_uint_eq(reuse.len, 20 * 10 * 3);
    sp_input_close(&in);

    ck_assert_int_eq(fx_input_open(&in, small, 0, &reuse), SP_OK);
    ck_assert_int_eq(sp_input_next(&in, SP_IO_READ, NULL, NULL, &info),
                     SP_OK);
    ck_assert_ptr_eq(in.img.pixels, kept);  /* the same buffer */
    ck_assert_ptr_null(reuse.p);
    sp_input_close(&in);  /* the close releases it */
    ck_assert_ptr_eq(reuse.p, kept);

    ck_assert_int_eq(fx_input_open(&in, large, 0, &reuse), SP_OK);
    ck_assert_int_eq(sp_input_next(&in, SP_IO_READ, NULL, NULL, &info),
                     SP_OK);
    ck_assert_ptr_eq(reuse.p, kept);        /* too small: kept, not used */
    kept = in.img.pixels;
    sp_input_close(&in);
    ck_assert_ptr_eq(reuse.p, kept);        /* the larger one now */
    ck_assert_uint_eq(reuse.len, 40 * 10 * 3);

    ck_assert_int_eq(fx_input_open(&in, large, 0, &reuse), SP_OK);
    ck_assert_int_eq(sp_input_next(&in, SP_IO_MMAP, NULL, NULL, &info),
                     SP_OK);
    ck_assert_int_eq(info.io_used, SP_IO_MMAP);
    sp_input_close(&in);
    ck_assert_ptr_eq(reuse.p, kept);
    sp_reuse_drop(&reuse);
    ck_assert_ptr_null(reuse.p);
}
END_TEST

static Suite *load_images_suite(void)
{
    Suite *s = suite_create("load_images");
    TCase *tc = fx_tcase("streams");
    tcase_add_test(tc, test_input_two_streams);
    tcase_add_test(tc, test_input_after_image);
    suite_add_tcase(s, tc);

    tc = fx_tcase("release");
    tcase_add_test(tc, test_input_reuse);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(load_images_suite());
}
