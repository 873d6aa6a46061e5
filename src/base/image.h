/* image.h: an image: a view of a raster (pixels, stride, width, height,
 * ...), and who releases that raster: nobody (a view), free(), or its
 * owner (an input's load path: input.h).  How an input holds its raster
 * (a buffer, a mapping, a file) is the input's, never the image's.
 * Release goes by the bookkeeping only; the pixel pointer is never freed
 * or unmapped. */
#ifndef SP_IMAGE_H
#define SP_IMAGE_H

#include <stddef.h>

#include "status.h"

/* The longest PAM tuple type kept, with its terminator (libnetpbm's). */
#define SP_TUPLE_MAX 256

enum sp_backing {
    SP_BACKING_NONE = 0,  /* nothing to release: a view */
    SP_BACKING_MALLOC,    /* base came from malloc: released by free() (or
                             kept: see input_buffer.h) */
    SP_BACKING_OWNED,     /* the raster is an owner's (an input's: the
                             load path's buffer, mapping or file), which
                             RELEASE(OWNER) gives back; base and base_len
                             say what it views, for information */
};

struct sp_image {
    /* bookkeeping */
    enum sp_backing backing;
    void *base;
    size_t base_len;
    sp_status (*release)(void *owner);  /* SP_BACKING_OWNED */
    void *owner;

    /* view: rows of width * channels samples of sample_size bytes each,
     * 16-bit samples big-endian as in the PNM raster.  A loaded input may
     * be mapped PROT_READ: treat its pixels as read-only. */
    unsigned char *pixels;
    size_t width;
    size_t height;
    size_t stride;        /* bytes from one row to the next */
    unsigned channels;    /* samples a pixel: 1 (gray, PBM), 3 (RGB), or a
                             PAM's depth */
    unsigned sample_size; /* bytes a sample: 1 or 2 */
    unsigned maxval;      /* 1..65535 */
    int packed;           /* PBM: a bit a pixel, 1 black, eight to a
                             byte from its high bit, rows padded to a
                             byte; channels 1, sample_size 1, maxval 1 */
    int alpha;            /* the last channel is opacity (a PAM of tuple
                             type GRAYSCALE_ALPHA or RGB_ALPHA) */
    char magic;           /* the PNM type it came as or goes out as:
                             '4' PBM, '5' PGM, '6' PPM, '7' PAM */
    char tuple_type[SP_TUPLE_MAX];  /* PAM's, e.g. "RGB_ALPHA" */
};

/* sp_image_pixel_size: bytes per pixel, channels * sample_size (a packed
 * image's: 0, a pixel is a bit). */
static inline size_t sp_image_pixel_size(const struct sp_image *img)
{
    return img->packed ? 0 : (size_t)img->channels * img->sample_size;
}

/* sp_image_row_bytes: the bytes of a packed row of IMG's layout WIDTH
 * pixels wide (no overflow check: the raster's size was checked). */
static inline size_t sp_image_row_bytes(const struct sp_image *img,
                                        size_t width)
{
    return img->packed ? width / 8 + (width % 8 != 0)
                       : width * img->channels * img->sample_size;
}

/* sp_image_alloc_like: give IMG a fresh malloc'd raster of WIDTH x HEIGHT
 * pixels of LAYOUT's type (channels, sample size, maxval, packed, ...),
 * rows packed.  The sizes are overflow-checked.  On success the caller
 * owns the raster and frees it with sp_image_release().  Returns 0,
 * SP_E_TOOBIG, or ENOMEM; on failure IMG is left empty. */
sp_status sp_image_alloc_like(struct sp_image *img, size_t width,
                              size_t height, const struct sp_image *layout);

/* sp_image_alloc: sp_image_alloc_like() for a PGM (1 channel), PPM (3) or
 * PAM (any other number) of CHANNELS samples of SAMPLE_SIZE bytes. */
sp_status sp_image_alloc(struct sp_image *img, size_t width, size_t height,
                         unsigned channels, unsigned sample_size,
                         unsigned maxval);

/* sp_image_raster_size: the bytes of a raster of WIDTH x HEIGHT pixels of
 * LAYOUT's type, rows packed, in *SIZE.  Returns 0, or SP_E_TOOBIG when
 * it does not fit in size_t. */
sp_status sp_image_raster_size(size_t width, size_t height,
                               const struct sp_image *layout, size_t *size);

/* sp_image_orient: DST (empty) a fresh malloc'd image of SRC's pixels as
 * EXIF ORIENTATION (1 to 8) says a viewer shows them, upright: 2 mirrored
 * left to right, 3 turned 180 degrees, 4 mirrored top to bottom, 5
 * transposed (mirrored about the top-left to bottom-right diagonal), 6
 * turned 90 degrees clockwise, 7 transversed (mirrored about the other
 * diagonal), 8 turned 90 degrees counter-clockwise; 5 to 8 swap the
 * width and the height.  SRC's type, unpacked (not a PBM's bits), is
 * DST's.  Returns 0, ENOMEM, SP_E_TOOBIG, or SP_E_USAGE (a PBM's bits,
 * an ORIENTATION out of range); on failure DST is empty. */
sp_status sp_image_orient(struct sp_image *dst, const struct sp_image *src,
                          unsigned orientation);

/* sp_image_kind: a few words for IMG's type in messages: "PBM", "gray",
 * "color", "PAM RGB_ALPHA". */
const char *sp_image_kind(const struct sp_image *img);

/* sp_image_release: release IMG by its backing (free, or its owner's
 * release) and reset it to empty.  Safe on an empty image and
 * idempotent.  Returns the owner's status (an input's: munmap's error),
 * else 0. */
sp_status sp_image_release(struct sp_image *img);

#endif
