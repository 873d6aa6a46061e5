/* write.h: write an image as PNM (libnetpbm's header, our raster) or as
 * PNG, JPEG, BMP or TGA (stb_image_write, which enters scaleppm here).
 *
 * A file is written to a temporary file in its directory and renamed over
 * the target only when every byte is written, flushed and closed, so a
 * failure leaves no partial output and an existing target untouched, and
 * the output may be the input. */
#ifndef SP_WRITE_H
#define SP_WRITE_H

#include "header.h"
#include "image.h"
#include "status.h"

enum sp_outfmt { SP_OUT_PNM, SP_OUT_PNG, SP_OUT_JPEG, SP_OUT_BMP, SP_OUT_TGA };

/* sp_outfmt_for: the format PATH's extension asks for, case-insensitive:
 * .png, .jpg/.jpeg, .bmp, .tga; .ppm, .pgm, .pnm, no extension and "-" give
 * PNM.  Returns 0, or SP_E_OUTFORMAT for any other extension. */
sp_status sp_outfmt_for(const char *path, enum sp_outfmt *fmt);

/* sp_write: write IMG to PATH ("-" is standard output, PNM only) as FMT.
 * PNM keeps the image's type (P5/P6, 8 or 16 bits); the stb formats take
 * 8-bit samples, so other maxvals are rescaled to 0..255, rounded.  A
 * target that exists and is not a regular file (a device, a FIFO) is
 * written in place; a symbolic link is followed.  WHY (SP_WHY_MAX) may get
 * a detail.  Returns 0, an errno value (ENOSPC for /dev/full, EACCES, ...),
 * SP_E_TOOBIG, SP_E_ENCODE or SP_E_BADHEADER. */
sp_status sp_write(const struct sp_image *img, const char *path,
                   enum sp_outfmt fmt, char *why);

/* sp_write_catch_signals: for a program that writes files with sp_write():
 * ignore SIGPIPE, so that a closed pipe on stdout is an EPIPE error rather
 * than a silent death, and on SIGINT, SIGTERM or SIGHUP remove the
 * temporary file being written, print one line on stderr and exit with
 * status 1.  Returns 0 or an errno value. */
sp_status sp_write_catch_signals(void);

#endif
