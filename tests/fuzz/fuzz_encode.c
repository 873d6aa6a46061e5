/* fuzz_encode: the limits of the output formats (sp_outfmt_fits) and the
 * write paths: stb's for BMP and TGA, libpng's and libjpeg's.
 *
 * The input is not an image: its bytes pick an output format (PNM, PNG,
 * JPEG, BMP, TGA), a channel count (1 or 3 mostly; 2, 4 and the invalid
 * 0 and 5 too) and a width and height anywhere in size_t, most of them
 * near a limit: either side from a list of sizes that matter to some
 * format, or found here by a binary search for the largest accepted one,
 * then moved by a few pixels (see pick).  For each, the harness works
 * out on its own every int expression that stb_image_write 1.16 computes
 * for a BMP or TGA, in 128 bits, as stb writes it (below), the fields of
 * the format that hold a size, and libpng's and libjpeg's limits;
 * sp_outfmt_fits must accept exactly the sizes for which all of them are
 * in range.  A refusal must be
 * SP_E_TOOBIG with "WxH is too large for FMT (", and sp_output_open must
 * refuse the layout too, creating nothing; an accepted layout opens and
 * closes with nothing left behind.  An accepted image of up to
 * ENCODE_MAX pixels is made (samples from the input, 8 or 16 bits) and
 * written by sp_write; the file must be well formed (PNG signature, IHDR
 * and IEND, 8 or 16 bits; BMP and TGA headers and sizes; JPEG SOI, SOF0
 * and EOI, each holding the size) and, but for JPEG, decode (stb_image) to
 * the samples written, rescaled to 8 bits (a PNG above maxval 255: to 16,
 * whose high byte stb_image gives).  SP_FUZZ_VERBOSE=1 prints each case. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stb_image.h>

#include "fuzz.h"
#include "image.h"
#include "../write_whole.h"

/* Accepted images of up to this many pixels are written and read back:
 * 65535x1, the 16-bit limit, among them. */
#define ENCODE_MAX ((size_t)1 << 16)

typedef __int128 i128;

static const char *const names[] = {"PNM", "PNG", "JPEG", "BMP", "TGA"};
static const char *const exts[] = {"pnm", "png", "jpg", "bmp", "tga"};

/* ---- what stb_image_write computes ---------------------------------- */

/* A verdict on one image: whether every expression and field was in
 * range, and the first that was not. */
struct verdict {
    int ok;
    const char *bad;
};

/* in_int: EXPR, an int expression of stb's, has value V. */
static void in_int(struct verdict *v, const char *expr, i128 value)
{
    if (v->ok && (value > INT_MAX || value < INT_MIN)) {
        v->ok = 0;
        v->bad = expr;
    }
}

/* holds: a field of the format (or a rule of stb's) that must be true. */
static void holds(struct verdict *v, const char *field, int cond)
{
    if (v->ok && !cond) {
        v->ok = 0;
        v->bad = field;
    }
}

/* png: libpng's write (png_check_IHDR): a side of 1 to 2^31-1, the
 * format's own limit; its sizes are computed in size_t. */
static void png(struct verdict *v, i128 x, i128 y)
{
    holds(v, "PNG width and height not 0", x >= 1 && y >= 1);
    holds(v, "PNG width: 31 bits", x <= 0x7fffffff);
    holds(v, "PNG height: 31 bits", y <= 0x7fffffff);
}

/* jpeg: libjpeg's compressor: a side of 1 to JPEG_MAX_DIMENSION (65500,
 * a little under SOF0's 16 bits). */
static void jpeg(struct verdict *v, i128 x, i128 y)
{
    holds(v, "JPEG width and height not 0", x >= 1 && y >= 1);
    holds(v, "libjpeg: width up to 65500", x <= 65500);
    holds(v, "libjpeg: height up to 65500", y <= 65500);
}

/* write_pixels: stbiw__write_pixels, as BMP and an uncompressed TGA
 * call it. */
