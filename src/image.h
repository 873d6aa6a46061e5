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

/* The longest PAM tuple type kept, with its terminator (libnetpbm's). */
#define SP_TUPLE_MAX 256

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
 * granularity of the first stamp, that keeps the size, goes unseen.  A
 * change of the link count moves the ctime too, and says nothing of the
 * bytes (the file was renamed over, or linked): then the ctime is not
 * compared, so that a file replaced by rename while it is read is still
 * read, unchanged, through the descriptor held. */
struct sp_stamp {
    dev_t dev;
    ino_t ino;
    off_t size;
    long long mtime_ns;
    long long ctime_ns;
    nlink_t nlink;
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

/* sp_image_type_of: IMG's layout as the header HDR describes it (no
 * raster, no backing). */
void sp_image_type_of(struct sp_image *img, const struct sp_header *hdr);

/* sp_image_kind: a few words for IMG's type in messages: "PBM", "gray",
 * "color", "PAM RGB_ALPHA". */
const char *sp_image_kind(const struct sp_image *img);

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

/* The read path's buffer (load_read.c).  In a batch (batch.h), each
 * thread may keep the buffer of the image it releases and load the next
 * image into it when it is large enough: SP_BUFFER_REUSE.  SP_BUFFER_FRESH
 * has every image malloc a buffer of pages never touched, as the Sun
 * study's one image a process did: glibc's mmap threshold is fixed at its
 * default, so it does not grow to serve a large buffer from the heap
 * after the first is freed.  Set once, before any thread loads. */
enum sp_buffer_policy { SP_BUFFER_FREE, SP_BUFFER_REUSE, SP_BUFFER_FRESH };
void sp_buffer_policy(enum sp_buffer_policy policy);

/* sp_buffer_take: a buffer of N bytes: this thread's kept one if it is
 * large enough, else a new malloc (NULL: no memory). */
void *sp_buffer_take(size_t n);

/* sp_buffer_drop: free the buffer this thread keeps, if it keeps one. */
void sp_buffer_drop(void);

/* sp_image_release: release IMG by its backing (free (or kept: see
 * SP_BUFFER_REUSE), madvise+munmap of
 * exactly base/base_len and close, or close) and reset it to empty.  Safe
 * on an empty image and idempotent.  An madvise failure is ignored (it is
 * advice); returns the munmap error if there is one, else 0. */
sp_status sp_image_release(struct sp_image *img);

#endif
