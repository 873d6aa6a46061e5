/* job_types.h: what a job is asked to do (struct sp_job) and its
 * defaults, apart from how it is run (job.h), so that the job's parts
 * (plan.h, work.h) read it without including the job that runs them. */
#ifndef SP_JOB_TYPES_H
#define SP_JOB_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "cancel.h"
#include "filter.h"
#include "input.h"
#include "scale.h"
#include "write.h"

/* A thumbnail's box (--fit, --width, --height): the output keeps the
 * input's aspect ratio and is WIDTH wide or HEIGHT high, whichever bounds
 * it (a side 0 bounds nothing), the other side rounded to nearest as
 * vipsthumbnail rounds it; an image inside the box is copied, or with
 * ENLARGE resampled up to it.  Both 0: no fit, the factor scales. */
struct sp_fit {
    size_t width, height;
    int enlarge;
    int crop;  /* fill the W x H box and cut the excess, centred
                  (--crop centre): W and H both given */
};

/* How one image is scaled, decided from its header by the policy
 * (policy.h) before its raster is read, and used by the plan, the items
 * and the kernels: the decoder's shrink, then an integer FACTOR
 * (scale.h) or a RESAMPLE (resample.h) from the decoded size to the
 * output's. */
struct sp_geom {
    unsigned shrink;         /* decoded at 1/shrink (shrink-on-load); 1:
                                full size */
    int factor;              /* scale.h's, on the decoded image; 1 with a
                                resample */
    int resample;            /* an area average from IN to OUT */
    size_t in_width, in_height;    /* the image as decoded */
    size_t out_width, out_height;
    /* A crop's (struct sp_fit's CROP): the resample makes the COVER
     * size, of which the output is the OUT size from (CROP_X, CROP_Y);
     * 0 x 0: no crop, the resample makes OUT itself. */
    size_t cover_width, cover_height;
    size_t crop_x, crop_y;
};

struct sp_job {
    struct sp_src in;      /* the input (input.h: sp_src_path, sp_src_fd,
                              sp_src_memory) */
    struct sp_target out;  /* the output (target.h: sp_target_path, _fd,
                              _memory, _callback, _image: the image
                              itself, the input's first alone, not
                              encoded); NONE (zero): none
                              (--no-output): every item is scaled into
                              its chunk as for a PNM of the input's type,
                              and nothing is opened or written */
    enum sp_outfmt fmt;    /* the output's format (PNM: zero); only a
                              front end takes it from a name
                              (sp_outfmt_for) */
    enum sp_want pnm_type; /* a PNM output's type (convert.h): KEEP
                              (zero) the image's own, or PAM, PBM, PGM,
                              PPM, as a name's .pam ... ask */
    enum sp_io io;
    int factor;            /* see scale.h */
    const struct sp_filter_row *filter;  /* its row (filter.h); NULL: the
                              table's first, sample (sp_filter_of) */
    struct sp_fit fit;     /* a thumbnail's box; 0 x 0: FACTOR scales */
    int no_shrink;         /* never decode a JPEG shrunk (header.h's
                              shrink-on-load): every pixel decoded */
    int no_orient;         /* keep the stored order: a JPEG's or PNG's
                              EXIF orientation is not applied (header.h),
                              and outputs that can hold it carry it; else
                              the image is turned upright as it is
                              decoded, and outputs carry none */
    int decode_only;       /* the decode step alone: FACTOR and FIT are
                              only shrink-on-load's hint (policy.h), the
                              image decoded at the shrink they allow and
                              copied, not scaled further */
    struct sp_geom geom;   /* the image's, set by the job for each image
                              (the caller's is not read) */
    unsigned threads;      /* 1..SP_THREADS_MAX, clamped to the items */
    uint64_t max_pixels;   /* input or output pixels beyond this are
                              refused (SP_E_LIMIT); 0: SP_MAX_PIXELS */
    size_t chunk_bytes;    /* output bytes an item (a streamed output:
                              PNM, JPEG); 0: SP_CHUNK.  A PNG's items are
                              its deflate segments, sized by the row
                              alone (plan.h), so that its bytes never
                              depend on the threads */
    size_t drop_grain;     /* a mapped input is given back in blocks ending
                              on multiples of this (sp_source_open's GRAIN);
                              0: the mmap backend's default */
    int quality;           /* JPEG quality, 1..100; 0: 90 */
    int compression_set;   /* PNG: COMPRESSION is the zlib level (0..9);
                              else SP_PNG_LEVEL, 6 (encode.h) */
    int compression;
    int subsample;         /* JPEG chroma subsampling: 444, 422 or 420; 0:
                              SP_JPEG_SUBSAMPLE, 420 */
    int background_set;    /* BACKGROUND (0xRRGGBB) is the colour an alpha
                              is flattened onto where the output holds
                              none (convert.h); else SP_BACKGROUND,
                              white */
    int background;
    int open_nowait;       /* open the input without waiting for a FIFO's
                              writer (sp_input_open's NOWAIT), and the
                              output too (sp_output_open's): a batch sets
                              it, so that no file can hold a worker in
                              open() forever; a FIFO with no writer then
                              fails with SP_E_EMPTY, an output that is no
                              regular file with SP_E_REFUSED */
    struct sp_reuse *reuse;    /* the read path's buffer, the caller's to
                                  keep from job to job (input_buffer.h);
                                  NULL: each raster malloc'd and freed */
    struct sp_cancel *cancel;  /* the caller's token (cancel.h): once set,
                              the job stops before its next image or
                              item and fails with EINTR, its output not
                              written; NULL: never cancelled */
    /* A test seam: called, if set, between load and scale. */
    void (*after_load)(void *arg);
    void *after_load_arg;
};

/* An item's output bytes: with a thread's two chunks, a core's L2 cache
 * (1 MiB here), so that the rows a thread has just scaled are still in a
 * cache when write() copies them, and small beside the peers' memory. */
#define SP_CHUNK ((size_t)512 * 1024)

/* The default of --max-pixels: 2^31 pixels, 6 GiB as 8-bit RGB. */
#define SP_MAX_PIXELS ((uint64_t)1 << 31)

#endif