static void write_pixels(struct verdict *v, i128 x, i128 y, i128 n)
{
    in_int(v, "j*x", (y - 1) * x);
    in_int(v, "(j*x+i)*comp", ((y - 1) * x + x - 1) * n);
}

/* bmp: stbi_write_bmp_core(s, x, y, n, data). */
static void bmp(struct verdict *v, i128 x, i128 y, i128 n)
{
    holds(v, "width and height not 0", x >= 1 && y >= 1);
    if (n == 4) {
        in_int(v, "x*y", x * y);
        in_int(v, "x*y*4", x * y * 4);
        in_int(v, "bfSize = 14+108+x*y*4", 14 + 108 + x * y * 4);
    } else {
        i128 pad = (-x * 3) & 3;

        in_int(v, "-x*3", -x * 3);
        in_int(v, "x*3+pad", x * 3 + pad);
        in_int(v, "(x*3+pad)*y", (x * 3 + pad) * y);
        in_int(v, "bfSize = 14+40+(x*3+pad)*y", 14 + 40 + (x * 3 + pad) * y);
    }
    write_pixels(v, x, y, n);
}

/* tga: stbi_write_tga_core(s, x, y, n, data), with run-length coding
 * (stbi_write_tga_with_rle, a global, 1 by default) and without. */
static void tga(struct verdict *v, i128 x, i128 y, i128 n)
{
    holds(v, "width and height not 0", x >= 1 && y >= 1);
    holds(v, "TGA width: 16 bits", x <= 65535);
    holds(v, "TGA height: 16 bits", y <= 65535);
    in_int(v, "j*x", (y - 1) * x);
    in_int(v, "j*x*comp", (y - 1) * x * n);
    in_int(v, "(i+1)*comp, k*comp", (x - 1) * n);
    write_pixels(v, x, y, n);
}

/* stb_verdict: whether FMT's encoder (stb for BMP and TGA, libpng,
 * libjpeg) can write a W x H image of C channels with every expression
 * and field in range. */
static struct verdict stb_verdict(enum sp_outfmt fmt, size_t w, size_t h,
                                  unsigned c)
{
    struct verdict v = {1, NULL};

    if (fmt == SP_OUT_PNM)
        return v;
    in_int(&v, "int x", (i128)w);
    in_int(&v, "int y", (i128)h);
    if (!v.ok)
        return v;  /* and the products below stay far inside 128 bits */
    switch (fmt) {
    case SP_OUT_PNG: png(&v, (i128)w, (i128)h); break;
    case SP_OUT_JPEG: jpeg(&v, (i128)w, (i128)h); break;
    case SP_OUT_BMP: bmp(&v, (i128)w, (i128)h, c); break;
    case SP_OUT_TGA: tga(&v, (i128)w, (i128)h, c); break;
    case SP_OUT_PNM: break;
    }
    return v;
}

static int fits(enum sp_outfmt fmt, size_t w, size_t h, unsigned c)
{
    return stb_verdict(fmt, w, h, c).ok;
}

/* last_fit: the largest side S such that FIXED x S (or S x FIXED, with
 * SWAP) fits, or 0 if even 1 does not; by bisection, as the verdict only
 * gets worse with a longer side. */
