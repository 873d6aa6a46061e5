/* header.h: the PNM header parser, and the decoder of the plain formats.
 *
 * libnetpbm enters scaleppm here (and in the PNM writer).  It reports bad
 * input by calling exit() unless a jump buffer is set; these functions set
 * one around every libnetpbm call and turn its message into a status and a
 * text.  libnetpbm's jump buffer is one global: they call it under one
 * lock, on memory only (header.c), from any thread. */
#ifndef SP_HEADER_H
#define SP_HEADER_H

#include <stdio.h>
#include <sys/types.h>

#include "status.h"

struct sp_image;

struct sp_header {
    char magic;           /* '1'..'7': P1-P3 plain, P4-P6 binary, P7 PAM */
    int plain;            /* 1 for P1/P2/P3: the raster is ASCII and
                             decoded */
    size_t width;
    size_t height;
    unsigned channels;    /* 1 for PBM/PGM, 3 for PPM, a PAM's depth */
    unsigned sample_size; /* bytes a sample: 1 when maxval <= 255, else 2 */
    unsigned maxval;      /* 1..65535 (PBM: 1) */
    int packed;           /* PBM: a bit a pixel (image.h) */
    int alpha;            /* a PAM whose tuple type ends in "_ALPHA" */
    char tuple_type[256]; /* PAM's tuple type; for the others netpbm's
                             name of their type ("RGB", ...) */
    off_t start;          /* file offset of the magic number */
    off_t raster_offset;  /* file offset of the first raster byte */
    size_t raster_bytes;  /* the binary raster's bytes (a PBM's packed),
                             and the size of a decoded plain one */
    /* Shrink-on-load: a decoder that can decode its raster shrunk (a
     * JPEG, by its DCT scaling) says the largest denominator it takes in
     * SHRINK_MAX (a power of two; 0 or 1: it cannot); the caller's accept
     * hook (input_types.h) may then set SHRINK to a power of two up to it,
     * and the raster is decoded ceil(WIDTH/SHRINK) x ceil(HEIGHT/SHRINK):
     * the header the image is loaded with says that size.  0 or 1: full
     * size. */
    unsigned shrink_max;
    unsigned shrink;
    /* Orientation: the EXIF Orientation a decoder read with the header
     * (meta.h; 0: none, 1 to 8); the accept hook may set ORIENT to it,
     * and the raster is then turned upright as it is decoded
     * (sp_image_orient): the image loaded is WIDTH x HEIGHT as the header
     * says, swapped for 5 to 8, and its metadata's orientation is 0 (1
     * too clears it: upright already).  ORIENT 0: the raster as stored,
     * the orientation carried. */
    unsigned orientation;
    unsigned orient;
};

/* sp_header_init: give libnetpbm scaleppm's program name and its error and
 * message hooks (pm_init, pm_setusererrormsgfn, pm_setusermessagefn:
 * errors kept per thread for WHY, messages dropped), once for the process.
 * libnetpbm's hooks are its process's, and it has no call that reads them
 * back to restore a host's: so only sp_init() (init.h) calls this, when
 * its program asks, and a host that uses libnetpbm itself gives up its
 * own hooks then.  Until then the functions below refuse every libnetpbm
 * call: SP_E_BADHEADER (or SP_E_BADRASTER) with WHY saying so, nothing
 * printed.  Thread-safe. */
void sp_header_init(void);

/* The most header (its comments too) read before its raster: from a
 * stream, what it may send before a header parses (input_stream.c); from
 * any input, the copy of a PAM header that libnetpbm is given
 * (header.c). */
#define SP_HEADER_MAX (1u << 20)

/* sp_header_parse: parse and validate the PNM or PAM header at the start
 * of F, which must be seekable and positioned at the image's first byte.
 * Checks the magic number, dimensions > 0, a depth > 0, maxval 1..65535,
 * and that raster_bytes fits in size_t; it does not check the
 * file's length (the loader does, before it allocates or maps).  On error,
 * WHY (SP_WHY_MAX bytes) gets a one-line detail, possibly empty.
 * Bad dimensions or maxval come back as SP_E_BADHEADER, with libnetpbm's
 * words in WHY.  Returns 0, SP_E_EMPTY, SP_E_NOTPNM, SP_E_UNSUPPORTED,
 * SP_E_BADHEADER or SP_E_TOOBIG. */
