/* The stb encoder: PNG, JPEG, BMP and TGA through stb_image_write, which
 * enters scaleppm here and nowhere else; and the limits of its int
 * arithmetic, checked before it is called. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <stb_image_write.h>

#include "encode.h"

/* The limits of the stb formats.  stb_image_write (1.16) takes the sizes
 * as int and computes in int: every expression below must stay within
 * INT_MAX, and a field of the format must hold its value.
 *   all       the width and height themselves (int parameters).
 *   PNG       a row's filter is picked by summing |byte| (up to 128) over
 *             the row in an int: w*c <= INT_MAX / 128.  The filtered rows,
 *             (w*c+1)*h bytes, are deflated into a buffer whose int
 *             capacity grows from 2 to 2m+1, so it holds at most
 *             3*2^29-2 bytes (the next growth overflows); with fixed
 *             Huffman codes a byte takes at most 9 bits, and 2 header
 *             bytes, 10 bits of block header and end code, the padding
 *             and the 4-byte Adler-32 come on top: 6 + ceil((9n+10)/8)
 *             bytes for n filtered bytes.  The int expressions
 *             (x*n+1)*y, data_len+32766 and the chunk sizes stay below.
 *   JPEG, TGA 16-bit width and height fields; the offset of the last
 *             pixel, (w*h-1)*c, in an int (JPEG's base_p + col*comp, TGA's
 *             j*x*comp, and (j*x+i)*comp of the uncompressed TGA and BMP).
 *   BMP       the file size, 54 + (3w padded to 4)*h, in an int (RGBA:
 *             122 + 4wh), and the pixel offset as above. */
#define STB_SIDE_MAX INT_MAX
#define PNG_ROW_MAX (INT_MAX / 128)
#define PNG_ZBUF_MAX (3 * ((uint64_t)1 << 29) - 2)
#define PNG_FILTERED_MAX (((PNG_ZBUF_MAX - 6) * 8 - 10) / 9)
#define SIDE16_MAX 65535

typedef unsigned __int128 u128;

static const char *const outfmt_names[] = {
    [SP_OUT_PNM] = "PNM", [SP_OUT_PNG] = "PNG", [SP_OUT_JPEG] = "JPEG",
    [SP_OUT_BMP] = "BMP", [SP_OUT_TGA] = "TGA",
};

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
                         w, h, outfmt_names[fmt]);
    va_start(ap, limit);
    n += (size_t)vsnprintf(why + n, SP_WHY_MAX - n, limit, ap);
    va_end(ap);
    if (n + 1 < SP_WHY_MAX) {
        why[n] = ')';
        why[n + 1] = '\0';
    }
    return SP_E_TOOBIG;
}

static sp_status png_fits(size_t w, size_t h, unsigned c, char *why)
{
    u128 row = (u128)w * c, filtered = (row + 1) * h;

    if (row > PNG_ROW_MAX)
        return refuse(why, SP_OUT_PNG, w, h, "stb_image_write takes up to "
                      "%d bytes a row; this is %llu", PNG_ROW_MAX,
                      (unsigned long long)row);
    if (filtered > PNG_FILTERED_MAX)
        return refuse(why, SP_OUT_PNG, w, h, "stb_image_write's limit is "
                      "%llu bytes of filtered rows; this is %llu",
                      (unsigned long long)PNG_FILTERED_MAX,
                      (unsigned long long)filtered);
    return SP_OK;
}

/* pixels_fit: the offset of the last of W x H pixels of C bytes, in an
 * int (JPEG, TGA, BMP). */
static sp_status pixels_fit(enum sp_outfmt fmt, size_t w, size_t h,
                            unsigned c, char *why)
{
    if (((u128)w * h - 1) * c > INT_MAX)
        return refuse(why, fmt, w, h, "stb_image_write's limit is %lld "
                      "pixels of %u channel%s", (long long)INT_MAX / c + 1,
                      c, c == 1 ? "" : "s");
    return SP_OK;
}

static sp_status bmp_fits(size_t w, size_t h, unsigned c, char *why)
{
    u128 row = ((u128)w * 3 + 3) & ~(u128)3;
    u128 size = c == 4 ? 122 + (u128)w * h * 4 : 54 + row * h;

    if (size > INT_MAX)
        return refuse(why, SP_OUT_BMP, w, h, "its file would be %llu bytes; "
                      "stb_image_write's limit is %d",
                      (unsigned long long)size, INT_MAX);
    return pixels_fit(SP_OUT_BMP, w, h, c, why);
}

