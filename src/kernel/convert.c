#include "convert.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sample.h"

static void set_type(struct sp_image *img, char magic, unsigned channels,
                     const char *tuple_type)
{
    img->magic = magic;
    img->channels = channels;
    snprintf(img->tuple_type, sizeof img->tuple_type, "%s", tuple_type);
}

/* What FROM's samples are, whatever its PNM type: 1 (gray) or 3
 * (colour) channels of picture, with or without alpha after them; 0 for
 * a PAM of any other layout. */
static unsigned picture_channels(const struct sp_image *from)
{
    unsigned c = from->channels - (from->alpha ? 1 : 0);

    return c == 1 || c == 3 ? c : 0;
}

/* Unpacked, a PBM's type: 8-bit gray, black 0 and white 255, as pgmtoppm
 * and pamscale read it. */
static void unpack_type(struct sp_image *to, unsigned maxval)
{
    to->packed = 0;
    to->sample_size = 1;
    to->maxval = maxval;
    set_type(to, '5', 1, maxval == 1 ? "BLACKANDWHITE" : "GRAYSCALE");
}

sp_status sp_convert_type(const struct sp_image *from, enum sp_want want,
                          struct sp_image *to, char *why)
{
    unsigned c = picture_channels(from);

    *to = *from;
    switch (want) {
    case SP_WANT_KEEP:
        break;
    case SP_WANT_PAM:
        if (from->packed)
            unpack_type(to, 1);  /* netpbm's PAM of a PBM: 0 black, 1 white */
        to->magic = '7';
        break;
    case SP_WANT_PGM:
    case SP_WANT_PPM:
        if (!from->packed && c == 0) {
            snprintf(why, SP_WHY_MAX, "a PAM of depth %u and tuple type "
                     "\"%.64s\" is neither gray nor colour (pick its "
                     "channels with pamchannel)", from->channels,
                     from->tuple_type);
            return SP_E_CONVERT;
        }
        if (from->packed)
            unpack_type(to, 255);
        to->alpha = 0;
        if (want == SP_WANT_PGM)
            set_type(to, '5', 1, "GRAYSCALE");
        else
            set_type(to, '6', 3, "RGB");
        break;
    case SP_WANT_PBM:
        if (from->packed)
            break;
        if (from->channels == 1 && from->maxval == 1 &&
            strcmp(from->tuple_type, "BLACKANDWHITE") == 0) {
            to->packed = 1;
            set_type(to, '4', 1, "BLACKANDWHITE");
            break;
        }
        snprintf(why, SP_WHY_MAX, "PBM holds black and white only; make "
                 "it with pamthreshold or pamditherbw, then pamtopnm");
        return SP_E_CONVERT;
    case SP_WANT_STB:
        if (from->packed) {
            unpack_type(to, 255);
        } else if (from->channels > 4) {
            snprintf(why, SP_WHY_MAX, "%u channels: PNG, JPEG, BMP and TGA "
                     "take 1 to 4 (pick them with pamchannel)",
                     from->channels);
            return SP_E_CONVERT;
        }
        break;
    }
    to->stride = sp_image_row_bytes(to, to->width);
    return SP_OK;
}

int sp_convert_needed(const struct sp_image *from, const struct sp_image *to)
{
    return from->packed != to->packed || from->channels != to->channels ||
           from->maxval != to->maxval;
}

/* ppmtopgm's luma: for maxval up to 255 its fixed-point tables (77, 150
 * and 29 in 256ths, rounded), above it the coefficients in double,
 * rounded; both give its output byte for byte. */
static unsigned luma(unsigned r, unsigned g, unsigned b, unsigned maxval)
{
    if (maxval <= 255)
        return (77 * r + 150 * g + 29 * b + 128) >> 8;
    return (unsigned)(0.2989 * r + 0.5866 * g + 0.1145 * b + 0.5);
}

/* From a PBM's bits: black 0, white TO's maxval, in TO's channels. */
static void unpack_row(const struct sp_image *to, size_t width,
                       const unsigned char *s, unsigned char *d)
{
    for (size_t x = 0; x < width; x++) {
        unsigned black = sp_bit_get(s, x);
        for (unsigned ch = 0; ch < to->channels; ch++)
            *d++ = (unsigned char)(black ? 0 : to->maxval);
    }
}

/* To a PBM's bits from BLACKANDWHITE samples (0 black, 1 white). */
static void pack_row(size_t width, const unsigned char *s, unsigned char *d)
{
    memset(d, 0, width / 8 + (width % 8 != 0));
    for (size_t x = 0; x < width; x++)
        if (s[x] == 0)
            sp_bit_set(d, x);
}

unsigned sp_over(unsigned v, unsigned a, unsigned bg, unsigned maxval)
{
    const uint64_t m = maxval, under = ((uint64_t)bg * m + 127) / 255;

    return (unsigned)(((uint64_t)v * a + under * (m - a) + m / 2) / m);
}

/* picture: FROM's channel CH (of its picture's: gray reads channel 0) of
 * the pixel at S, flattened onto the background's 8-bit part BG where
 * FROM has an alpha (its last channel). */
static unsigned picture(const struct sp_image *from, unsigned c,
                        const unsigned char *s, unsigned ch, unsigned bg)
{
    const unsigned b = from->sample_size;
    unsigned v = sp_sample_get(s + (c == 1 ? 0 : ch * b), b);

    if (!from->alpha)
        return v;
    return sp_over(v, sp_sample_get(s + (size_t)c * b, b), bg,
                   from->maxval);
}

void sp_convert_row(const struct sp_image *from, const struct sp_image *to,
                    size_t width, const unsigned char *s, unsigned char *d,
                    unsigned long background)
{
    const unsigned b = from->sample_size, c = picture_channels(from);
    const size_t px = (size_t)from->channels * b;
    const unsigned bg[3] = {(unsigned)(background >> 16) & 255,
                            (unsigned)(background >> 8) & 255,
                            (unsigned)background & 255};
    /* a gray picture's background: the colour's gray, as ppmtopgm */
    const unsigned bg_gray = luma(bg[0], bg[1], bg[2], 255);

    if (!sp_convert_needed(from, to)) {
        memcpy(d, s, sp_image_row_bytes(to, width));
    } else if (from->packed) {
        unpack_row(to, width, s, d);
    } else if (to->packed) {
        pack_row(width, s, d);
    } else if (to->channels == 1) {  /* gray: from colour, or alpha off */
        for (size_t x = 0; x < width; x++, s += px, d += b)
            sp_sample_put(d, c == 1 ? picture(from, c, s, 0, bg_gray)
                                    : luma(picture(from, c, s, 0, bg[0]),
                                           picture(from, c, s, 1, bg[1]),
                                           picture(from, c, s, 2, bg[2]),
                                           from->maxval), b);
    } else {  /* colour: from gray, or alpha off */
        for (size_t x = 0; x < width; x++, s += px)
            for (unsigned ch = 0; ch < 3; ch++, d += b)
                sp_sample_put(d, picture(from, c, s, ch, bg[ch]), b);
    }
}
