/* write.h: write an image as PNM (libnetpbm's header, our raster:
 * write_pnm.c), PNG (libpng: write_png.c), JPEG (libjpeg-turbo:
 * write_jpeg.c), or BMP or TGA (stb_image_write, which enters scaleppm in
 * write_stb.c).
 *
 * A file appears whole or not at all (outfile.h): a failure leaves no
 * partial output and an existing target untouched, and the output may be
 * the input. */
#ifndef SP_WRITE_H
#define SP_WRITE_H

#include <sys/uio.h>

#include "convert.h"
#include "header.h"
#include "image.h"
#include "meta.h"
#include "outfmt.h"
#include "status.h"
#include "target.h"

/* An output being written, from sp_output_open() to sp_output_close().
 * A PNM's, a PNG's and a JPEG's rows go out as they come, so an image can
 * be streamed band by band; BMP and TGA (stb) take the whole image in one
 * sp_output_put(). */
struct sp_output {
    struct sp_target_file to;  /* TO.F: what the encoders write to */
    enum sp_outfmt fmt;
    enum sp_want want;       /* the type written (convert.h) */
    struct sp_image type;    /* what is written: the image's type, or the
                                one WANT asks for */
    unsigned char *conv;     /* rows converted to TYPE, CONV_LEN bytes */
    size_t conv_len;
    int quality;             /* JPEG's, 1..100; 0: SP_JPEG_QUALITY (90) */
    int compression;         /* PNG's zlib level, 0..9; -1: SP_PNG_LEVEL
                                (6) */
    int subsample;           /* JPEG's chroma subsampling, 444, 422 or
                                420; 0: SP_JPEG_SUBSAMPLE (420) */
    unsigned long background;  /* 0xRRGGBB under a transparent pixel
                                  where the output holds no alpha (JPEG,
                                  PGM, PPM): convert.h; SP_BACKGROUND
                                  (white) unless set after the open */
    const struct sp_stream_ops *stream;  /* PNG, JPEG: the encoder the
                                            rows go to; else NULL */
    void *enc;               /* its state, from the first rows on */
    size_t rows;             /* the rows it has taken */
    int broken;              /* it failed: it takes no more rows */
    int splice;              /* standard output is a pipe: rows handed
                                with pages may go by vmsplice() */
    unsigned long adler;     /* a segmented PNG's: the Adler-32 of the
                                rows' filtered bytes so far */
    struct sp_meta meta;     /* what a PNG or JPEG carries (meta.h: the
                                profile as it is, an EXIF block of the
                                orientation alone); the others nothing.
                                The output's own: set after the open, before
                                the first put (sp_meta_copy), freed at the
                                close */
};

/* sp_output_open: start writing an image laid out as LAYOUT (its width,
 * height and type; not its pixels) to T (target.h: a path as
 * sp_outfile_open() opens it), as FMT.  For PNM, WANT is the type written
 * (SP_WANT_KEEP: LAYOUT's own; PAM, PBM, PGM, PPM those types: what a
 * name's .pam, .pbm, .pgm, .ppm ask for), made from LAYOUT's (convert.h);
 * the rows put are converted as they go; the other formats ignore it.
 * For PNM the header is written here, for PNG and JPEG with the first
 * rows put; for the other formats the type must pass sp_outfmt_fits()
 * first.  QUALITY, COMPRESSION and SUBSAMPLE may be set once it is open,
 * before the first put.  NOWAIT is sp_outfile_open()'s: no target that is
 * not a regular file.  T is copied (a memory target's DATA and LEN, a
 * callback's ARG, must outlive O).  WHY (SP_WHY_MAX) may get a
 * detail.  Returns 0, or an errno value (EACCES, EISDIR, EINVAL for a
 * target with nothing to write to, ...), SP_E_OUTFORMAT (FMT or WANT is
 * none of these), SP_E_REFUSED, SP_E_CONVERT,
 * SP_E_TOOBIG, SP_E_BADHEADER, sp_outfmt_fits()'s status, or a callback's
 * status; on failure nothing is left open or created. */
sp_status sp_output_open(struct sp_output *o, const struct sp_target *t,
                         enum sp_outfmt fmt, enum sp_want want,
                         const struct sp_image *layout, int nowait,
                         char *why);

/* sp_output_next: for a PNM output, begin the next image of a
 * multi-image stream, laid out as LAYOUT: its header, in the type the
 * output was opened to write.  The other formats hold one image: SP_E_ENCODE,
 * WHY saying so.  Returns 0, SP_E_CONVERT, SP_E_BADHEADER, SP_E_TOOBIG
 * or an errno value. */
sp_status sp_output_next(struct sp_output *o, const struct sp_image *layout,
                         char *why);

