/* test_write_output.c: sp_output_open / put / close: a file written band by
 * band, short writes, repeated, whole and to stdout, errors at close and
 * open. */
#include "write_lib.h"

/* ---- sp_output_open / put / close: a file written band by band ---- */

/* view_rows: rows [Y0, Y0 + N) of IMG as an image of their own: a view
 * into IMG when PADDED is 0, else a copy whose rows are 7 bytes apart
 * more than they need, the gaps full of junk (free *COPY after). */
static struct sp_image view_rows(const struct sp_image *img, size_t y0,
                                 size_t n, int padded, unsigned char **copy)
{
    struct sp_image v = *img;
    size_t row = img->width * sp_image_pixel_size(img);

    v.backing = SP_BACKING_NONE;
    v.base = NULL;
    v.base_len = 0;
    v.height = n;
    v.pixels = img->pixels + y0 * img->stride;
    *copy = NULL;
    if (padded) {
        v.stride = row + 7;
        *copy = malloc(v.stride * n + 1);
        ck_assert_ptr_nonnull(*copy);
        memset(*copy, 0xee, v.stride * n + 1);
        for (size_t y = 0; y < n; y++)
            memcpy(*copy + y * v.stride, img->pixels + (y0 + y) * img->stride,
                   row);
        v.pixels = *copy;
    }
    return v;
}

/* Several sp_output_put() of bands, some empty, some with padded rows,
 * make the same file as one sp_write() of the whole; until the close the
 * target does not exist and nothing is seen in its directory (the file
 * is an unnamed O_TMPFILE: the tests' directories have them). */
START_TEST(test_output_bands)
{
    static const unsigned layouts[][3] = {
        {1, 1, 255}, {3, 1, 255}, {1, 2, 65535}, {3, 2, 1000}, {3, 1, 7},
    };
    const char *ref = fx_path("ref.ppm"), *path = fx_path("out.ppm");
    uint32_t rng = 77;
    char why[SP_WHY_MAX];

    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        for (int trial = 0; trial < 6; trial++) {
            struct sp_image img;
            struct sp_output o;
            unsigned char *want, *got;
            size_t want_len, len, y = 0;
            int fds = fx_count_fds();

            fx_make_image(&img, 41, 19 + (size_t)trial * 7, layouts[i][0],
                          layouts[i][1], layouts[i][2], (unsigned)i);
            ck_assert_int_eq(sp_write(&img, ref, SP_OUT_PNM, why), SP_OK);
            want = fx_read_file(ref, &want_len);

            ck_assert_int_eq(sp_open_named(&o, path, SP_OUT_PNM, &img, 0,
                                            why), SP_OK);
            ck_assert(!fx_file_exists(path));
            ck_assert_int_eq(fx_count_entries(fx_dir, "."), 0);
            while (y < img.height) {
                unsigned char *copy;
                struct sp_image band;
                size_t n;

                rng = rng * 1103515245u + 12345u;
                n = (rng >> 16) % (size_t)(2 + trial * 3);  /* 0 at times */
                if (n > img.height - y)
                    n = img.height - y;
                band = view_rows(&img, y, n, (rng >> 8) % 2, &copy);
                ck_assert_int_eq(sp_output_put(&o, &band, why), SP_OK);
                free(copy);
                y += n;
            }
            ck_assert_int_eq(sp_output_close(&o, SP_OK), SP_OK);
            got = fx_read_file(path, &len);
            ck_assert_msg(len == want_len && memcmp(got, want, len) == 0,
                          "layout %zu trial %d: banded output differs", i,
                          trial);
            assert_no_temp(fx_dir);
            ck_assert_int_eq(fx_count_fds(), fds);
            free(got);
            free(want);
            sp_image_release(&img);
            ck_assert_int_eq(unlink(path), 0);
        }
    }
}
END_TEST

/* A writev() that takes at most 1000 bytes a call, ends in the middle of
 * a buffer, and is interrupted every third call. */
static unsigned short_calls;

