/* convert.h: the type an output's name asks for, and rows converted to
 * it, as netpbm's one-step converters do: colour to gray as ppmtopgm
 * (byte for byte), gray to colour as pgmtoppm, an alpha channel flattened
 * onto a background as pamcomp composites, a PBM's bits to samples (black 0, white the maxval), and
 * anything to PAM.  What netpbm has no one-step converter for is
 * refused, with the tool to use named. */
#ifndef SP_CONVERT_H
#define SP_CONVERT_H

#include <stddef.h>

#include "image.h"
#include "status.h"

/* The type an output asks for: KEEP the scaled image's own, PAM the same
 * samples as a PAM, PGM, PPM, PBM those types, GRAY8 what an stb format
 * takes (any type of 1 to 4 channels; a PBM as 8-bit gray). */
enum sp_want { SP_WANT_KEEP, SP_WANT_PAM, SP_WANT_PGM, SP_WANT_PPM,
               SP_WANT_PBM, SP_WANT_STB };

/* sp_convert_type: the type WANT makes of an image of type FROM, into TO
 * (its width and height FROM's).  Returns 0, or SP_E_CONVERT with WHY
 * (SP_WHY_MAX) saying what netpbm tool does the conversion. */
sp_status sp_convert_type(const struct sp_image *from, enum sp_want want,
                          struct sp_image *to, char *why);

/* sp_convert_needed: whether rows of type FROM must be converted to be
 * of type TO (their bytes differ). */
int sp_convert_needed(const struct sp_image *from, const struct sp_image *to);

/* The colour under a transparent pixel where an alpha is left out: 8-bit
 * 0xRRGGBB.  White by default, as ImageMagick and GraphicsMagick flatten. */
#define SP_BACKGROUND 0xffffffUL

/* sp_convert_row: WIDTH pixels of type FROM at S as type TO at D (TO from
 * sp_convert_type(FROM)).  An alpha FROM has and TO has not is flattened
 * onto BACKGROUND (0xRRGGBB, each 8-bit part scaled to FROM's maxval):
 * each sample composited over it by its pixel's opacity, as pamcomp
 * composites, rounded; an opaque pixel keeps its samples. */
void sp_convert_row(const struct sp_image *from, const struct sp_image *to,
                    size_t width, const unsigned char *s, unsigned char *d,
                    unsigned long background);

/* sp_over: sample V of opacity A (both 0..MAXVAL) over the background
 * sample BG (0..255, scaled to MAXVAL), rounded. */
unsigned sp_over(unsigned v, unsigned a, unsigned bg, unsigned maxval);

#endif
