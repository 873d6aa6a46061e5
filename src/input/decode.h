/* decode.h: the registry of the formats read (struct sp_codec), and the
 * decoders of compressed inputs (JPEG by libjpeg-turbo, PNG by libpng),
 * for input.c: a step after the magic is recognised, on the input's bytes
 * wherever a load path holds them (a mapping, a buffer).
 *
 *   sp_decode_sniff()   the codec of the bytes at the input's start
 *   sp_decode_begin()   a decoder on LEN bytes at P (nothing read yet)
 *   sp_decode_header()  the image's header, as a PNM header would say it
 *                       (P5, P6 or P7 with alpha): checked by the caller
 *                       (--max-pixels) before a raster byte is decoded
 *   sp_decode_shrink()  the raster to be decoded shrunk, as the caller
 *                       asked in hdr->shrink (shrink-on-load, header.h)
 *   sp_decode_bound()   whether the input's bytes, all of them, are enough
 *                       for the pixels the header claims: a decompression
 *                       bomb refused before its raster is allocated
 *   sp_decode_raster()  the whole raster, in the binary layout (8-bit
 *                       samples, or 16-bit big-endian from a 16-bit PNG)
 *   sp_decode_meta()    the metadata read with the header (meta.h: the
 *                       ICC profile, the EXIF block and its orientation)
 *   sp_decode_used()    the bytes the image took, up to its end marker
 *   sp_decode_end()     everything the libraries hold given back
 *
 * Header and raster may run under the SIGBUS guard (guard.h): what the
 * libraries allocate hangs off the decoder, which sp_decode_end() frees
 * after a jump out as after a success.  A corrupt or truncated input is
 * one status with the library's words in WHY: SP_E_BADHEADER before the
 * raster, SP_E_BADRASTER in it, SP_E_TRUNCATED when the bytes end early
 * (or are too few for the pixels claimed: sp_decode_bound). */
#ifndef SP_DECODE_H
#define SP_DECODE_H

#include <stddef.h>

#include "header.h"
#include "input_types.h"
#include "meta.h"
#include "status.h"

/* A format scaleppm reads: one row of the registry, sp_codecs[]
 * (decode.c), which every place that tells or names a codec reads:
 * sniffing (input.c, input_stream.c), reports (report.c), the command
 * line's words (main.c) and the server's cost of a job (server.c).  A
 * new codec is one file (decode_<name>.c, its sp_codec_ops: decode_impl.h)
 * and one row; docs/design.md, "Adding a codec", walks through it. */
struct sp_codec {
    const char *name;        /* "JPEG": in messages */
    const char *key;         /* "jpeg": in reports, lower case */
    const char *media_type;  /* "image/jpeg" */
    const char *magic;       /* the bytes an input of it starts with (of
                                PNM, whose magic is one of seven, "P6") */
    size_t magic_len;        /* at most SP_DECODE_MAGIC_LEN */
    /* sniff: whether the N bytes at P start an input of it, where MAGIC
     * as a prefix is not enough; NULL: it is. */
    int (*sniff)(const unsigned char *p, size_t n);
    /* ops: its decoder (decode_impl.h), on the input's bytes in memory;
     * NULL for PNM, whose header libnetpbm parses (header.c) and whose
     * raster the load paths read as it lies in the file. */
    const struct sp_codec_ops *ops;
    int whole;               /* its raster is held whole in memory, decoded
                                (no load path maps or preads it) */
    /* How an input that is none of the rows names it: FAMILY among the
     * formats read, MAGIC_SAID among the magic numbers (NULL: NAME). */
    const char *family, *magic_said;
};

/* The registry: sp_ncodecs rows, PNM first (SP_CODEC_PNM). */
extern const struct sp_codec sp_codecs[];
extern const size_t sp_ncodecs;
#define SP_CODEC_PNM (&sp_codecs[0])

/* The bytes sp_decode_sniff() needs to tell every codec: no row's magic
 * is longer. */
#define SP_DECODE_MAGIC_LEN 8

/* sp_decode_sniff: the codec whose magic the N bytes at P (an input's
 * first) start with, or NULL.  A row with a decoder (ops) is decoded
 * (input_decoded.c); PNM is parsed. */
const struct sp_codec *sp_decode_sniff(const unsigned char *p, size_t n);

/* sp_decode_named: the codec whose key is KEY ("jpeg"), or NULL. */
const struct sp_codec *sp_decode_named(const char *key);

/* sp_decode_starts: whether some codec's magic starts with byte C: what
 * may follow a compressed image as the input's next (sp_input_ends_here,
 * input.h). */
int sp_decode_starts(unsigned char c);

/* sp_decode_unknown: for the N bytes at an input's start (P may be NULL
 * when N is 0) that are no image scaleppm reads (SP_E_NOTPNM), WHY naming
 * their format where its magic number is known (WebP, GIF, TIFF, BMP,
 * HEIF, AVIF, JPEG XL, PDF, ...), else saying which magic numbers it
 * reads (the registry's). */
void sp_decode_unknown(const unsigned char *p, size_t n, char *why);

/* sp_decode_bad: the status of a bad header of CODEC (one with a
 * decoder): SP_E_BADJPEG, SP_E_BADPNG, a status that names the format. */
sp_status sp_decode_bad(const struct sp_codec *codec);

struct sp_decoder;

/* sp_decode_begin: a decoder of CODEC on the LEN bytes at P (which must
 * outlive it) into *DEC.  Returns 0, ENOMEM, or SP_E_NOTPNM for a codec
 * with no decoder (PNM, NULL). */
sp_status sp_decode_begin(const struct sp_codec *codec, const unsigned char *p,
                          size_t len, struct sp_decoder **dec);

/* sp_decode_header: DEC's header into HDR (start and raster_offset 0,
 * raster_bytes the decoded raster's), WHY a detail on failure. */
sp_status sp_decode_header(struct sp_decoder *dec, struct sp_header *hdr,
                           char *why);

/* sp_decode_shrink: DEC's raster to be decoded at 1/hdr->shrink (a
 * power of two up to hdr->shrink_max; 0 or 1: full size, nothing done),
 * HDR's size and raster_bytes then the decoded raster's. */
sp_status sp_decode_shrink(struct sp_decoder *dec, struct sp_header *hdr,
                           char *why);
/* sp_decode_bound: after the header, SP_E_TRUNCATED (WHY saying so) when
 * LEN bytes, the whole input from the image's start, are too few for the
 * pixels the header claims at the codec's best compression; else 0. */
sp_status sp_decode_bound(struct sp_decoder *dec, size_t len, char *why);

/* sp_decode_raster: DEC's raster (after its header) into RASTER,
 * hdr->raster_bytes bytes. */
sp_status sp_decode_raster(struct sp_decoder *dec, unsigned char *raster,
                           char *why);

/* sp_decode_meta: after the header, DEC's metadata moved into META (its
 * old contents freed), the caller's to free (sp_meta_free).  A profile or
 * EXIF block that is corrupt, or longer than its bound (meta.h), is not
 * there: metadata never fails a decode. */
void sp_decode_meta(struct sp_decoder *dec, struct sp_meta *meta);

/* sp_decode_used: after the raster, the bytes from the image's start to
 * just past its end (JPEG's EOI marker, PNG's IEND chunk). */
size_t sp_decode_used(struct sp_decoder *dec);

/* sp_decode_end: DEC given back (NULL: nothing). */
void sp_decode_end(struct sp_decoder *dec);

#endif