static ssize_t short_writev(int fd, const struct iovec *iov, int n)
{
    struct iovec cut[64];
    size_t room = 1000;
    int k = 0;

    if (++short_calls % 3 == 0) {
        errno = EINTR;
        return -1;
    }
    for (; k < n && k < 64 && room > 0; k++) {
        cut[k] = iov[k];
        if (cut[k].iov_len > room)
            cut[k].iov_len = room;
        room -= cut[k].iov_len;
    }
    return writev(fd, cut, k);
}

/* sp_output_put_repeated() writes each row TIMES times: the file is that
 * of the image with its rows repeated, through writes cut short and
 * interrupted, after a header and rows that went through stdio; and a
 * write error comes back. */
START_TEST(test_output_repeated)
{
    const char *path = fx_path("rep.ppm"), *ref = fx_path("ref.ppm");
    char why[SP_WHY_MAX];

    for (unsigned times = 1; times <= 5; times++) {
        for (int cut = 0; cut <= 1; cut++) {
            struct sp_image img, tall, band;
            struct sp_output o;
            unsigned char *want, *got;
            size_t want_len, len, row;

            fx_make_image(&img, 37, 300, 3, 1, 255, times);
            row = img.stride;
            ck_assert_int_eq(sp_image_alloc(&tall, img.width,
                                            img.height * times, 3, 1, 255),
                             SP_OK);
            for (size_t y = 0; y < tall.height; y++)
                memcpy(tall.pixels + y * row, img.pixels + y / times * row,
                       row);
            ck_assert_int_eq(sp_write(&tall, ref, SP_OUT_PNM, why), SP_OK);
            want = fx_read_file(ref, &want_len);

            short_calls = 0;
            if (cut)
                sp_sys.writev = short_writev;
            ck_assert_int_eq(sp_open_named(&o, path, SP_OUT_PNM, &tall, 0,
                                            why), SP_OK);
            band = img;
            band.height = 1;            /* row 0 through stdio */
            ck_assert_int_eq(sp_output_put_repeated(&o, &band, 1, NULL,
                                                    why), SP_OK);
            for (unsigned t = 1; t < times; t++)
                ck_assert_int_eq(sp_output_put_repeated(&o, &band, 1, NULL,
                                                        why), SP_OK);
            band.pixels += row;
            band.height = img.height - 1;
            ck_assert_int_eq(sp_output_put_repeated(&o, &band, times, NULL,
                                                    why), SP_OK);
            ck_assert_int_eq(sp_output_close(&o, SP_OK), SP_OK);
            sp_sys_reset();
            got = fx_read_file(path, &len);
            ck_assert_msg(len == want_len && memcmp(got, want, len) == 0,
                          "each row %u times%s: the file differs", times,
                          cut ? ", short writes" : "");
            ck_assert(!cut || times == 1 || short_calls > 3);
            free(got);
            free(want);
            sp_image_release(&tall);
            sp_image_release(&img);
        }
    }

    /* An error: ENOSPC from /dev/full. */
    {
        struct sp_image img;
        struct sp_output o;

        fx_make_image(&img, 37, 30, 3, 1, 255, 1);
        ck_assert_int_eq(sp_open_named(&o, "/dev/full", SP_OUT_PNM, &img, 0,
                                        why), SP_OK);
        ck_assert_int_eq(sp_output_put_repeated(&o, &img, 3, NULL, why),
                         ENOSPC);
        ck_assert_int_eq(sp_output_close(&o, ENOSPC), ENOSPC);
        sp_image_release(&img);
    }
}
END_TEST

/* The stb formats take the whole image in one put: the same file as
 * sp_write(); and "-" streams PNM bands to standard output. */
