/* meta.h: an image's metadata, beside its pixels: the ICC profile and the
 * EXIF block its decoder read (decode_jpeg.c: APP2 and APP1 markers;
 * decode_png.c: iCCP and eXIf chunks), with the EXIF Orientation tag
 * parsed by libexif, which enters scaleppm here.  Whoever holds the image
 * owns its metadata (the input until its release; an output its own
 * copy, written by the encoders that can hold it: PNG and JPEG).  Here
 * it is carried, not applied: the samples are not rotated or converted.
 *
 * Each part has its bound, past which it is dropped (the image still
 * decoded), as a corrupt one is: metadata never fails an image. */
#ifndef SP_META_H
#define SP_META_H

#include <stddef.h>

#include "status.h"

/* The longest ICC profile kept: the most a JPEG's APP2 markers hold (255
 * markers of 65519 bytes: jpeg_write_icc_profile's limit), so that any
 * output that holds a profile can hold every profile read. */
#define SP_META_ICC_MAX ((size_t)255 * 65519)

/* The longest EXIF block kept: one APP1 marker's, less its "Exif\0\0"
 * header (the EXIF standard puts the block in one marker). */
#define SP_META_EXIF_MAX ((size_t)65533 - 6)

/* The bytes of "Exif\0\0", which start an APP1 marker's EXIF block and
 * not a PNG eXIf chunk's. */
#define SP_META_EXIF_HEAD 6

struct sp_meta {
    unsigned char *icc;     /* the ICC profile, ICC_LEN bytes; NULL: none */
    size_t icc_len;
    unsigned char *exif;    /* the EXIF block as stored, from its TIFF
                               header ("II*\0" or "MM\0*"), EXIF_LEN
                               bytes; NULL: none */
    size_t exif_len;
    unsigned orientation;   /* EXIF Orientation, 1 to 8; 0: none */
};

/* sp_meta_init: M empty (all zero is empty too). */
void sp_meta_init(struct sp_meta *m);

/* sp_meta_free: what M holds freed, M empty. */
void sp_meta_free(struct sp_meta *m);

/* sp_meta_copy: DST (freed first) a copy of SRC, its own.  Returns 0 or
 * ENOMEM (DST then empty). */
sp_status sp_meta_copy(struct sp_meta *dst, const struct sp_meta *src);

/* sp_meta_set_icc: M's profile a copy of the LEN bytes at P, if they are
 * a profile of the samples' colour space (its header's: "GRAY" for
 * CHANNELS 1 or 2, "RGB " for 3 or 4) and at most SP_META_ICC_MAX bytes;
 * else M's profile is left as it was.  Returns 0 or ENOMEM. */
sp_status sp_meta_set_icc(struct sp_meta *m, const unsigned char *p,
                          size_t len, unsigned channels);

/* sp_meta_set_exif: M's EXIF block a copy of the LEN bytes at P (from
 * the TIFF header), its Orientation parsed (libexif), if they are at
 * most SP_META_EXIF_MAX bytes; else M's EXIF is left as it was.  An
 * Orientation that is missing or not a SHORT of 1 to 8 is 0.  Returns 0
 * or ENOMEM. */
sp_status sp_meta_set_exif(struct sp_meta *m, const unsigned char *p,
                           size_t len);

/* sp_meta_exif_block: the EXIF an output carries for M, made by libexif:
 * "Exif\0\0" and a TIFF block whose one tag is M's Orientation, nothing
 * else of the input's EXIF (its GPS position, serials and thumbnail are
 * not copied), into *BLOCK (malloc'd, the caller's to free) and *LEN;
 * *BLOCK NULL when M has no orientation.  An APP1 marker holds it whole,
 * a PNG eXIf chunk from SP_META_EXIF_HEAD on.  Returns 0 or ENOMEM. */
sp_status sp_meta_exif_block(const struct sp_meta *m, unsigned char **block,
                             size_t *len);

#endif
