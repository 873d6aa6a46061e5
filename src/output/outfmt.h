/* outfmt.h: the output formats, how a name picks one and what sizes each
 * can hold: what write.h's output and the encoders (encode.h) both speak.
 * sp_outfmt_for and sp_outfmt_known are write.c's, sp_outfmt_fits
 * outfmt.c's. */
#ifndef SP_OUTFMT_H
#define SP_OUTFMT_H

#include <stddef.h>

#include "convert.h"
#include "status.h"

enum sp_outfmt { SP_OUT_PNM, SP_OUT_PNG, SP_OUT_JPEG, SP_OUT_BMP, SP_OUT_TGA };

/* sp_outfmt_for: the format PATH's extension asks for, case-insensitive:
 * .png, .jpg/.jpeg, .bmp, .tga; .pbm, .pgm, .ppm, .pam, .pnm, no extension
 * and "-" give PNM (the netpbm family: the name picks its type too, into
 * *WANT unless NULL: SP_WANT_PBM, PGM, PPM, PAM, or KEEP for .pnm, none,
 * and every other format).  Only a front end that names its outputs (the
 * command line, the batch) asks this: a job is given its format.
 * Returns 0, or SP_E_OUTFORMAT for any other extension. */
sp_status sp_outfmt_for(const char *path, enum sp_outfmt *fmt,
                        enum sp_want *want);

/* sp_outfmt_known: into WHY (SP_WHY_MAX), the extensions sp_outfmt_for
 * knows, for a message that follows SP_E_OUTFORMAT's. */
void sp_outfmt_known(char *why);

/* SP_JPEG_SIDE_MAX: the most pixels a side libjpeg writes
 * (JPEG_MAX_DIMENSION: a little under the format's 16-bit fields). */
#define SP_JPEG_SIDE_MAX 65500

/* sp_outfmt_fits: whether a WIDTH x HEIGHT image of CHANNELS channels
 * can be written as FMT.  A PNG holds 2^31-1 pixels a side, libjpeg
 * writes SP_JPEG_SIDE_MAX; stb_image_write (BMP, TGA) takes the sizes as
 * int and computes sizes and offsets in int (the limits are in
 * outfmt.c), TGA holds each side in 16 bits and BMP its file size in 32;
 * the sums here are made in 128 bits, so no size wraps.  PNM has no such
 * limit (its header's own is sp_header_write's).  Returns 0;
 * SP_E_TOOBIG, with WHY (SP_WHY_MAX) saying "WxH is too large for FMT"
 * and the limit; SP_E_ENCODE for an empty image (no side may be 0 in the
 * stb formats), or SP_E_UNSUPPORTED for CHANNELS outside 1..4. */
sp_status sp_outfmt_fits(enum sp_outfmt fmt, size_t width, size_t height,
                         unsigned channels, char *why);

#endif
