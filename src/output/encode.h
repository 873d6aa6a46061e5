/* encode.h: the encoders behind write.h's sp_output, for write.c only:
 * PNM's raster (write_pnm.c), the streamed PNG and JPEG encoders
 * (write_png.c, libpng; write_jpeg.c, libjpeg-turbo), which take an
 * image's rows as they come, and stb_image_write for BMP and TGA
 * (write_stb.c), which takes the whole image.  Each returns 0, an errno
 * value (ENOMEM, ENOSPC, ...), or SP_E_TOOBIG or SP_E_ENCODE with a detail
 * in WHY (SP_WHY_MAX). */
#ifndef SP_ENCODE_H
#define SP_ENCODE_H

#include <stdio.h>
#include <sys/uio.h>

#include "image.h"
#include "meta.h"
#include "status.h"
#include "outfmt.h"

/* sp_pnm_put_rows: IMG's rows, as a PNM raster, to F; a packed raster
 * goes out in one call, so large rasters bypass stdio's buffer. */
sp_status sp_pnm_put_rows(const struct sp_image *img, FILE *f);

/* sp_pnm_put_repeated: IMG's rows to F, each TIMES times, with writev()
 * on F's descriptor after what stdio holds is flushed.  With PAGES (F a
 * pipe; IMG's rows inside PAGES, whole pages of private anonymous memory)
 * with vmsplice(), and then fresh zero pages are mapped over PAGES: the
 * pipe keeps the old ones, which nothing writes again. */
sp_status sp_pnm_put_repeated(const struct sp_image *img, unsigned times,
                              FILE *f, const struct iovec *pages);

/* The settings of a streamed encode (0 or -1: the default). */
struct sp_encode_opts {
    int quality;      /* JPEG's, 1..100; 0: SP_JPEG_QUALITY */
    int compression;  /* PNG's zlib level, 0..9; -1: SP_PNG_LEVEL */
    int subsample;    /* JPEG's chroma subsampling: 444, 422 or 420; 0:
                         SP_JPEG_SUBSAMPLE */
    const struct sp_meta *meta;  /* what the file carries (write.h's
                                    sp_output.meta); NULL: nothing */
    unsigned long background;    /* 0xRRGGBB an alpha the format has not
                                    is flattened onto (JPEG) */
};

#define SP_JPEG_QUALITY 90
#define SP_JPEG_SUBSAMPLE 420
#define SP_PNG_LEVEL 6

/* A streamed encoder: the image's rows go out as they come, so that its
 * memory is a few rows, whatever the image's size.
 *   begin   start an image laid out as LAYOUT (its width, height and
 *           type: 1 to 4 channels, any maxval; sp_outfmt_fits() has
 *           passed) to F with OPTS, its header written; *STATE holds the
 *           encoder, for end() to free, whatever begin returns.
 *   rows    the next ROWS->height rows, of LAYOUT's type, each TIMES
 *           times; the caller never hands more than LAYOUT's height.
 *   finish  after the last row: the file's end written.
 *   end     free the encoder (safe after any failure, or on NULL).
 * A library's error (its longjmp) is left inside the call that met it:
 * rows() and finish() after a failure are not called.  Safe on several
 * threads at once, each on its own encoder. */
struct sp_stream_ops {
    sp_status (*begin)(FILE *f, const struct sp_image *layout,
                       const struct sp_encode_opts *opts, void **state,
                       char *why);
    sp_status (*rows)(void *state, const struct sp_image *rows,
                      unsigned times, char *why);
    sp_status (*finish)(void *state, char *why);
    void (*end)(void *state);
};

extern const struct sp_stream_ops sp_stream_png, sp_stream_jpeg;

/* sp_png_allowed: the filters (PNG_FILTER_* bits) a PNG of LAYOUT's
 * size at zlib level LEVEL lets its rows take: 0 (none) at level 0;
 * else all five, less those that look up in a one-row image and those
 * that look left in a one-column one. */
unsigned sp_png_allowed(const struct sp_image *layout, int level);

/* sp_png_filter: ROW (N bytes, BPP a pixel) under UP (the row above;
 * zeros above the first) filtered as libpng's heuristic chooses among
 * ALLOWED (0: none), into OUT: the filter's type byte, then N bytes. */
void sp_png_filter(unsigned char *out, const unsigned char *row,
                   const unsigned char *up, size_t n, unsigned bpp,
                   unsigned allowed);

/* sp_samples_rescale: N pixels of SRC, of IN_CH channels of samples of
 * SIZE bytes up to MAXVAL, into DST as the first OUT_CH channels of each
 * pixel (an alpha after them flattened onto BACKGROUND, 0xRRGGBB, by
 * convert.h's sp_over) in samples of OUT_BYTES bytes, 1 (0..255) or 2
 * (0..65535, big-endian), rescaled and rounded. */
void sp_samples_rescale(unsigned char *dst, const unsigned char *src,
                        size_t n, unsigned in_ch, unsigned out_ch,
                        unsigned size, unsigned maxval, unsigned out_bytes,
                        unsigned long background);

/* sp_stb_put: IMG whole, as FMT (BMP or TGA), to F: checked against
 * sp_outfmt_fits() first, samples rescaled to 8 bits where they are not,
 * every write of the encoder checked.  An
 * allocation that fails, the encoder's or this function's, is ENOMEM:
 * the encoder is left and what it held freed (write_stb.c says how).
 * Safe on several threads at once. */
sp_status sp_stb_put(const struct sp_image *img, FILE *f, enum sp_outfmt fmt,
                     char *why);

/* sp_stb_put_failing: sp_stb_put, with the encoder's FAIL_AT-th
 * allocation failing (1: its first; 0: none), and the allocations it asked
 * for in *ALLOCS where ALLOCS is not NULL: for tests of the failure
 * path. */
sp_status sp_stb_put_failing(const struct sp_image *img, FILE *f,
                             enum sp_outfmt fmt, char *why,
                             unsigned long fail_at, unsigned long *allocs);

#endif
