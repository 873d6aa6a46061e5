/* The writer: formats by extension, exact PNM bytes, the stb formats
 * (decoded back where lossless), errors with nothing left behind, atomic
 * replacement that keeps the mode, symbolic links, FIFOs, stdout. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stb_image.h>

#include "encode.h"
#include "fixtures.h"
#include "input.h"
#include "sys.h"
#include "write_whole.h"

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
        sp_status st = sp_outfmt_for(cases[i].path, &fmt);

        ck_assert_msg(st == cases[i].st, "'%s': %d", cases[i].path, st);
        if (st == SP_OK)
            ck_assert_msg(fmt == cases[i].fmt, "'%s': format %d, want %d",
                          cases[i].path, fmt, cases[i].fmt);
    }
}
END_TEST

/* write_ok: sp_write IMG to PATH in the format its extension says. */
static void write_ok(const struct sp_image *img, const char *path)
{
    enum sp_outfmt fmt;
    char why[SP_WHY_MAX];
    sp_status st;

    ck_assert_int_eq(sp_outfmt_for(path, &fmt), SP_OK);
    st = sp_write(img, path, fmt, why);
    ck_assert_msg(st == SP_OK, "%s: %s (%s)", path, sp_strerror(st), why);
}

/* PNM output, byte for byte. */
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

/* PNG, JPEG, BMP, TGA of every layout and maxval: the signature, and for
 * the lossless ones the pixels, rescaled to 8 bits. */
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
            px = stbi_load_from_memory(got, (int)len, &w, &h, &comp, (int)c);
            ck_assert_msg(px != NULL, "%s: stb_image cannot read it back",
                          name);
            ck_assert_int_eq(w, 23);
            ck_assert_int_eq(h, 17);
            if (stb_formats[f].lossless) {
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

/* No ".NAME.XXXXXX" temporary file, nor anything else, is left in DIR. */
static void assert_no_temp(const char *dir)
{
    ck_assert_msg(fx_count_entries(dir, ".") == 0,
                  "a temporary file was left in %s", dir);
}

/* /dev/full: ENOSPC, no crash, for PNM and the stb formats, small and
 * larger than stdio's buffer. */
START_TEST(test_dev_full)
{
    static const enum sp_outfmt fmts[] = {SP_OUT_PNM, SP_OUT_PNG,
                                          SP_OUT_JPEG, SP_OUT_BMP,
                                          SP_OUT_TGA};
    static const size_t sizes[] = {2, 200};
    struct stat sb;
    char why[SP_WHY_MAX];

    if (stat("/dev/full", &sb) != 0 || !S_ISCHR(sb.st_mode))
        return;  /* no /dev/full here */
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        struct sp_image img;

        fx_make_image(&img, sizes[s], sizes[s], 3, 1, 255, 1);
        for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
            sp_status st = sp_write(&img, "/dev/full", fmts[f], why);
            ck_assert_msg(st == ENOSPC, "%zu px format %d: %d %s", sizes[s],
                          fmts[f], st, sp_strerror(st));
        }
        sp_image_release(&img);
    }
    ck_assert_int_eq(stat("/dev/full", &sb), 0);
    ck_assert(S_ISCHR(sb.st_mode));
}
END_TEST

START_TEST(test_missing_dir)
{
    struct sp_image img;
    char why[SP_WHY_MAX];

    fx_make_image(&img, 4, 4, 1, 1, 255, 0);
    ck_assert_int_eq(sp_write(&img, fx_path("nodir/out.ppm"), SP_OUT_PNM,
                              why), ENOENT);
    ck_assert_int_eq(sp_write(&img, fx_path("nodir/out.png"), SP_OUT_PNG,
                              why), ENOENT);
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 0);
    /* A file where a directory should be. */
    fx_write_text(fx_path("file"), "x");
    ck_assert_int_eq(sp_write(&img, fx_path("file/out.ppm"), SP_OUT_PNM,
                              why), ENOTDIR);
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);
    sp_image_release(&img);
}
END_TEST

START_TEST(test_readonly_dir)
{
    struct sp_image img;
    char why[SP_WHY_MAX];
    const char *dir = fx_path("ro");
    char out[PATH_MAX];
    sp_status st;

    snprintf(out, sizeof out, "%s/out.ppm", dir);
    fx_make_image(&img, 4, 4, 3, 1, 255, 0);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    ck_assert_int_eq(chmod(dir, 0555), 0);
    st = sp_write(&img, out, SP_OUT_PNM, why);
    if (geteuid() != 0) {
        /* Root is not stopped by permissions: skip this part there. */
        ck_assert_int_eq(st, EACCES);
        ck_assert_int_eq(fx_count_entries(dir, NULL), 0);
    }
    assert_no_temp(dir);
    ck_assert_int_eq(chmod(dir, 0755), 0);
    sp_image_release(&img);
}
END_TEST