sp_status sp_outfmt_fits(enum sp_outfmt fmt, size_t width, size_t height,
                         unsigned channels, char *why)
{
    const char *name = outfmt_names[fmt];

    why[0] = '\0';
    if (fmt == SP_OUT_PNM)
        return SP_OK;
    if (channels < 1 || channels > 4) {
        snprintf(why, SP_WHY_MAX, "%s takes 1 to 4 channels, not %u", name,
                 channels);
        return SP_E_UNSUPPORTED;
    }
    if (width == 0 || height == 0) {
        snprintf(why, SP_WHY_MAX, "an empty image (%zux%zu) cannot be "
                 "written as %s", width, height, name);
        return SP_E_ENCODE;
    }
    /* Bounded here, every product below stays under 2^64. */
    if (width > STB_SIDE_MAX || height > STB_SIDE_MAX)
        return refuse(why, fmt, width, height, "stb_image_write takes up "
                      "to %d pixels a side", STB_SIDE_MAX);
    switch (fmt) {
    case SP_OUT_PNG:
        return png_fits(width, height, channels, why);
    case SP_OUT_BMP:
        return bmp_fits(width, height, channels, why);
    case SP_OUT_JPEG:
    case SP_OUT_TGA:
        if (width > SIDE16_MAX || height > SIDE16_MAX)
            return refuse(why, fmt, width, height, "%d pixels a side",
                          SIDE16_MAX);
        return pixels_fit(fmt, width, height, channels, why);
    case SP_OUT_PNM:
        break;
    }
    return SP_OK;
}

/* The stb writers report through a callback and do not check their own
 * output: the sink remembers the first failed write. */
struct sink {
    FILE *f;
    int err;
};

static void sink_write(void *ctx, void *data, int size)
{
    struct sink *s = ctx;

    if (s->err == 0 && size > 0 &&
        fwrite(data, 1, (size_t)size, s->f) != (size_t)size)
        s->err = errno ? errno : EIO;
}

/* stb's PNG level is a global, read by each PNG encode: changed only
 * with no encode under way (a batch encodes several images at once). */
static pthread_rwlock_t png_level = PTHREAD_RWLOCK_INITIALIZER;

static int write_png(struct sink *sink, int w, int h, int c,
                     const unsigned char *px, int level)
{
    int ok;

    pthread_rwlock_rdlock(&png_level);
    while (stbi_write_png_compression_level != level) {
        pthread_rwlock_unlock(&png_level);
        pthread_rwlock_wrlock(&png_level);
        stbi_write_png_compression_level = level;
        pthread_rwlock_unlock(&png_level);
        pthread_rwlock_rdlock(&png_level);
    }
    ok = stbi_write_png_to_func(sink_write, sink, w, h, c, px, w * c);
    pthread_rwlock_unlock(&png_level);
    return ok;
}

/* to_8bit: IMG's samples rescaled to 0..255 in a new malloc'd buffer. */
static unsigned char *to_8bit(const struct sp_image *img)
{
    size_t n = img->width * img->height * img->channels;
    unsigned char *out = malloc(n ? n : 1);
    const unsigned char *s = img->pixels;
    unsigned m = img->maxval;

    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned v = img->sample_size == 2 ? (unsigned)s[0] << 8 | s[1] : s[0];
        unsigned long w = ((unsigned long)v * 255 + m / 2) / m;
        out[i] = (unsigned char)(w > 255 ? 255 : w);
        s += img->sample_size;
    }
    return out;
}

sp_status sp_stb_put(const struct sp_image *img, FILE *f,
                     enum sp_outfmt fmt, int quality, int compression,
                     char *why)
{
    struct sink sink = {f, 0};
    const unsigned char *px = img->pixels;
    unsigned char *conv = NULL;
    int w, h, c = (int)img->channels, ok = 0;
    sp_status st = sp_outfmt_fits(fmt, img->width, img->height,
                                  img->channels, why);

    if (st != SP_OK)
        return st;
    w = (int)img->width;
    h = (int)img->height;
    if (img->sample_size != 1 || img->maxval != 255) {
        conv = to_8bit(img);
        if (conv == NULL)
            return ENOMEM;
        px = conv;
    }
    switch (fmt) {
    case SP_OUT_PNG:
        ok = write_png(&sink, w, h, c, px, compression >= 0 ? compression
                                                            : 8);
        break;
    case SP_OUT_JPEG:
        ok = stbi_write_jpg_to_func(sink_write, &sink, w, h, c, px,
                                    quality > 0 ? quality : 90);
        break;
    case SP_OUT_BMP:
        ok = stbi_write_bmp_to_func(sink_write, &sink, w, h, c, px);
        break;
    case SP_OUT_TGA:
        ok = stbi_write_tga_to_func(sink_write, &sink, w, h, c, px);
        break;
    case SP_OUT_PNM:
        break;
    }
    free(conv);
    if (sink.err != 0)
        return sink.err;
    if (!ok) {
        snprintf(why, SP_WHY_MAX, "stb_image_write failed");
        return SP_E_ENCODE;
    }
    return SP_OK;
}
