/* The output formats' rows (outfmt.h): the extensions that name each, its
 * encoder, the sizes it holds and how a whole file of it is told.
 *
 * The limits: what size each can hold, checked before a file is made, in
 * 128-bit sums so that no size wraps.  PNG and
 * JPEG are written by libpng and libjpeg, which compute in size_t: their
 * limits are the format's own (PNG 2^31-1 pixels a side) and libjpeg's
 * (65500 a side).  BMP and TGA are stb_image_write's, which takes the
 * sizes as int and computes in int: every expression below must stay
 * within INT_MAX, and a field of the format must hold its value.
 *   both  the width and height themselves (int parameters); the offset of
 *         the last pixel, (w*h-1)*c, in an int (TGA's j*x*comp, and
 *         (j*x+i)*comp of the uncompressed TGA and BMP).
 *   TGA   16-bit width and height fields.
 *   BMP   the file size, 54 + (3w padded to 4)*h, in an int (RGBA:
 *         122 + 4wh). */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "outfmt.h"
#include "encode.h"
#include "header.h"

#define PNG_SIDE_MAX 2147483647
#define STB_SIDE_MAX INT_MAX
#define SIDE16_MAX 65535

typedef unsigned __int128 u128;

/* refuse: SP_E_TOOBIG, WHY saying that W x H is too large for FMT and,
 * in brackets, the limit LIMIT formats. */
__attribute__((format(printf, 5, 6)))
static sp_status refuse(char *why, enum sp_outfmt fmt, size_t w, size_t h,
                        const char *limit, ...)
{
    va_list ap;
    size_t n;

    /* Two sizes of at most 20 digits and a name: the start always fits. */
    n = (size_t)snprintf(why, SP_WHY_MAX, "%zux%zu is too large for %s (",
                         w, h, sp_outfmts[fmt].name);
    va_start(ap, limit);
    n += (size_t)vsnprintf(why + n, SP_WHY_MAX - n, limit, ap);
    va_end(ap);
    if (n + 1 < SP_WHY_MAX) {
        why[n] = ')';
        why[n + 1] = '\0';
    }
    return SP_E_TOOBIG;
}

/* pixels_fit: the offset of the last of W x H pixels of C bytes, in an
 * int (TGA, BMP). */
static sp_status pixels_fit(enum sp_outfmt fmt, size_t w, size_t h,
                            unsigned c, char *why)
{
    if (((u128)w * h - 1) * c > INT_MAX)
        return refuse(why, fmt, w, h, "stb_image_write's limit is %lld "
                      "pixels of %u channel%s", (long long)INT_MAX / c + 1,
                      c, c == 1 ? "" : "s");
    return SP_OK;
}

/* side_fits: each side of W x H at most MAX, said in WHO's words. */
static sp_status side_fits(enum sp_outfmt fmt, size_t w, size_t h,
                           size_t max, const char *who, char *why)
{
    if (w > max || h > max)
        return refuse(why, fmt, w, h, "%s%zu pixels a side", who, max);
    return SP_OK;
}

static sp_status png_fits(enum sp_outfmt fmt, size_t w, size_t h,
                          unsigned c, char *why)
{
    (void)c;
    return side_fits(fmt, w, h, PNG_SIDE_MAX, "", why);
}

static sp_status jpeg_fits(enum sp_outfmt fmt, size_t w, size_t h,
                           unsigned c, char *why)
{
    (void)c;
    return side_fits(fmt, w, h, SP_JPEG_SIDE_MAX, "libjpeg takes up to ",
                     why);
}

/* stb_fits: stb_image_write's int parameters; bounded here, every
 * product below stays under 2^64. */
static sp_status stb_fits(enum sp_outfmt fmt, size_t w, size_t h, char *why)
{
    return side_fits(fmt, w, h, STB_SIDE_MAX, "stb_image_write takes up to ",
                     why);
}

static sp_status bmp_fits(enum sp_outfmt fmt, size_t w, size_t h,
                          unsigned c, char *why)
{
    u128 row = ((u128)w * 3 + 3) & ~(u128)3;
    u128 size = c == 4 ? 122 + (u128)w * h * 4 : 54 + row * h;
    sp_status st = stb_fits(fmt, w, h, why);

    if (st != SP_OK)
        return st;
    if (size > INT_MAX)
        return refuse(why, fmt, w, h, "its file would be %llu bytes; "
                      "stb_image_write's limit is %d",
                      (unsigned long long)size, INT_MAX);
    return pixels_fit(fmt, w, h, c, why);
}