sp_status sp_header_parse(FILE *f, struct sp_header *hdr, char *why);

/* A plain (P1/P2/P3) raster's text, from the raster's first byte: the LEN
 * bytes at BUF (CAP allocated, with malloc) read so far, then what
 * PULL(ARG, BUF, CAP) reads: one read of up to CAP bytes (it need not
 * fill them), the bytes read, 0 at the end of the input, or -1 with errno
 * set.  libnetpbm decodes memory only: PULL is called outside its lock,
 * so a stream that stalls holds its own job and no other.  The text is
 * pulled a chunk (or what a read brings) at a time and decoded a row at a
 * time, from the row's start, tried again with more text when libnetpbm
 * meets the end of what was read: memory holds one row's text and a
 * chunk, and a row's text is read as far as its samples at their
 * longest, a space each, and SP_HEADER_MAX more (white space and
 * comments) at most (SP_E_BADRASTER past it).  After a decode, USED is
 * the text's bytes the raster took (its last sample and the one
 * character libnetpbm reads after it), and BUF holds the LEN bytes read
 * past them (a stream's next image); the caller frees BUF. */
typedef ssize_t sp_pull_fn(void *arg, unsigned char *buf, size_t cap);

struct sp_plain_text {
    sp_pull_fn *pull;
    void *arg;
    unsigned char *buf;
    size_t len, cap;
    int eof;      /* PULL said the end */
    size_t used;
};

/* sp_header_decode_plain: decode the plain raster described by HDR from
 * T into RASTER, hdr->raster_bytes bytes in the binary layout (16-bit
 * samples big-endian, PBM packed).  Returns 0, SP_E_BADRASTER (WHY says
 * where), an errno value of T's PULL, or ENOMEM. */
sp_status sp_header_decode_plain(struct sp_plain_text *t,
                                 const struct sp_header *hdr,
                                 unsigned char *raster, char *why);

/* Where a decoded row goes: row Y's bytes (a row of the binary layout) at
 * the pointer returned, or NULL when there is no memory for it. */
typedef unsigned char *sp_row_fn(void *arg, size_t y);

/* sp_header_decode_plain_rows: as sp_header_decode_plain, each row decoded
 * to where ROW(ARG, y) says when it is reached, so that the memory can
 * follow the rows that arrive.  Returns what sp_header_decode_plain does
 * (ENOMEM too when ROW returns NULL). */
sp_status sp_header_decode_plain_rows(struct sp_plain_text *t,
                                      const struct sp_header *hdr,
                                      sp_row_fn *row, void *arg, char *why);

/* The longest PAM tuple type sp_header_write() writes: libnetpbm reads a
 * "TUPLTYPE " line of up to 255 bytes back. */
#define SP_TUPLE_LINE_MAX 246

/* sp_header_write: write the binary header of LAYOUT (image.h: its width,
 * height and type: P4, P5, P6 by its magic, or P7 with its depth, maxval
 * and tuple type; with no magic, P5 or P6 by its channels, else P7) to
 * F, as libnetpbm's own tools write it.  Returns 0, SP_E_TOOBIG (a
 * dimension over INT_MAX), or SP_E_BADHEADER with WHY set when libnetpbm
 * refuses or the tuple type is longer than SP_TUPLE_LINE_MAX. */
sp_status sp_header_write(FILE *f, const struct sp_image *layout, char *why);

/* sp_image_type_of: IMG's layout (image.h) as the header HDR describes
 * it (no raster, no backing).  Here, not in image.c: the header knows the
 * image, the image does not know the header. */
void sp_image_type_of(struct sp_image *img, const struct sp_header *hdr);

#endif