static size_t last_fit(enum sp_outfmt fmt, unsigned c, size_t fixed,
                       int swap)
{
    size_t lo = 1, hi = SIZE_MAX;

    if (!(swap ? fits(fmt, 1, fixed, c) : fits(fmt, fixed, 1, c)))
        return 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2 + 1;

        if (swap ? fits(fmt, mid, fixed, c) : fits(fmt, fixed, mid, c))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* last_square: the largest S such that S x S fits. */
static size_t last_square(enum sp_outfmt fmt, unsigned c)
{
    size_t lo = 1, hi = (size_t)1 << 32;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2 + 1;

        if (fits(fmt, mid, mid, c))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* ---- what the input asks for ------------------------------------------ */

/* The input, read a few bytes at a time; zeros once it runs out. */
struct bytes {
    const uint8_t *p;
    size_t n;
};

static uint64_t take(struct bytes *b, unsigned k)
{
    uint64_t v = 0;

    for (unsigned i = 0; i < k; i++) {
        v = v << 8 | (b->n > 0 ? *b->p : 0);
        if (b->n > 0) {
            b->p++;
            b->n--;
        }
    }
    return v;
}

/* nudge: V moved by -4..+3 as the input says, kept in size_t. */
static size_t nudge(struct bytes *b, size_t v)
{
    int d = (int)(take(b, 1) % 8) - 4;

    if (d < 0 && v < (size_t)-d)
        return 0;
    if (d > 0 && v > SIZE_MAX - (size_t)d)
        return SIZE_MAX;
    return v + (size_t)(ptrdiff_t)d;
}

/* A side that matters to some format, for C channels. */
static size_t notable(struct bytes *b, unsigned c)
{
    size_t k = c ? c : 1;
    const size_t sides[] = {
        1, 2, 3, 8, 16, 17, 255, 256, 4096, 21845, 23170, 26754, 65500,
        65501, 65535, 65536, (INT_MAX / 128) / k, 715827864, INT_MAX / k,
        (size_t)INT_MAX / 3 + 1, INT_MAX, (size_t)INT_MAX + 1, UINT32_MAX,
        (size_t)1 << 32, SIZE_MAX / k, SIZE_MAX,
    };

    return nudge(b, sides[take(b, 1) % (sizeof sides / sizeof sides[0])]);
}

/* The case an input stands for. */
struct pick {
    enum sp_outfmt fmt;
    unsigned c;
    size_t w, h;
};

static struct pick pick(struct bytes *b)
{
    static const unsigned channels[8] = {1, 3, 1, 3, 1, 3, 2, 4};
    struct pick p;
    unsigned mode;
    uint64_t r;

    p.fmt = (enum sp_outfmt)(take(b, 1) % 5);
    r = take(b, 1);
    p.c = r == 255 ? 0 : r == 254 ? 5 : channels[r % 8];
    mode = (unsigned)(take(b, 1) % 6);
    switch (mode) {
    case 0:  /* anywhere in size_t, any magnitude */
        r = take(b, 8);
        p.w = (size_t)(r >> take(b, 1) % 64);
        r = take(b, 8);
        p.h = (size_t)(r >> take(b, 1) % 64);
        break;
    case 1:  /* a notable width, the height at its limit */
        p.w = notable(b, p.c);
        p.h = nudge(b, last_fit(p.fmt, p.c, p.w, 0));
        break;
    case 2:  /* a notable height, the width at its limit */
        p.h = notable(b, p.c);
        p.w = nudge(b, last_fit(p.fmt, p.c, p.h, 1));
        break;
    case 3:  /* the largest square, and about it */
        p.w = nudge(b, last_square(p.fmt, p.c));
        p.h = nudge(b, p.w);
        break;
    case 4:  /* up to 2^31 pixels, --max-pixels' default */
        p.w = 1 + (size_t)(take(b, 4) % ((uint64_t)1 << 31));
        p.h = 1 + (size_t)(take(b, 4) % (((size_t)1 << 31) / p.w));
        break;
    default: /* small enough to write */
        p.w = 1 + (size_t)(take(b, 1) % 255);
        p.h = 1 + (size_t)(take(b, 2) % (ENCODE_MAX / p.w));
        break;
    }
    return p;
}

/* ---- the checks ------------------------------------------------------- */

static const char *outdir;  /* sp_fuzz_outdir() */

static int outdir_empty(void)
{
    DIR *d = opendir(outdir);
    struct dirent *e;
    int n = 0;

    SP_FUZZ_CHECK(d != NULL);
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n == 0;
}

/* check_fits: sp_outfmt_fits agrees with the verdict, and says why not;
 * sp_output_open refuses what it refuses and opens what it accepts. */
static int check_fits(const struct pick *p, const char *path)
{
    struct verdict v = stb_verdict(p->fmt, p->w, p->h, p->c);
    struct sp_image layout = {.width = p->w, .height = p->h,
                              .channels = p->c, .sample_size = 1, .maxval = 255};
    struct sp_output o;
    char why[SP_WHY_MAX], head[96];
    sp_status st = sp_outfmt_fits(p->fmt, p->w, p->h, p->c, why);

    SP_FUZZ_CHECK(strnlen(why, sizeof why) < sizeof why);
    if (p->fmt != SP_OUT_PNM && (p->c < 1 || p->c > 4)) {
        SP_FUZZ_CHECK(st == SP_E_UNSUPPORTED);
        return 0;
    }
    if (p->fmt != SP_OUT_PNM && (p->w == 0 || p->h == 0)) {
        SP_FUZZ_CHECK(st == SP_E_ENCODE && !v.ok);
        return 0;
    }
    if (getenv("SP_FUZZ_VERBOSE") != NULL)
        fprintf(stderr, "%s %zux%zu, %u channels: %s (%s)\n",
                names[p->fmt], p->w, p->h, p->c, v.ok ? "fits" : v.bad,
                why);
    SP_FUZZ_CHECK(v.ok == (st == SP_OK));
    if (p->fmt == SP_OUT_PNM)
        return 0;  /* PNM's limits are the header writer's */
    if (st != SP_OK) {
        SP_FUZZ_CHECK(st == SP_E_TOOBIG);
        snprintf(head, sizeof head, "%zux%zu is too large for %s (", p->w,
                 p->h, names[p->fmt]);
        SP_FUZZ_CHECK(strncmp(why, head, strlen(head)) == 0);
        SP_FUZZ_CHECK(sp_open_named(&o, path, p->fmt, &layout, 0, why) ==
                      SP_E_TOOBIG);
        SP_FUZZ_CHECK(outdir_empty());
        return 0;
    }
    SP_FUZZ_CHECK(sp_open_named(&o, path, p->fmt, &layout, 0, why) == SP_OK);
    SP_FUZZ_CHECK(sp_output_close(&o, SP_E_ENCODE) == SP_E_ENCODE);
    SP_FUZZ_CHECK(outdir_empty());
    return 1;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           p[3];
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 |
           p[0];
}

static unsigned le16(const unsigned char *p)
{
    return (unsigned)p[1] << 8 | p[0];
}

/* check_png: signature, IHDR with the size, DEPTH bits, the colour type
 * of C channels, then IDAT chunks only, and IEND last. */
static void check_png(const unsigned char *f, size_t len, size_t w,
                      size_t h, unsigned c, unsigned depth)
{
    static const unsigned char ctype[5] = {0, 0, 4, 2, 6};
    size_t at = 33;

    SP_FUZZ_CHECK(len >= 8 + 25 + 12 + 12);
    SP_FUZZ_CHECK(memcmp(f, "\x89PNG\r\n\x1a\n", 8) == 0);
    SP_FUZZ_CHECK(be32(f + 8) == 13 && memcmp(f + 12, "IHDR", 4) == 0);
    SP_FUZZ_CHECK(be32(f + 16) == w && be32(f + 20) == h);
    SP_FUZZ_CHECK(f[24] == depth && f[25] == ctype[c]);
    SP_FUZZ_CHECK(memcmp(f + 37, "IDAT", 4) == 0);
    while (at + 12 <= len - 12 && memcmp(f + at + 4, "IDAT", 4) == 0)
        at += 12 + be32(f + at);
    SP_FUZZ_CHECK(at + 12 == len);
    SP_FUZZ_CHECK(be32(f + len - 12) == 0);
    SP_FUZZ_CHECK(memcmp(f + len - 8, "IEND", 4) == 0);
}

/* check_bmp: the file and info headers, and a file of exactly the size
 * they give: 54 bytes and rows of 3 bytes a pixel padded to 4. */
static void check_bmp(const unsigned char *f, size_t len, size_t w,
                      size_t h)
{
    SP_FUZZ_CHECK(len >= 54 && f[0] == 'B' && f[1] == 'M');
    SP_FUZZ_CHECK(le32(f + 2) == len && le32(f + 10) == 54);
    SP_FUZZ_CHECK(le32(f + 14) == 40);
    SP_FUZZ_CHECK(le32(f + 18) == w && le32(f + 22) == h);
    SP_FUZZ_CHECK(le16(f + 26) == 1 && le16(f + 28) == 24);
    SP_FUZZ_CHECK(len == 54 + ((3 * w + 3) & ~(size_t)3) * h);
}

/* check_tga: true-colour or gray, run-length coded or not, the size, and
 * 8 bits a channel. */
static void check_tga(const unsigned char *f, size_t len, size_t w,
                      size_t h, unsigned c)
{
    SP_FUZZ_CHECK(len >= 18 && f[0] == 0 && f[1] == 0);
    SP_FUZZ_CHECK(f[2] == (c == 3 ? 10 : 11) || f[2] == (c == 3 ? 2 : 3));
    SP_FUZZ_CHECK(le16(f + 12) == w && le16(f + 14) == h);
    SP_FUZZ_CHECK(f[16] == 8 * c);
}

/* check_jpeg: SOI, the segments up to the baseline frame header (SOF0)
 * with the size, and EOI last. */
static void check_jpeg(const unsigned char *f, size_t len, size_t w,
                       size_t h)
{
    size_t at = 2;

    SP_FUZZ_CHECK(len >= 4 && f[0] == 0xff && f[1] == 0xd8);
    SP_FUZZ_CHECK(f[len - 2] == 0xff && f[len - 1] == 0xd9);
    while (at + 4 <= len && f[at] == 0xff && f[at + 1] != 0xc0)
        at += 2 + ((size_t)f[at + 2] << 8 | f[at + 3]);
    SP_FUZZ_CHECK(at + 9 <= len && f[at] == 0xff && f[at + 1] == 0xc0);
    SP_FUZZ_CHECK(((size_t)f[at + 5] << 8 | f[at + 6]) == h);
    SP_FUZZ_CHECK(((size_t)f[at + 7] << 8 | f[at + 8]) == w);
}

/* make_image: a W x H image of C channels, 8 or 16 bits as the input
 * says, its samples (up to maxval) from the input's bytes. */
static void make_image(struct sp_image *img, const struct pick *p,
                       struct bytes *b)
{
    static const unsigned maxvals[4] = {255, 255, 65535, 1000};
    unsigned maxval = maxvals[take(b, 1) % 4], bytes = maxval > 255 ? 2 : 1;
    size_t n = p->w * p->h * p->c;
    uint32_t seed = (uint32_t)take(b, 4);

    SP_FUZZ_CHECK(sp_image_alloc(img, p->w, p->h, p->c, bytes, maxval) ==
                  SP_OK);
    for (size_t i = 0; i < n; i++) {
        unsigned v;

        /* the input's bytes first (runs for RLE and deflate), then a
         * generator */
        seed = seed * 1103515245u + 12345u;
        v = b->n > 0 ? (unsigned)take(b, 1) * 257 : seed >> 8;
        v %= maxval + 1;
        if (bytes == 2) {
            img->pixels[2 * i] = (unsigned char)(v >> 8);
            img->pixels[2 * i + 1] = (unsigned char)v;
        } else {
            img->pixels[i] = (unsigned char)v;
        }
    }
}

/* to8: sample V of maxval M as the 8-bit formats get it (write.h); as a
 * PNG gets it above 255 (16 bits), read back by stb_image (its high
 * byte). */
static unsigned to8(unsigned v, unsigned m, enum sp_outfmt fmt)
{
    unsigned long top = fmt == SP_OUT_PNG && m > 255 ? 65535 : 255;
    unsigned long w = ((unsigned long)v * top + m / 2) / m;

    return top == 65535 ? (unsigned)(w >> 8) : (unsigned)w;
}

/* check_decoded: the file F (LEN bytes) decodes to IMG's samples in 8
 * bits; for JPEG, lossy, to IMG's size. */
static void check_decoded(const unsigned char *f, size_t len,
                          const struct sp_image *img, enum sp_outfmt fmt)
{
    int x, y, comp, c = (int)img->channels;
    unsigned char *px;
    size_t n = img->width * img->height * img->channels;

    if (fmt == SP_OUT_JPEG) {
        SP_FUZZ_CHECK(stbi_info_from_memory(f, (int)len, &x, &y, &comp));
        SP_FUZZ_CHECK((size_t)x == img->width && (size_t)y == img->height);
        return;
    }
    px = stbi_load_from_memory(f, (int)len, &x, &y, &comp, c);
    SP_FUZZ_CHECK(px != NULL);
    SP_FUZZ_CHECK((size_t)x == img->width && (size_t)y == img->height);
    for (size_t i = 0; i < n; i++) {
        const unsigned char *s = img->pixels + i * img->sample_size;
        unsigned v = img->sample_size == 2 ? (unsigned)s[0] << 8 | s[1] : s[0];

        SP_FUZZ_CHECK(px[i] == to8(v, img->maxval, fmt));
    }
    stbi_image_free(px);
}

/* encode: write the image P stands for to PATH through sp_write, and
 * check the file. */
static void encode(const struct pick *p, struct bytes *b, const char *path)
{
    struct sp_image img;
    char why[SP_WHY_MAX];
    unsigned char *f;
    size_t len;
    sp_status st;
    FILE *in;

    make_image(&img, p, b);
    st = sp_write(&img, path, p->fmt, why);
    if (st != SP_OK)
        fprintf(stderr, "sp_write: %s: %s\n", sp_strerror(st), why);
    SP_FUZZ_CHECK(st == SP_OK);
    in = fopen(path, "rb");
    SP_FUZZ_CHECK(in != NULL && fseek(in, 0, SEEK_END) == 0);
    len = (size_t)ftell(in);
    f = malloc(len ? len : 1);
    SP_FUZZ_CHECK(f != NULL && fseek(in, 0, SEEK_SET) == 0);
    SP_FUZZ_CHECK(fread(f, 1, len, in) == len);
    fclose(in);
    SP_FUZZ_CHECK(unlink(path) == 0);
    SP_FUZZ_CHECK(outdir_empty());
    if (getenv("SP_FUZZ_VERBOSE") != NULL)
        fprintf(stderr, "  written: %zu bytes, maxval %u\n", len,
                img.maxval);
    switch (p->fmt) {
    case SP_OUT_PNG:
        check_png(f, len, p->w, p->h, p->c, img.maxval > 255 ? 16 : 8);
        break;
    case SP_OUT_BMP: check_bmp(f, len, p->w, p->h); break;
    case SP_OUT_TGA: check_tga(f, len, p->w, p->h, p->c); break;
    case SP_OUT_JPEG: check_jpeg(f, len, p->w, p->h); break;
    case SP_OUT_PNM: break;
    }
    check_decoded(f, len, &img, p->fmt);
    free(f);
    sp_image_release(&img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct bytes b = {data, size};
    struct pick p = pick(&b);
    char path[128];

    sp_fuzz_init();
    outdir = sp_fuzz_outdir("sp_fuzz_enc");
    snprintf(path, sizeof path, "%s/out.%s", outdir, exts[p.fmt]);
    if (check_fits(&p, path) && (p.c == 1 || p.c == 3) &&
        p.w <= ENCODE_MAX / p.h)
        encode(&p, &b, path);
    return 0;
}