/* A write that fails part way (the file size limit): an errno, no
 * temporary file, and the existing target untouched. */
START_TEST(test_failure_keeps_target)
{
    static const enum sp_outfmt fmts[] = {SP_OUT_PNM, SP_OUT_PNG, SP_OUT_BMP};
    const char *path = fx_path("out.ppm");
    struct sp_image img;
    struct rlimit rl;
    struct stat before, after;
    char why[SP_WHY_MAX];
    unsigned char *got;
    size_t len;

    fx_make_image(&img, 120, 120, 3, 1, 255, 3);
    fx_write_text(path, "old contents");
    ck_assert_int_eq(stat(path, &before), 0);
    signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &rl), 0);
    rl.rlim_cur = 4096;
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
        sp_status st = sp_write(&img, path, fmts[f], why);

        ck_assert_msg(st == EFBIG, "format %d: %d %s", fmts[f], st,
                      sp_strerror(st));
        assert_no_temp(fx_dir);
        ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 1);
        got = fx_read_file(path, &len);
        ck_assert_str_eq((char *)got, "old contents");
        free(got);
        ck_assert_int_eq(stat(path, &after), 0);
        ck_assert_uint_eq(after.st_ino, before.st_ino);
    }
    sp_image_release(&img);
}
END_TEST

/* An existing file is replaced by a rename and keeps its permission
 * bits, less setuid, setgid and sticky; a read-only one is replaced only
 * by a caller who may write it anyway (root), as cp would. */
START_TEST(test_replace_keeps_mode)
{
    static const mode_t modes[] = {0640, 0604, 0600, 0755,
                                   0444, 04755, 02775, 01644};
    const char *path = fx_path("out.ppm");
    struct sp_image img;
    struct stat before, after;
    unsigned char *got, *want;
    size_t len, want_len;
    char why[SP_WHY_MAX];

    fx_make_image(&img, 9, 7, 3, 1, 255, 2);
    want = fx_pnm_bytes(&img, &want_len);
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        (void)unlink(path);
        fx_write_text(path, "old");
        ck_assert_int_eq(chmod(path, modes[m]), 0);
        ck_assert_int_eq(stat(path, &before), 0);
        if (!(modes[m] & 0200) && geteuid() != 0) {
            ck_assert_int_eq(sp_write(&img, path, SP_OUT_PNM, why), EACCES);
            got = fx_read_file(path, &len);
            ck_assert_str_eq((char *)got, "old");
            free(got);
            continue;
        }
        write_ok(&img, path);
        ck_assert_int_eq(stat(path, &after), 0);
        ck_assert_uint_ne(after.st_ino, before.st_ino);
        ck_assert_msg((after.st_mode & 07777) == (modes[m] & 0777),
                      "mode %o, want %o", after.st_mode & 07777,
                      modes[m] & 0777);
        got = fx_read_file(path, &len);
        ck_assert_uint_eq(len, want_len);
        ck_assert_mem_eq(got, want, len);
        free(got);
        assert_no_temp(fx_dir);
    }
    free(want);
    sp_image_release(&img);
}
END_TEST

/* A new file gets 0666 less the umask, and the umask is left alone. */
START_TEST(test_new_file_mode)
{
    static const mode_t masks[] = {022, 027, 077, 0};
    struct sp_image img;
    struct stat sb;
    char name[32];

    fx_make_image(&img, 2, 2, 1, 1, 255, 2);
    for (size_t m = 0; m < sizeof masks / sizeof masks[0]; m++) {
        snprintf(name, sizeof name, "new%zu.png", m);
        umask(masks[m]);
        write_ok(&img, fx_path(name));
        ck_assert_uint_eq(umask(masks[m]), masks[m]);
        ck_assert_int_eq(stat(fx_path(name), &sb), 0);
        ck_assert_uint_eq(sb.st_mode & 07777, 0666 & ~masks[m]);
    }
    sp_image_release(&img);
}
END_TEST

/* Writing through a symbolic link replaces the file it points to; the
 * link stays a link, pointing where it did. */