START_TEST(test_output_whole_and_stdout)
{
    static const char *const names[] = {"o.png", "o.jpg", "o.bmp", "o.tga"};
    const char *ref = fx_path("ref"), *std = fx_path("stdout");
    struct sp_image img;
    struct sp_output o;
    unsigned char *want, *got;
    size_t want_len, len;
    char why[SP_WHY_MAX];
    int fd;

    fx_make_image(&img, 33, 21, 3, 2, 4095, 3);
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        enum sp_outfmt fmt;

        ck_assert_int_eq(sp_outfmt_for(names[n], &fmt, NULL), SP_OK);
        ck_assert_int_eq(sp_write(&img, ref, fmt, why), SP_OK);
        want = fx_read_file(ref, &want_len);
        ck_assert_int_eq(sp_open_named(&o, fx_path(names[n]), fmt, &img, 0,
                                        why), SP_OK);
        ck_assert_int_eq(sp_output_put(&o, &img, why), SP_OK);
        ck_assert_int_eq(sp_output_close(&o, SP_OK), SP_OK);
        got = fx_read_file(fx_path(names[n]), &len);
        ck_assert_msg(len == want_len && memcmp(got, want, len) == 0,
                      "%s differs from sp_write's", names[n]);
        free(got);
        free(want);
    }
    assert_no_temp(fx_dir);

    want = fx_pnm_bytes(&img, &want_len);
    fflush(stdout);
    fd = open(std, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    if (fd != STDOUT_FILENO) {
        ck_assert_int_eq(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
        close(fd);
    }
    ck_assert_int_eq(sp_open_named(&o, "-", SP_OUT_PNM, &img, 0, why), SP_OK);
    for (size_t y = 0; y < img.height; y += 4) {
        unsigned char *copy;
        struct sp_image band = view_rows(&img, y, img.height - y < 4
                                                      ? img.height - y : 4,
                                         (int)(y % 8 == 0), &copy);

        ck_assert_int_eq(sp_output_put(&o, &band, why), SP_OK);
        free(copy);
    }
    ck_assert_int_eq(sp_output_close(&o, SP_OK), SP_OK);
    ck_assert_int_ne(fcntl(STDOUT_FILENO, F_GETFD), -1);  /* left open */
    fflush(stdout);
    got = fx_read_file(std, &len);
    ck_assert_uint_eq(len, want_len);
    ck_assert_mem_eq(got, want, len);
    free(got);
    free(want);
    sp_image_release(&img);
}
END_TEST

/* A close with an error status (a failed scale, say) returns it, removes
 * the temporary file and leaves an existing target as it was, or no
 * target at all; whatever was put before. */
START_TEST(test_output_close_error)
{
    static const sp_status errs[] = {EIO, SP_E_CHANGED, ENOMEM};
    static const enum sp_outfmt fmts[] = {SP_OUT_PNM, SP_OUT_PNG};
    const char *old = fx_path("old.ppm"), *fresh = fx_path("new.ppm");
    struct sp_image img;
    struct stat before, after;
    char why[SP_WHY_MAX];
    int fds = fx_count_fds();

    fx_make_image(&img, 40, 30, 3, 1, 255, 4);
    fx_write_text(old, "old contents");
    ck_assert_int_eq(chmod(old, 0640), 0);
    ck_assert_int_eq(stat(old, &before), 0);
    for (size_t e = 0; e < sizeof errs / sizeof errs[0]; e++) {
        for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
            for (int puts = 0; puts <= 2; puts++) {
                struct sp_output o;
                unsigned char *got;
                size_t len;

                ck_assert_int_eq(sp_open_named(&o, old, fmts[f], &img, 0,
                                                why), SP_OK);
                if (puts > 0)
                    ck_assert_int_eq(sp_output_put(&o, &img, why), SP_OK);
                ck_assert_int_eq(sp_output_close(&o, errs[e]), errs[e]);
                assert_no_temp(fx_dir);
                got = fx_read_file(old, &len);
                ck_assert_str_eq((char *)got, "old contents");
                free(got);
                ck_assert_int_eq(stat(old, &after), 0);
                ck_assert_uint_eq(after.st_ino, before.st_ino);
                ck_assert_uint_eq(after.st_mode, before.st_mode);

                ck_assert_int_eq(sp_open_named(&o, fresh, fmts[f], &img, 0,
                                                why), SP_OK);
                if (puts > 1)
                    ck_assert_int_eq(sp_output_put(&o, &img, why), SP_OK);
                ck_assert_int_eq(sp_output_close(&o, errs[e]), errs[e]);
                ck_assert(!fx_file_exists(fresh));
                assert_no_temp(fx_dir);
            }
        }
    }
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);
    ck_assert_int_eq(fx_count_fds(), fds);
    sp_image_release(&img);
}
END_TEST

/* An open that fails creates nothing, leaves nothing open, and leaves the
 * output empty: a directory (EISDIR), a missing directory (ENOENT), a
 * file on the way (ENOTDIR), a directory it may not write (EACCES), and a
 * layout too large for a PNM header or for PNG (SP_E_TOOBIG, with a
 * reason) over an existing target, which stays as it was. */
