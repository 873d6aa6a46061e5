/* The output formats' limits (outfmt.h): what size each can hold, checked
 * before a file is made, in 128-bit sums so that no size wraps.  PNG and
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

#include "outfmt.h"

#define PNG_SIDE_MAX 2147483647
#define STB_SIDE_MAX INT_MAX
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

/* side_fits: each side of W x H at most MAX, said in WHO's words. */
static sp_status side_fits(enum sp_outfmt fmt, size_t w, size_t h,
                           size_t max, const char *who, char *why)
{
    if (w > max || h > max)
        return refuse(why, fmt, w, h, "%s%zu pixels a side", who, max);
    return SP_OK;
}

sp_status sp_outfmt_fits(enum sp_outfmt fmt, size_t width, size_t height,
                         unsigned channels, char *why)
{
    const char *name = outfmt_names[fmt];
    sp_status st;

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
    switch (fmt) {
    case SP_OUT_PNG:
        return side_fits(fmt, width, height, PNG_SIDE_MAX, "", why);
    case SP_OUT_JPEG:
        return side_fits(fmt, width, height, SP_JPEG_SIDE_MAX, "libjpeg "
                         "takes up to ", why);
    case SP_OUT_BMP:
    case SP_OUT_TGA:
        /* Bounded here, every product below stays under 2^64. */
        st = side_fits(fmt, width, height, STB_SIDE_MAX,
                       "stb_image_write takes up to ", why);
        if (st == SP_OK && fmt == SP_OUT_TGA)
            st = side_fits(fmt, width, height, SIDE16_MAX, "", why);
        if (st != SP_OK)
            return st;
        return fmt == SP_OUT_BMP ? bmp_fits(width, height, channels, why)
                                 : pixels_fit(fmt, width, height, channels,
                                              why);
    case SP_OUT_PNM:
        break;
    }
    return SP_OK;
}