static sp_status tga_fits(enum sp_outfmt fmt, size_t w, size_t h,
                          unsigned c, char *why)
{
    sp_status st = stb_fits(fmt, w, h, why);

    if (st == SP_OK)
        st = side_fits(fmt, w, h, SIDE16_MAX, "", why);
    return st == SP_OK ? pixels_fit(fmt, w, h, c, why) : st;
}

sp_status sp_outfmt_fits(enum sp_outfmt fmt, size_t width, size_t height,
                         unsigned channels, char *why)
{
    const struct sp_outfmt_row *row = &sp_outfmts[fmt];

    why[0] = '\0';
    if (row->fits == NULL)
        return SP_OK;
    if (channels < 1 || channels > 4) {
        snprintf(why, SP_WHY_MAX, "%s takes 1 to 4 channels, not %u",
                 row->name, channels);
        return SP_E_UNSUPPORTED;
    }
    if (width == 0 || height == 0) {
        snprintf(why, SP_WHY_MAX, "an empty image (%zux%zu) cannot be "
                 "written as %s", width, height, row->name);
        return SP_E_ENCODE;
    }
    return row->fits(fmt, width, height, channels, why);
}

/* pnm_whole: F (SIZE bytes) is binary PNM images, one after another, the
 * last ending at its end. */
static int pnm_whole(FILE *f, off_t size, const unsigned char *head)
{
    struct sp_header hdr;
    char why[SP_WHY_MAX];
    off_t end = 0;

    (void)head;
    while (end < size) {
        if (fseeko(f, end, SEEK_SET) != 0 ||
            sp_header_parse(f, &hdr, why) != SP_OK || hdr.plain ||
            hdr.raster_bytes > (size_t)(size - hdr.raster_offset))
            return 0;
        end = hdr.raster_offset + (off_t)hdr.raster_bytes;
    }
    return end == size && size > 0;
}

/* tail_is: the last N bytes of F (SIZE bytes) are WANT. */
static int tail_is(FILE *f, off_t size, const void *want, size_t n)
{
    unsigned char b[12];

    return size >= (off_t)n && n <= sizeof b &&
           fseeko(f, size - (off_t)n, SEEK_SET) == 0 &&
           fread(b, 1, n, f) == n && memcmp(b, want, n) == 0;
}

static int png_whole(FILE *f, off_t size, const unsigned char *head)
{
    static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D',
                                           0xae, 0x42, 0x60, 0x82};

    return memcmp(head, "\x89PNG\r\n", 6) == 0 &&
           tail_is(f, size, iend, sizeof iend);
}

static int jpeg_whole(FILE *f, off_t size, const unsigned char *head)
{
    static const unsigned char eoi[2] = {0xff, 0xd9};

    return head[0] == 0xff && head[1] == 0xd8 &&
           tail_is(f, size, eoi, sizeof eoi);
}

static int bmp_whole(FILE *f, off_t size, const unsigned char *head)
{
    (void)f;
    return head[0] == 'B' && head[1] == 'M' &&
           (off_t)((uint32_t)head[2] | (uint32_t)head[3] << 8 |
                   (uint32_t)head[4] << 16 | (uint32_t)head[5] << 24) == size;
}

/* tga_whole: F (SIZE bytes) is a TGA whose pixels are all there: stb
 * writes one with no footer, run-length coded or not, so the packets are
 * walked until they cover width x height pixels. */
static int tga_whole(FILE *f, off_t size, const unsigned char *head)
{
    unsigned char h[18];
    size_t pixels, bpp, got = 0;
    int rle;

    (void)head;
    if (size < 18 || fread(h, 1, 18, f) != 18)
        return 0;
    rle = h[2] >= 9;
    bpp = h[16] / 8u;
    pixels = (size_t)(h[12] | h[13] << 8) * (size_t)(h[14] | h[15] << 8);
    if (bpp == 0 || fseeko(f, 18 + h[0], SEEK_SET) != 0)
        return 0;
    if (!rle)
        return size == 18 + h[0] + (off_t)(pixels * bpp);
    while (got < pixels) {
        int c = getc(f);
        size_t n = c < 0 ? 0 : (size_t)(c & 0x7f) + 1;

        if (c < 0 || fseeko(f, (off_t)((c & 0x80 ? 1 : n) * bpp),
                            SEEK_CUR) != 0)
            return 0;
        got += n;
    }
    return got == pixels && ftello(f) == size;
}

/* pnm_put: IMG's rows as a PNM raster (the header is the output's). */
static sp_status pnm_put(const struct sp_image *img, FILE *f,
                         enum sp_outfmt fmt, char *why)
{
    (void)fmt;
    (void)why;
    return sp_pnm_put_rows(img, f);
}

