/* outfmt.h: the output formats, one row each (sp_outfmts[], outfmts.c):
 * its name, the extensions that ask for it and their media types, its
 * encoder, its size limits and how a whole file of it is told.  What
 * write.h's output, the encoders (encode.h), the command line and the
 * server (its Content-Type) all read. */
#ifndef SP_OUTFMT_H
#define SP_OUTFMT_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "convert.h"
#include "image.h"
#include "status.h"

/* The formats: each the index of its row.  The first, PNM, is the zero a
 * job defaults to; the others are named only by their own encoders'
 * files (write_png_seg.c, write_stb.c) and by tests: what a format is
 * and does, the rest of the code asks its row. */
enum sp_outfmt { SP_OUT_PNM, SP_OUT_PNG, SP_OUT_JPEG, SP_OUT_BMP, SP_OUT_TGA };

/* An extension an output's name may end in (lower case), the type of
 * image it asks for (convert.h) and the media type of such a file. */
struct sp_outext {
    const char *ext;
    enum sp_want want;
    const char *media_type;
};

struct sp_stream_ops;

/* An output format's row. */
struct sp_outfmt_row {
    const char *name;             /* "PNG": in messages */
    const struct sp_outext *exts; /* its extensions, the first its own;
                                     ended by a NULL ext */
    int streamed;                 /* takes the image's rows as they come;
                                     0: the whole image in one put */
    /* stream: the encoder the rows go to (encode.h: PNG, JPEG); NULL: PUT
     * writes them (PNM, whose header the output writes itself: it holds
     * several images) or, not STREAMED, the whole image (BMP, TGA). */
    const struct sp_stream_ops *stream;
    sp_status (*put)(const struct sp_image *img, FILE *f,
                     enum sp_outfmt fmt, char *why);
    /* fits: beyond 1 to 4 channels and no empty side, what sizes it
     * holds (sp_outfmt_fits); NULL: any, and any channels (PNM). */
    sp_status (*fits)(enum sp_outfmt fmt, size_t w, size_t h, unsigned c,
                      char *why);
    /* whole: whether F, SIZE bytes that start with HEAD (6 bytes), is a
     * whole file of it, as scaleppm writes them (sp_output_whole). */
    int (*whole)(FILE *f, off_t size, const unsigned char *head);
    /* keys: the job's keys (params.h) its encoder reads, NULL-ended
     * (JPEG's quality and subsample, PNG's compression): given for a
     * format that lists none of them, refused; NULL: none. */
    const char *const *keys;
    /* netpbm: the netpbm family (PNM): the output writes each image's
     * header itself (sp_header_write), so that a file holds several
     * images and its rows go to a pipe as they are (splice), in the type
     * the job asks for (an extension's WANT: .pgm, .pam ...); 0: one
     * image, which its encoder takes in a type of its own (SP_WANT_STB). */
    int netpbm;
};

/* The rows, by enum sp_outfmt. */
extern const struct sp_outfmt_row sp_outfmts[];
extern const size_t sp_noutfmts;

/* sp_outfmt_ext: the row's extension entry that EXT is, case-insensitive,
 * its format in *FMT; NULL when no format has it. */
const struct sp_outext *sp_outfmt_ext(const char *ext, enum sp_outfmt *fmt);

/* sp_output_is_streamed: whether FMT takes the image's rows as they come
 * (PNM, PNG, JPEG), or the whole image in one put (BMP, TGA). */
int sp_output_is_streamed(enum sp_outfmt fmt);

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
 * knows (every row's), for a message that follows SP_E_OUTFORMAT's. */
void sp_outfmt_known(char *why);

/* SP_JPEG_SIDE_MAX: the most pixels a side libjpeg writes
 * (JPEG_MAX_DIMENSION: a little under the format's 16-bit fields). */
#define SP_JPEG_SIDE_MAX 65500

/* sp_outfmt_fits: whether a WIDTH x HEIGHT image of CHANNELS channels
 * can be written as FMT (its row's fits).  A PNG holds 2^31-1 pixels a
 * side, libjpeg writes SP_JPEG_SIDE_MAX; stb_image_write (BMP, TGA) takes the sizes as
 * int and computes sizes and offsets in int (the limits are in
 * outfmts.c), TGA holds each side in 16 bits and BMP its file size in 32;
 * the sums here are made in 128 bits, so no size wraps.  PNM has no such
 * limit (its header's own is sp_header_write's).  Returns 0;
 * SP_E_TOOBIG, with WHY (SP_WHY_MAX) saying "WxH is too large for FMT"
 * and the limit; SP_E_ENCODE for an empty image (no side may be 0 in the
 * stb formats), or SP_E_UNSUPPORTED for CHANNELS outside 1..4. */
sp_status sp_outfmt_fits(enum sp_outfmt fmt, size_t width, size_t height,
                         unsigned channels, char *why);

#endif