/* sp_output_put: write IMG (of LAYOUT's type): for PNM, PNG and JPEG,
 * the next IMG->height rows of the image (PNG and JPEG: refused with
 * SP_E_ENCODE if IMG's width is not the image's, or its rows go past the
 * image's last); for BMP and TGA, the whole image.  Samples are rescaled
 * where the format holds other depths (encode.h, each encoder: 8 bits for
 * JPEG, BMP and TGA; 8 or 16 for PNG), rounded.  Returns 0, an errno value
 * (ENOSPC for /dev/full, ...), SP_E_TOOBIG or SP_E_ENCODE. */
sp_status sp_output_put(struct sp_output *o, const struct sp_image *img,
                        char *why);

/* sp_output_put_repeated: for a PNM, PNG or JPEG output, the next
 * IMG->height * TIMES rows of the image: each of IMG's rows TIMES times
 * (an enlarge's equal rows, made once and copied only by the kernel as it
 * writes them, or handed to the encoder TIMES times).
 * PAGES, when not NULL, are the whole pages of private anonymous memory
 * IMG's rows lie in, which the caller lets go: an output that splices
 * (O->splice) hands them to its pipe without a copy and maps fresh zero
 * pages in their place, so the memory stays the caller's but not what it
 * held.  Returns 0, an errno value, or (PNG, JPEG) SP_E_ENCODE with a
 * detail in WHY (SP_WHY_MAX). */
sp_status sp_output_put_repeated(struct sp_output *o,
                                 const struct sp_image *img, unsigned times,
                                 const struct iovec *pages, char *why);

/* A PNG's rows may instead be encoded in segments (write_png_seg.c),
 * each on the thread that scaled it, side by side, and written in order:
 * the bytes are the same however many threads there are.
 *
 * sp_output_segmented: whether O takes segments (a PNG); if so,
 * *LOOKBACK is how many output rows just above a segment its encode
 * reads as well (for the filter of its first row and the dictionary). */
int sp_output_segmented(const struct sp_output *o, size_t *lookback);

struct sp_segment;
struct sp_deflater;

/* sp_segment_encode: output rows [Y0, Y0 + ROWS->height * TIMES) of O,
 * each of ROWS's rows TIMES times (of the layout's type, as put takes
 * them), filtered and deflated by *DEF (a thread's: made at the first
 * call, kept for the next; sp_deflater_free frees it) into *SEG (the
 * same: sp_segment_free); BEFORE holds the output rows just above Y0, as
 * many as *LOOKBACK or Y0 if fewer, each once.  Reads O only: safe on
 * several threads at once, each with its own deflater and segment.
 * Returns 0 or ENOMEM. */
sp_status sp_segment_encode(const struct sp_output *o,
                            struct sp_deflater **def,
                            struct sp_segment **seg,
                            const struct sp_image *rows, unsigned times,
                            size_t y0, const struct sp_image *before);

/* sp_output_put_segment: SEG, the next rows of O's image, written (the
 * PNG's header before the first, its end after the last).  Returns 0, an
 * errno value, or SP_E_ENCODE (rows out of order) with WHY. */
sp_status sp_output_put_segment(struct sp_output *o,
                                const struct sp_segment *seg, char *why);

/* sp_segment_free, sp_deflater_free: free SEG, DEF (NULL is safe). */
void sp_segment_free(struct sp_segment *seg);
void sp_deflater_free(struct sp_deflater *def);

/* sp_output_close: finish the output.  With ST 0 it is flushed and put in
 * place (a path: sp_outfile_commit; memory: the buffer handed to the
 * caller; a PNG or JPEG not given all its rows, or whose encoder failed,
 * is SP_E_ENCODE instead); with any other ST, or when that fails, nothing
 * of it is left and the target is as it was (an output written in place,
 * a descriptor or a callback keep what they got; memory gets nothing).
 * Returns 0, or the status of the failure: a callback's once it failed
 * (whatever ST says: what failed after it failed with it), else ST if
 * non-zero, else the errno value of what failed here. */
sp_status sp_output_close(struct sp_output *o, sp_status st);


/* sp_output_whole: whether PATH holds a whole output of format FMT, as
 * scaleppm writes them, for --skip-existing: binary PNM images that end
 * exactly at the file's end; a PNG that ends in its IEND chunk; a JPEG
 * from its SOI to its EOI marker; a BMP as long as its header says; a
 * TGA whose pixels are all there.  A new output is not fsynced (a
 * replacement is: outfile.h), so after a crash its name can be on an
 * empty or short file; this is what tells it from a whole one.  Returns
 * 1, or 0 for a short, empty or unreadable file. */
int sp_output_whole(const char *path, enum sp_outfmt fmt);

#endif