static const struct sp_outext pnm_exts[] = {
    {"pnm", SP_WANT_KEEP, "image/x-portable-anymap"},
    {"pam", SP_WANT_PAM, "image/x-portable-arbitrarymap"},
    {"pbm", SP_WANT_PBM, "image/x-portable-bitmap"},
    {"pgm", SP_WANT_PGM, "image/x-portable-graymap"},
    {"ppm", SP_WANT_PPM, "image/x-portable-pixmap"},
    {NULL, SP_WANT_KEEP, NULL}};
static const struct sp_outext png_exts[] = {
    {"png", SP_WANT_STB, "image/png"}, {NULL, SP_WANT_KEEP, NULL}};
static const struct sp_outext jpeg_exts[] = {
    {"jpg", SP_WANT_STB, "image/jpeg"}, {"jpeg", SP_WANT_STB, "image/jpeg"},
    {NULL, SP_WANT_KEEP, NULL}};
static const struct sp_outext bmp_exts[] = {
    {"bmp", SP_WANT_STB, "image/bmp"}, {NULL, SP_WANT_KEEP, NULL}};
static const struct sp_outext tga_exts[] = {
    {"tga", SP_WANT_STB, "image/x-tga"}, {NULL, SP_WANT_KEEP, NULL}};

static const char *const png_keys[] = {"compression", NULL};
static const char *const jpeg_keys[] = {"quality", "subsample", NULL};

const struct sp_outfmt_row sp_outfmts[] = {
    [SP_OUT_PNM] = {"PNM", pnm_exts, 1, NULL, pnm_put, NULL, pnm_whole,
                    .netpbm = 1},
    [SP_OUT_PNG] = {"PNG", png_exts, 1, &sp_stream_png, NULL, png_fits,
                    png_whole, png_keys},
    [SP_OUT_JPEG] = {"JPEG", jpeg_exts, 1, &sp_stream_jpeg, NULL, jpeg_fits,
                     jpeg_whole, jpeg_keys},
    [SP_OUT_BMP] = {"BMP", bmp_exts, 0, NULL, sp_stb_put, bmp_fits,
                    bmp_whole},
    [SP_OUT_TGA] = {"TGA", tga_exts, 0, NULL, sp_stb_put, tga_fits,
                    tga_whole},
};
const size_t sp_noutfmts = sizeof sp_outfmts / sizeof *sp_outfmts;

const struct sp_outext *sp_outfmt_ext(const char *ext, enum sp_outfmt *fmt)
{
    for (size_t i = 0; i < sp_noutfmts; i++)
        for (const struct sp_outext *e = sp_outfmts[i].exts; e->ext != NULL;
             e++)
            if (strcasecmp(ext, e->ext) == 0) {
                *fmt = (enum sp_outfmt)i;
                return e;
            }
    return NULL;
}

/* extension: what follows the dot of PATH's last name, or NULL where it
 * has none (or is a dot file's name). */
static const char *extension(const char *path)
{
    const char *base = strrchr(path, '/');
    const char *dot;

    base = base != NULL ? base + 1 : path;
    dot = strrchr(base, '.');
    return dot == NULL || dot == base ? NULL : dot + 1;
}

sp_status sp_outfmt_for(const char *path, enum sp_outfmt *fmt,
                        enum sp_want *want)
{
    const char *ext = extension(path);
    const struct sp_outext *e;

    *fmt = SP_OUT_PNM;  /* no extension, or a dot file, and "-" */
    if (want != NULL)
        *want = SP_WANT_KEEP;
    if (ext == NULL)
        return SP_OK;
    if ((e = sp_outfmt_ext(ext, fmt)) == NULL)
        return SP_E_OUTFORMAT;
    if (want != NULL && sp_outfmts[*fmt].netpbm)
        *want = e->want;
    return SP_OK;
}

void sp_outfmt_known(char *why)
{
    size_t n = (size_t)snprintf(why, SP_WHY_MAX, "the extensions "
                                "written are");

    for (size_t i = 0; i < sp_noutfmts; i++)
        for (const struct sp_outext *e = sp_outfmts[i].exts;
             e->ext != NULL && n < SP_WHY_MAX; e++)
            n += (size_t)snprintf(why + n, SP_WHY_MAX - n, " .%s", e->ext);
    if (n < SP_WHY_MAX)
        snprintf(why + n, SP_WHY_MAX - n, " (none: PNM)");
}

int sp_output_is_streamed(enum sp_outfmt fmt)
{
    return sp_outfmts[fmt].streamed;
}