START_TEST(test_output_open_fails)
{
    const char *ro = fx_path("ro"), *old = fx_path("old.ppm");
    char ro_out[PATH_MAX];
    struct sp_image img, huge;
    struct stat before, after;
    char why[SP_WHY_MAX];
    int fds = fx_count_fds();
    const struct {
        const char *path;
        const struct sp_image *layout;
        sp_status st;
    } cases[] = {
        {fx_dir, &img, EISDIR},
        {fx_path("dir.ppm"), &img, EISDIR},
        {fx_path("no/out.ppm"), &img, ENOENT},
        {fx_path("file/out.ppm"), &img, ENOTDIR},
        {fx_path("new.ppm"), &huge, SP_E_TOOBIG},
        {old, &huge, SP_E_TOOBIG},
        {ro_out, &img, EACCES},  /* last: root is not stopped by it */
    };
    size_t ncases = sizeof cases / sizeof cases[0] - (geteuid() == 0);
    unsigned char *got;
    size_t len;

    fx_make_image(&img, 4, 4, 3, 1, 255, 1);
    huge = img;
    huge.width = (size_t)INT_MAX + 1;
    huge.height = 2;
    ck_assert_int_eq(mkdir(fx_path("dir.ppm"), 0755), 0);
    fx_write_text(fx_path("file"), "x");
    fx_write_text(old, "old contents");
    ck_assert_int_eq(stat(old, &before), 0);
    ck_assert_int_eq(mkdir(ro, 0755), 0);
    snprintf(ro_out, sizeof ro_out, "%s/out.ppm", ro);
    ck_assert_int_eq(chmod(ro, 0555), 0);

    for (size_t i = 0; i < ncases; i++) {
        for (int fmt = SP_OUT_PNM; fmt <= SP_OUT_PNG; fmt++) {
            struct sp_output o;
            sp_status st, want = cases[i].st;

            memset(&o, 0x5a, sizeof o);
            st = sp_open_named(&o, cases[i].path, (enum sp_outfmt)fmt,
                                cases[i].layout, 0, why);
            ck_assert_msg(st == want, "%s (format %d): %d %s, want %s",
                          cases[i].path, fmt, st, sp_strerror(st),
                          sp_strerror(want));
            ck_assert_ptr_null(o.to.f);
            ck_assert_int_eq(o.to.file.fd, -1);
            ck_assert_int_eq(o.to.file.dir, -1);
            ck_assert_ptr_null(o.to.file.name);
            ck_assert_ptr_null(o.to.file.tmp);
            if (want == SP_E_TOOBIG)
                ck_assert_msg(strstr(why, fmt == SP_OUT_PNM
                                              ? "too large for PNM"
                                              : "too large for PNG") != NULL,
                              "why: '%s'", why);
        }
    }
    ck_assert(!fx_file_exists(fx_path("new.ppm")));
    ck_assert(!fx_file_exists(fx_path("no")));
    got = fx_read_file(old, &len);
    ck_assert_str_eq((char *)got, "old contents");
    free(got);
    ck_assert_int_eq(stat(old, &after), 0);
    ck_assert_uint_eq(after.st_ino, before.st_ino);
    assert_no_temp(fx_dir);
    assert_no_temp(ro);
    ck_assert_int_eq(fx_count_entries(ro, NULL), 0);
    ck_assert_int_eq(fx_count_entries(fx_path("dir.ppm"), NULL), 0);
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 4);
    ck_assert_int_eq(fx_count_fds(), fds);
    ck_assert_int_eq(chmod(ro, 0755), 0);
    sp_image_release(&img);
}
END_TEST

static Suite *write_output_suite(void)
{
    Suite *s = suite_create("write_output");
    TCase *tc = fx_tcase("files");
    tcase_add_test(tc, test_output_bands);
    tcase_add_test(tc, test_output_repeated);
    tcase_add_test(tc, test_output_whole_and_stdout);
    tcase_add_test(tc, test_output_close_error);
    tcase_add_test(tc, test_output_open_fails);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(write_output_suite());
}
