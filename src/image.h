/* image.h: an image in memory, and how its memory is backed.
 *
 * The bookkeeping (backing, base, base_len: exactly what was allocated or
 * mapped) is kept apart from the view (pixels, stride, width, height, ...).
 * Release goes by the bookkeeping only; the pixel pointer is never freed or
 * unmapped. */
#ifndef SP_IMAGE_H
#define SP_IMAGE_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "status.h"

struct sp_header;

enum sp_backing {
    SP_BACKING_NONE = 0,  /* nothing to release */
    SP_BACKING_MALLOC,    /* base came from malloc: released by free() */
    SP_BACKING_MMAP,      /* base came from mmap: madvise(DONTNEED) + munmap,
                             and FD closed unless it is -1 */
    SP_BACKING_FILE,      /* no raster in memory: rows are read from FD at
                             OFFSET when wanted (source_pread.c);
                             released by close() */
};

/* A file's identity and last change, from one fstat(): two stamps of the
 * same open file differ once it was written, resized or had its inode
 * changed in between (tar's test of a file that changed as it was read).
 * Times in nanoseconds; a change within the file system's timestamp
 * granularity of the first stamp, that keeps the size, goes unseen. */
struct sp_stamp {
    dev_t dev;
    ino_t ino;
    off_t size;
    long long mtime_ns;
    long long ctime_ns;
};

struct sp_image {
    /* bookkeeping */
    enum sp_backing backing;
    void *base;
    size_t base_len;
    size_t dropped;       /* bytes at base given back (source_mmap.c) */
    int fd;               /* SP_BACKING_FILE and _MMAP: the open file, kept
                             so that sp_image_check() can fstat it */
    struct sp_stamp stamp;  /* _FILE and _MMAP: the file when loaded */
    long long offset;     /* SP_BACKING_FILE: where its raster starts */

    /* view: rows of width * channels samples of sample_size bytes each,
     * 16-bit samples big-endian as in the PNM raster.  A loaded input may
     * be mapped PROT_READ: treat its pixels as read-only. */
    unsigned char *pixels;
    size_t width;
    size_t height;
    size_t stride;        /* bytes from one row to the next */
    unsigned channels;    /* 1 (gray) or 3 (RGB) */
    unsigned sample_size; /* bytes a sample: 1 or 2 */
    unsigned maxval;      /* 1..65535 */
};

/* sp_image_pixel_size: bytes per pixel, channels * sample_size. */
static inline size_t sp_image_pixel_size(const struct sp_image *img)
{
    return (size_t)img->channels * img->sample_size;
}

/* sp_image_alloc: give IMG a fresh malloc'd raster of WIDTH x HEIGHT pixels
 * of the given layout, rows packed (stride = width * channels * sample_size).
 * The sizes are overflow-checked.  On success the caller owns the raster
 * and frees it with sp_image_release().  Returns 0, SP_E_TOOBIG, or ENOMEM;
 * on failure IMG is left empty. */
sp_status sp_image_alloc(struct sp_image *img, size_t width, size_t height,
                         unsigned channels, unsigned sample_size,
                         unsigned maxval);

/* sp_image_raster_size: the bytes of a packed raster of the given layout in
 * *SIZE.  Returns 0, or SP_E_TOOBIG when it does not fit in size_t. */
sp_status sp_image_raster_size(size_t width, size_t height, unsigned channels,
                               unsigned sample_size, size_t *size);

/* sp_stamp_of: the stamp of the file SB describes, into *STAMP. */
void sp_stamp_of(const struct stat *sb, struct sp_stamp *stamp);

/* sp_stamp_check: fstat FD (through the sys seam) and compare it with
 * WAS.  Returns 0 when they match, SP_E_CHANGED when not, or fstat's
 * errno value. */
sp_status sp_stamp_check(int fd, const struct sp_stamp *was);

/* sp_image_check: whether the file that a mapped or file-backed IMG reads
 * is still as it was when loaded (sp_stamp_check); call it after the last
 * read of IMG and before its output is committed.  An image in memory
 * was checked when it was read: 0.  Returns 0, SP_E_CHANGED or an errno
 * value. */
sp_status sp_image_check(const struct sp_image *img);

/* sp_image_adopt: make IMG own BASE (BASE_LEN bytes, released by its
 * BACKING) and view the raster at RASTER inside it, laid out as HDR says. */
void sp_image_adopt(struct sp_image *img, enum sp_backing backing, void *base,
                    size_t base_len, const struct sp_header *hdr,
                    unsigned char *raster);

/* sp_image_release: release IMG by its backing (free, madvise+munmap of
 * exactly base/base_len and close, or close) and reset it to empty.  Safe
 * on an empty image and idempotent.  An madvise failure is ignored (it is
 * advice); returns the munmap error if there is one, else 0. */
sp_status sp_image_release(struct sp_image *img);

#endif