START_TEST(test_symlink)
{
    struct sp_image img;
    struct stat sb;
    unsigned char *got, *want;
    size_t len, want_len;
    char target[PATH_MAX];
    ssize_t n;

    fx_make_image(&img, 5, 3, 1, 2, 65535, 4);
    want = fx_pnm_bytes(&img, &want_len);
    ck_assert_int_eq(mkdir(fx_path("sub"), 0755), 0);
    fx_write_text(fx_path("real.pgm"), "old");
    ck_assert_int_eq(chmod(fx_path("real.pgm"), 0640), 0);
    ck_assert_int_eq(symlink("real.pgm", fx_path("link.pgm")), 0);
    ck_assert_int_eq(symlink("../real.pgm", fx_path("sub/up.pgm")), 0);

    for (int which = 0; which < 2; which++) {
        const char *link = which ? fx_path("sub/up.pgm")
                                 : fx_path("link.pgm");

        write_ok(&img, link);
        ck_assert_int_eq(lstat(link, &sb), 0);
        ck_assert(S_ISLNK(sb.st_mode));
        n = readlink(link, target, sizeof target - 1);
        ck_assert_int_gt(n, 0);
        target[n] = '\0';
        ck_assert_str_eq(target, which ? "../real.pgm" : "real.pgm");
        ck_assert_int_eq(lstat(fx_path("real.pgm"), &sb), 0);
        ck_assert(S_ISREG(sb.st_mode));
        ck_assert_uint_eq(sb.st_mode & 07777, 0640);
        got = fx_read_file(fx_path("real.pgm"), &len);
        ck_assert_uint_eq(len, want_len);
        ck_assert_mem_eq(got, want, len);
        free(got);
        assert_no_temp(fx_dir);
        assert_no_temp(fx_path("sub"));
        ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 3);
        ck_assert_int_eq(fx_count_entries(fx_path("sub"), NULL), 1);
        fx_write_text(fx_path("real.pgm"), "old");
    }
    free(want);
    sp_image_release(&img);
}
END_TEST

/* A link to a file that does not exist yet is refused, as cp refuses
 * it: the link stays, and nothing is created where it points. */
START_TEST(test_dangling_symlink)
{
    struct sp_image img;
    struct stat sb;
    char why[SP_WHY_MAX], target[PATH_MAX];
    sp_status st;
    ssize_t n;

    fx_make_image(&img, 5, 3, 3, 1, 255, 4);
    ck_assert_int_eq(symlink("later.ppm", fx_path("link.ppm")), 0);
    st = sp_write(&img, fx_path("link.ppm"), SP_OUT_PNM, why);
    ck_assert_int_eq(st, SP_E_REFUSED);
    ck_assert_msg(strstr(why, "dangling symbolic link") != NULL, "why: %s",
                  why);
    ck_assert_int_eq(lstat(fx_path("link.ppm"), &sb), 0);
    ck_assert(S_ISLNK(sb.st_mode));
    n = readlink(fx_path("link.ppm"), target, sizeof target - 1);
    ck_assert_int_gt(n, 0);
    target[n] = '\0';
    ck_assert_str_eq(target, "later.ppm");
    ck_assert(!fx_file_exists(fx_path("later.ppm")));
    assert_no_temp(fx_dir);
    sp_image_release(&img);
}
END_TEST

START_TEST(test_directory_target)
{
    struct sp_image img;
    char why[SP_WHY_MAX];

    fx_make_image(&img, 2, 2, 3, 1, 255, 4);
    ck_assert_int_eq(sp_write(&img, fx_dir, SP_OUT_PNM, why), EISDIR);
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 0);
    sp_image_release(&img);
}
END_TEST

/* A FIFO is written in place: it stays a FIFO and its reader gets the
 * exact bytes. */
START_TEST(test_fifo_target)
{
    const char *fifo = fx_path("fifo"), *copy = fx_path("copy");
    struct sp_image img;
    struct stat sb;
    unsigned char *got, *want;
    size_t len, want_len;
    int status;
    pid_t pid;

    fx_make_image(&img, 150, 100, 3, 1, 255, 5);
    want = fx_pnm_bytes(&img, &want_len);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        /* The reader: copy the FIFO to a file. */
        char buf[4096];
        int in = open(fifo, O_RDONLY), out;
        ssize_t n;

        out = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0)
            _exit(1);
        while ((n = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)n) != n)
                _exit(1);
        _exit(n < 0 || close(out) != 0);
    }
    write_ok(&img, fifo);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_int_eq(lstat(fifo, &sb), 0);
    ck_assert(S_ISFIFO(sb.st_mode));
    got = fx_read_file(copy, &len);
    ck_assert_uint_eq(len, want_len);
    ck_assert_mem_eq(got, want, len);
    assert_no_temp(fx_dir);
    free(got);
    free(want);
    sp_image_release(&img);
}
END_TEST

/* "-" is standard output, always PNM. */
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
    ck_assert_int_eq(sp_write(&img, "-", SP_OUT_PNG, why), SP_OK);
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
START_TEST(test_relative_path)
{
    struct sp_image img;
    unsigned char *got;
    size_t len;

    fx_make_image(&img, 3, 3, 3, 1, 255, 7);
    ck_assert_int_eq(chdir(fx_dir), 0);
    write_ok(&img, "rel.ppm");
    write_ok(&img, "rel.ppm");
    write_ok(&img, "./rel2.bmp");
    got = fx_read_file(fx_path("rel.ppm"), &len);
    ck_assert_uint_eq(len, 11 + 27);
    free(got);
    assert_no_temp(fx_dir);
    ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 2);
    ck_assert_int_eq(chdir("/"), 0);
    sp_image_release(&img);
}
END_TEST

/* A name as long as the file system allows can be written: the temporary
 * name beside it must not be longer than NAME_MAX. */
START_TEST(test_long_name)
{
    struct sp_image img;
    char name[NAME_MAX + 1];
    char why[SP_WHY_MAX];
    sp_status st;

    memset(name, 'a', NAME_MAX - 4);
    memcpy(name + NAME_MAX - 4, ".ppm", 5);
    ck_assert_uint_eq(strlen(name), NAME_MAX);
    fx_write_text(fx_path(name), "probe");  /* the name itself is fine */
    ck_assert_int_eq(unlink(fx_path(name)), 0);
    fx_make_image(&img, 3, 3, 3, 1, 255, 7);
    st = sp_write(&img, fx_path(name), SP_OUT_PNM, why);
    ck_assert_msg(st == SP_OK, "a %d-byte file name: %s", NAME_MAX,
                  sp_strerror(st));
    ck_assert(fx_file_exists(fx_path(name)));
    assert_no_temp(fx_dir);
    sp_image_release(&img);
}
END_TEST

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

            ck_assert_int_eq(sp_output_open(&o, path, SP_OUT_PNM, &img, why),
                             SP_OK);
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
            ck_assert_int_eq(sp_output_open(&o, path, SP_OUT_PNM, &tall, why),
                             SP_OK);
            band = img;
            band.height = 1;            /* row 0 through stdio */
            ck_assert_int_eq(sp_output_put_repeated(&o, &band, 1, NULL), SP_OK);
            for (unsigned t = 1; t < times; t++)
                ck_assert_int_eq(sp_output_put_repeated(&o, &band, 1, NULL), SP_OK);
            band.pixels += row;
            band.height = img.height - 1;
            ck_assert_int_eq(sp_output_put_repeated(&o, &band, times, NULL), SP_OK);
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
        ck_assert_int_eq(sp_output_open(&o, "/dev/full", SP_OUT_PNM, &img,
                                        why), SP_OK);
        ck_assert_int_eq(sp_output_put_repeated(&o, &img, 3, NULL), ENOSPC);
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

        ck_assert_int_eq(sp_outfmt_for(names[n], &fmt), SP_OK);
        ck_assert_int_eq(sp_write(&img, ref, fmt, why), SP_OK);
        want = fx_read_file(ref, &want_len);
        ck_assert_int_eq(sp_output_open(&o, fx_path(names[n]), fmt, &img,
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
    ck_assert_int_eq(sp_output_open(&o, "-", SP_OUT_PNG, &img, why), SP_OK);
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

                ck_assert_int_eq(sp_output_open(&o, old, fmts[f], &img, why),
                                 SP_OK);
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

                ck_assert_int_eq(sp_output_open(&o, fresh, fmts[f], &img,
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
            st = sp_output_open(&o, cases[i].path, (enum sp_outfmt)fmt,
                                cases[i].layout, why);
            ck_assert_msg(st == want, "%s (format %d): %d %s, want %s",
                          cases[i].path, fmt, st, sp_strerror(st),
                          sp_strerror(want));
            ck_assert_ptr_null(o.f);
            ck_assert_int_eq(o.file.fd, -1);
            ck_assert_int_eq(o.file.dir, -1);
            ck_assert_ptr_null(o.file.name);
            ck_assert_ptr_null(o.file.tmp);
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
 * PNG: a row of 16777215 bytes (stb sums 128 a byte in an int to pick a
 * row's filter), 1431655757 bytes of filtered rows, (w*c+1)*h (stb's
 * zlib buffer, an int that grows 2m+1, must not grow past 1610612735
 * bytes: 9 bits a byte at worst, and 6 more).  JPEG and TGA: 65535 a
 * side (16-bit fields), and the last pixel's offset (w*h-1)*c in an int.
 * BMP: the file's size, 54 + rows padded to 4 bytes, in an int. */
static const struct fit_case fit_cases[] = {
    {PNG, 16777215, 1, 1, SP_OK, NULL},
    {PNG, 16777216, 1, 1, BIG, "16777215 bytes a row"},
    {PNG, 5592405, 1, 3, SP_OK, NULL},
    {PNG, 5592406, 1, 3, BIG, "16777215 bytes a row"},
    {PNG, 1, 715827878, 1, SP_OK, NULL},
    {PNG, 1, 715827879, 1, BIG, "1431655757 bytes of filtered rows"},
    {PNG, 1, 357913939, 3, SP_OK, NULL},
    {PNG, 1, 357913940, 3, BIG, "1431655757 bytes of filtered rows"},
    {PNG, 21845, 21845, 3, SP_OK, NULL},
    {PNG, 21846, 21846, 3, BIG, "1431655757 bytes of filtered rows"},
    {PNG, 40000, 40000, 3, BIG, "1431655757 bytes of filtered rows"},
    {PNG, 1, (size_t)INT_MAX + 1, 1, BIG, "2147483647 pixels a side"},
    {JPG, 65535, 1, 3, SP_OK, NULL},
    {JPG, 65536, 1, 3, BIG, "65535 pixels a side"},
    {JPG, 1, 65535, 1, SP_OK, NULL},
    {JPG, 1, 65536, 1, BIG, "65535 pixels a side"},
    {JPG, 70000, 10, 3, BIG, "65535 pixels a side"},
    {JPG, 65535, 10922, 3, SP_OK, NULL},
    {JPG, 65535, 10923, 3, BIG, "715827883 pixels"},
    {JPG, 26754, 26754, 3, SP_OK, NULL},
    {JPG, 26755, 26755, 3, BIG, "715827883 pixels"},
    {JPG, 26760, 26760, 3, BIG, "715827883 pixels"},
    {JPG, 65535, 32768, 1, SP_OK, NULL},
    {JPG, 65535, 32769, 1, BIG, "2147483648 pixels"},
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
 * a small one: refused by put, before stb sees it, and the close leaves
 * nothing behind.  The huge images have no pixels: none may be read. */
START_TEST(test_too_large_refused)
{
    static const struct { enum sp_outfmt fmt; size_t w, h; } cases[] = {
        {SP_OUT_PNG, 40000, 40000}, {SP_OUT_BMP, 26760, 26760},
        {SP_OUT_TGA, 26760, 26760}, {SP_OUT_JPEG, 26760, 26760},
        {SP_OUT_TGA, 70000, 10},    {SP_OUT_JPEG, 70000, 10},
    };
    struct sp_image small, huge = {0};
    char why[SP_WHY_MAX];
    int fds = fx_count_fds();

    fx_make_image(&small, 2, 2, 3, 1, 255, 1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sp_output o;
        const char *path = fx_path("out");
        sp_status st;

        huge.width = cases[i].w;
        huge.height = cases[i].h;
        huge.channels = 3;
        huge.sample_size = 1;
        huge.maxval = 255;
        huge.stride = huge.width * 3;
        memset(&o, 0x5a, sizeof o);
        st = sp_output_open(&o, path, cases[i].fmt, &huge, why);
        ck_assert_msg(st == SP_E_TOOBIG, "open %s %zux%zu: %s",
                      fmt_name[cases[i].fmt], huge.width, huge.height,
                      sp_strerror(st));
        ck_assert_ptr_null(o.f);
        ck_assert_int_eq(o.file.fd, -1);
        ck_assert_msg(strstr(why, fmt_name[cases[i].fmt]) != NULL, "%s",
                      why);
        ck_assert_int_eq(sp_write(&huge, path, cases[i].fmt, why),
                         SP_E_TOOBIG);

        ck_assert_int_eq(sp_output_open(&o, path, cases[i].fmt, &small, why),
                         SP_OK);
        st = sp_output_put(&o, &huge, why);
        ck_assert_msg(st == SP_E_TOOBIG, "put %s %zux%zu: %s",
                      fmt_name[cases[i].fmt], huge.width, huge.height,
                      sp_strerror(st));
        ck_assert_int_eq(sp_output_close(&o, st), SP_E_TOOBIG);
        ck_assert_int_eq(fx_count_entries(fx_dir, NULL), 0);
    }
    ck_assert_int_eq(fx_count_fds(), fds);
    sp_image_release(&small);
}
END_TEST

/* Images at a limit that are cheap to make are written, and their
 * headers hold the size: JPEG and TGA 65535 pixels a side, a PNG row of
 * 16777215 bytes. */
START_TEST(test_at_the_limit)
{
    static const struct {
        const char *name;
        size_t w, h;
        unsigned c;
    } cases[] = {
        {"w.tga", 65535, 1, 3}, {"h.tga", 1, 65535, 1},
        {"w.jpg", 65535, 1, 3}, {"h.jpg", 1, 65535, 1},
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
    t->st = sp_stb_put_failing(t->img, f, t->fmt, 0, -1, why, t->fail_at,
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
 * failed growth of its PNG buffers), and nothing leaked (the sanitizer
 * build's leak check).  For 8- and 16-bit samples, gray and colour. */
START_TEST(test_encoder_alloc_failure)
{
    static const enum sp_outfmt fmts[] = {SP_OUT_PNG, SP_OUT_JPEG,
                                          SP_OUT_BMP, SP_OUT_TGA};
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
            if (fmts[f] == SP_OUT_PNG)
                ck_assert_uint_gt(whole.allocs, 3);
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

/* A failure in one thread's encode leaves another's, at the same time,
 * whole: each encode has its own arena. */
START_TEST(test_encoder_alloc_failure_threads)
{
    struct sp_image img;
    struct put_try t[8];
    pthread_t tid[8];

    fx_make_image(&img, 120, 90, 3, 1, 255, 9);
    for (int i = 0; i < 8; i++) {
        t[i] = (struct put_try){&img, SP_OUT_PNG, i % 2 ? 50 + i : 0, 0, 0,
                                0, {0}};
        ck_assert_int_eq(pthread_create(&tid[i], NULL, put_try, &t[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        ck_assert_int_eq(pthread_join(tid[i], NULL), 0);
        if (i % 2) {
            ck_assert_int_eq(t[i].st, ENOMEM);
            ck_assert_int_eq(t[i].written, 0);
        } else {
            ck_assert_int_eq(t[i].st, SP_OK);
            ck_assert_int_eq(t[i].written, t[0].written);
            ck_assert_mem_eq(t[i].first, "\x89PNG\r\n\x1a\n", 8);
        }
    }
    sp_image_release(&img);
}
END_TEST

static Suite *write_suite(void)
{
    Suite *s = suite_create("write");
    TCase *tc = fx_tcase("formats");

    tcase_add_test(tc, test_outfmt_for);
    tcase_add_test(tc, test_pnm_exact);
    tcase_add_test(tc, test_pnm_round_trip);
    tcase_add_test(tc, test_stb_formats);
    tcase_add_test(tc, test_jpeg_flat);
    tcase_add_test(tc, test_stdout);
    suite_add_tcase(s, tc);

    tc = fx_tcase("files");
    tcase_add_test(tc, test_dev_full);
    tcase_add_test(tc, test_missing_dir);
    tcase_add_test(tc, test_readonly_dir);
    tcase_add_test(tc, test_failure_keeps_target);
    tcase_add_test(tc, test_replace_keeps_mode);
    tcase_add_test(tc, test_new_file_mode);
    tcase_add_test(tc, test_symlink);
    tcase_add_test(tc, test_dangling_symlink);
    tcase_add_test(tc, test_directory_target);
    tcase_add_test(tc, test_fifo_target);
    tcase_add_test(tc, test_relative_path);
    tcase_add_test(tc, test_long_name);
    tcase_add_test(tc, test_output_bands);
    tcase_add_test(tc, test_output_repeated);
    tcase_add_test(tc, test_output_whole_and_stdout);
    tcase_add_test(tc, test_output_close_error);
    tcase_add_test(tc, test_output_open_fails);
    suite_add_tcase(s, tc);

    tc = fx_tcase("limits");
    tcase_add_test(tc, test_outfmt_fits);
    tcase_add_test(tc, test_too_large_refused);
    tcase_add_test(tc, test_at_the_limit);
    tcase_add_test(tc, test_encoder_alloc_failure);
    tcase_add_test(tc, test_encoder_alloc_failure_threads);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(write_suite());
}
