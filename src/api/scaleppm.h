/* scaleppm.h: libscaleppm, the public C API of scaleppm.
 *
 * A program scales an image through one handle, a job (sp_job), as it
 * opens a database through LMDB's MDB_env: made by sp_job_new(), told what
 * to read, what to write and how to scale by setters, run by sp_job_run()
 * (as many times as the caller likes, from one thread at a time), freed by
 * sp_job_free().  Jobs are independent: any number run at once on as many
 * threads, each its own handle.  Every function but sp_version() and
 * sp_strerror() takes a handle; nothing of the library is global but what
 * sp_init() installs.
 *
 *     sp_job *job;
 *     int st = sp_job_new(&job);
 *     if (st == 0) st = sp_job_set_input_memory(job, jpeg, jpeg_len);
 *     if (st == 0) st = sp_job_set_output_memory(job);
 *     if (st == 0) st = sp_job_set_format(job, "png");
 *     if (st == 0) st = sp_job_set_factor(job, -4);
 *     if (st == 0) st = sp_job_run(job);
 *     if (st == 0) st = sp_job_output(job, &png, &png_len);
 *     if (st != 0)
 *         fprintf(stderr, "%s\n", job ? sp_job_message(job)
 *                                      : sp_strerror(st));
 *     sp_job_free(job);
 *
 * Statuses.  Every function that can fail returns an int: 0 on success,
 * else a negative status, never a positive one:
 *   - a negated errno value, -1 to -4095 (Linux's MAX_ERRNO), from the
 *     system call that failed: -ENOENT for an input that is not there;
 *   - a code of scaleppm's own band, SP_E_BASE - 1 down to SP_E_LAST
 *     (-20001 to -20999), which no -errno can reach: SP_E_TRUNCATED
 *     for an input shorter than its header says.
 * sp_strerror() names either kind.  New codes are added at the band's
 * low end; a code's value never changes while the soname stays.
 *
 * The command line (scaleppm(1)) runs the same library; libscaleppm(3)
 * is this header as a manual page. */
#ifndef SCALEPPM_H
#define SCALEPPM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's symbols are hidden but these (a version script lists
 * them too: src/api/scaleppm.map). */
#if defined(__GNUC__) && __GNUC__ >= 4
#define SP_API __attribute__((visibility("default")))
#else
#define SP_API
#endif

/* The version this header came with: sp_version() gives the library's. */
#define SP_VERSION_MAJOR 0
#define SP_VERSION_MINOR 2
#define SP_VERSION_PATCH 0

/* The band of scaleppm's own statuses: SP_E_BASE - 1 down to SP_E_LAST. */
#define SP_E_BASE (-20000)
#define SP_E_LAST (-20999)

enum {
    SP_OK = 0,
    SP_E_USAGE = SP_E_BASE - 1,        /* an argument out of range */
    SP_E_EMPTY = SP_E_BASE - 2,        /* the input has no bytes at all */
    SP_E_NOTPNM = SP_E_BASE - 3,       /* not an image of a format
                                          scaleppm reads */
    SP_E_UNSUPPORTED = SP_E_BASE - 4,  /* a PNM/PAM variant not handled */
    SP_E_BADHEADER = SP_E_BASE - 5,    /* a malformed PNM header */
    SP_E_TOOBIG = SP_E_BASE - 6,       /* a size does not fit in size_t
                                          (or an encoder's int) */
    SP_E_TRUNCATED = SP_E_BASE - 7,    /* shorter than its header says */
    SP_E_BADRASTER = SP_E_BASE - 8,    /* a plain-format sample is
                                          malformed or > maxval */
    SP_E_OUTFORMAT = SP_E_BASE - 9,    /* an output format not written */
    SP_E_ENCODE = SP_E_BASE - 10,      /* the image encoder failed */
    SP_E_THREAD = SP_E_BASE - 11,      /* a worker thread could not be
                                          started or joined */
    SP_E_CHANGED = SP_E_BASE - 12,     /* the input changed while it was
                                          read */
    SP_E_LIMIT = SP_E_BASE - 13,       /* more pixels than the job allows */
    SP_E_REFUSED = SP_E_BASE - 14,     /* an output that would not be
                                          replaced safely */
    SP_E_CONVERT = SP_E_BASE - 15,     /* the output's type cannot be made
                                          from the image's in one step */
    SP_E_BADJPEG = SP_E_BASE - 16,     /* a malformed JPEG header */
    SP_E_BADPNG = SP_E_BASE - 17,      /* a malformed PNG header */
};

/* sp_strerror: a short lower-case description of STATUS: 0, a code of
 * the band above, or an errno value, negated or not.  The string is
 * static and never NULL ("unknown error" for anything else). */
SP_API const char *sp_strerror(int status);

/* sp_version: the library's version, "MAJOR.MINOR.PATCH"; static. */
SP_API const char *sp_version(void);

/* sp_init: install what the library needs process-wide, once, before the
 * first job, as SQLite's sqlite3_initialize: the SIGBUS handler that
 * turns a mapped input truncated under a job into SP_E_CHANGED instead
 * of the process's death (a SIGBUS of any other cause still goes to the
 * handler installed before), and libnetpbm's program name and error
 * hooks.  Nothing calls it behind the program's back: without it no input
 * is mapped (a mapped load reads instead) and every PNM header, read or
 * written, is refused with a message that names sp_init(); JPEG and PNG
 * inputs and JPEG, PNG, BMP and TGA outputs work without it.  Safe to
 * call from any thread and more than once; a program that installs its
 * own SIGBUS handler installs it first.  Returns 0, or -errno when the
 * handler cannot be installed. */
SP_API int sp_init(void);

/* A job: what to read, what to write, how; opaque. */
typedef struct scaleppm_job sp_job;

/* sp_job_new: a new job in *JOB, reading nothing and writing nothing yet,
 * with the defaults: factor 1 (a copy), filter "sample", one thread, the
 * load path "auto", the output format "pnm".  The caller frees it with
 * sp_job_free().  Returns 0, or -ENOMEM (*JOB is then NULL). */
SP_API int sp_job_new(sp_job **job);

/* sp_job_free: free JOB and everything it owns, the memory output
 * included; it closes no descriptor the caller gave it.  NULL is safe. */
SP_API void sp_job_free(sp_job *job);

/* The input: one of a path, a descriptor or bytes in memory, whichever
 * was set last.  A path is copied.  A descriptor stays the caller's (the
 * job reads it from its current offset and does not close it).  Memory
 * stays the caller's and must stay unchanged until sp_job_run() returns;
 * the job never writes to it.  Each returns 0, SP_E_USAGE (a NULL path or
 * memory, a negative descriptor) or -ENOMEM. */
SP_API int sp_job_set_input_path(sp_job *job, const char *path);
SP_API int sp_job_set_input_fd(sp_job *job, int fd);
SP_API int sp_job_set_input_memory(sp_job *job, const void *data,
                                   size_t size);

/* sp_write_fn: a callback output's writer: take SIZE bytes at DATA (the
 * next of the output), and return 0, or a negative status that ends the
 * job with it (the job's message names the output "callback"). */
typedef int sp_write_fn(void *arg, const void *data, size_t size);

/* The output: one of a path, a descriptor, memory or a callback, whichever
 * was set last; none set: the image is scaled and dropped.  A path is
 * copied and its file appears whole or not at all, as the command line's
 * (an existing file is replaced).  A descriptor stays the caller's and is
 * not closed; a pipe whose reader has gone raises SIGPIPE, as write(2)
 * does (a program that writes to pipes ignores it, and gets -EPIPE).  Memory is a buffer the job grows and owns: sp_job_output()
 * reads it after a run, and the next run or sp_job_free() frees it.  A
 * callback is called with the output's bytes in order, from the thread
 * that runs the job.  Each returns 0, SP_E_USAGE (a NULL path or FN, a
 * negative descriptor) or -ENOMEM. */
SP_API int sp_job_set_output_path(sp_job *job, const char *path);
SP_API int sp_job_set_output_fd(sp_job *job, int fd);
SP_API int sp_job_set_output_memory(sp_job *job);
SP_API int sp_job_set_output_callback(sp_job *job, sp_write_fn *fn,
                                      void *arg);

/* sp_job_output: the bytes the last successful run wrote to memory
 * (sp_job_set_output_memory), in *DATA and *SIZE; they stay the job's,
 * valid until its next run or sp_job_free().  Returns 0, or SP_E_USAGE
 * when JOB's output is not memory or its last run failed or never ran
 * (*DATA NULL, *SIZE 0). */
SP_API int sp_job_output(const sp_job *job, const void **data,
                         size_t *size);

/* sp_job_set_format: the output's format by name, case-insensitive:
 * "pnm" (PBM, PGM or PPM as the image is), "pbm", "pgm", "ppm", "pam",
 * "png", "jpeg" or "jpg", "bmp", "tga" (the names scaleppm(1) takes as
 * extensions).  The format is this field's alone, whatever a path's
 * extension.  Returns 0 or SP_E_OUTFORMAT. */
SP_API int sp_job_set_format(sp_job *job, const char *name);

/* sp_job_set_factor: scale by FACTOR: N > 1 enlarges N times, N < -1
 * reduces N times, 1 or -1 copies; it undoes sp_job_set_size.  Returns 0
 * or SP_E_USAGE (0, or |FACTOR| above 65536). */
SP_API int sp_job_set_factor(sp_job *job, int factor);

/* sp_job_set_size: scale to fit a WIDTH x HEIGHT box, keeping the
 * aspect ratio (a side of 0 bounds nothing), as scaleppm(1)'s --fit; an
 * image inside the box is copied, or with ENLARGE resampled up to it.
 * It undoes sp_job_set_factor.  Returns 0 or SP_E_USAGE (both sides 0). */
SP_API int sp_job_set_size(sp_job *job, size_t width, size_t height,
                           int enlarge);

/* sp_job_set_filter: "sample" (the nearest pixel) or "box" (an area
 * average), as scaleppm(1)'s --filter.  Returns 0 or SP_E_USAGE. */
SP_API int sp_job_set_filter(sp_job *job, const char *name);

/* sp_job_set_threads: run the job on THREADS threads (1 to 1024; fewer
 * when the image has fewer items of rows).  Returns 0 or SP_E_USAGE. */
SP_API int sp_job_set_threads(sp_job *job, unsigned threads);

/* sp_job_set_io: how a path or descriptor input is loaded: "auto",
 * "read", "mmap" or "pread" (scaleppm(1)'s --io); memory is read where
 * it lies.  Returns 0 or SP_E_USAGE. */
SP_API int sp_job_set_io(sp_job *job, const char *name);

/* sp_job_set_quality: a JPEG output's quality, 1 to 100 (default 90).
 * Returns 0 or SP_E_USAGE. */
SP_API int sp_job_set_quality(sp_job *job, int quality);

/* sp_job_set_max_pixels: refuse an input or output of more than MAX
 * pixels with SP_E_LIMIT before any is allocated; 0: the default, 2^31.
 * Returns 0. */
SP_API int sp_job_set_max_pixels(sp_job *job, unsigned long long max);

/* sp_job_set_option: the key KEY set to VALUE, as scaleppm(1)'s long
 * option --KEY VALUE and the server's query key KEY=VALUE set it: one
 * table holds the keys of all three ("scale", "fit", "width", "height",
 * "crop", "enlarge", "filter", "orient", "no-shrink-on-load", "format",
 * "quality", "subsample", "background", "compression", "io"); VALUE NULL
 * (or "") for a key that takes none ("enlarge").  Like the setters above
 * it replaces what was set before: "scale" undoes a size, "fit",
 * "width" and "height" undo a factor.  Returns 0, or SP_E_USAGE with
 * sp_job_message() saying why ("--quality '101': expected 1 to 100"),
 * JOB then unchanged. */
SP_API int sp_job_set_option(sp_job *job, const char *key,
                             const char *value);

/* sp_job_run: read the input, scale it and write the output as JOB says;
 * every image of a PNM stream in turn.  A job runs on one thread at a
 * time (its own threads aside).  Returns 0, SP_E_USAGE (no input set), or
 * the status of the first step that failed, sp_job_message() then saying
 * which file and what; a path output is then not created or replaced,
 * and a memory output is empty. */
SP_API int sp_job_run(sp_job *job);

/* sp_job_message: after a failed sp_job_run(), one line naming the file
 * and the problem ("in.jpg: file is truncated"), without a newline; ""
 * after a run that succeeded or before the first.  The string is the
 * job's, valid until its next run or sp_job_free(). */
SP_API const char *sp_job_message(const sp_job *job);

/* Steps.  sp_job_run() decodes, scales and encodes item by item, so that
 * its memory stays a few chunks a thread; the same steps can be taken
 * one at a time through an image held whole in memory (sp_image), so
 * that one decode is scaled to several sizes, or a scaled image is read
 * before it is encoded, or encoded twice:
 *
 *     sp_image *img;
 *     st = sp_job_set_size(job, 800, 800, 0);   (the largest size wanted)
 *     if (st == 0) st = sp_job_decode(job, &img);
 *     for (i = 0; st == 0 && i < 3; i++) {
 *         st = sp_job_set_input_image(job, img);
 *         if (st == 0) st = sp_job_set_size(job, side[i], side[i], 0);
 *         if (st == 0) st = sp_job_set_output_path(job, name[i]);
 *         if (st == 0) st = sp_job_run(job);
 *     }
 *     sp_image_free(img);
 *
 * Decode: sp_job_decode().  Scale: a job from an image
 * (sp_job_set_input_image) into an image (sp_job_set_output_image).
 * Encode: a job from an image at factor 1 into any other output.  Each
 * gives the bytes sp_job_run() gives for the same steps. */

/* An image in memory, decoded or scaled, with the metadata its decoder
 * read (the ICC profile, the EXIF orientation), which an encoder that
 * can hold it writes; opaque. */
typedef struct scaleppm_image sp_image;

/* sp_job_decode: the first image of JOB's input (its load path,
 * sp_job_set_io, and its limit, sp_job_set_max_pixels, as a run's),
 * decoded into a new image in *IMAGE, the caller's to free with
 * sp_image_free(); JOB's output is not written (the last run's memory
 * or image output is freed, as a run frees it).  JOB's factor or size is
 * the hint of shrink-on-load: a JPEG is decoded at the smallest DCT
 * scale from which sp_job_run() would scale to it (at least twice a
 * size's box, as vipsthumbnail decodes), so the image may be smaller
 * than the file's (sp_image_layout says its size); factor 1 decodes
 * every pixel.  A scale from the image to the hinted size gives the
 * bytes sp_job_run() gives from the file.  Returns 0, or what
 * sp_job_run() returns, sp_job_message() then saying why (*IMAGE
 * NULL). */
SP_API int sp_job_decode(sp_job *job, sp_image **image);

/* sp_job_set_input_image: JOB's input is IMAGE, scaled without a decode;
 * IMAGE stays the caller's, unchanged, and must not be freed before the
 * runs that read it return.  Any number of jobs may read one image at
 * once.  Returns 0 or SP_E_USAGE (a NULL IMAGE). */
SP_API int sp_job_set_input_image(sp_job *job, const sp_image *image);

/* sp_job_set_output_image: JOB's output is the scaled image itself, not
 * encoded (the format is not used), of the input's first image; after a
 * run that succeeded, sp_job_output_image() hands it over.  Returns 0. */
SP_API int sp_job_set_output_image(sp_job *job);

/* sp_job_output_image: the image the last run made
 * (sp_job_set_output_image), in *IMAGE, the caller's from now on to
 * free with sp_image_free(); what is not taken, the next run or
 * sp_job_free() frees.  Returns 0, or SP_E_USAGE when there is none (the
 * output is not an image, the run failed, or it was taken; *IMAGE
 * NULL). */
SP_API int sp_job_output_image(sp_job *job, sp_image **image);

/* sp_image_layout: IMAGE's size and samples, into those of WIDTH,
 * HEIGHT, CHANNELS, MAXVAL and BITS not NULL: WIDTH x HEIGHT pixels of
 * CHANNELS samples (1 gray, 2 gray and alpha, 3 RGB, 4 RGB and alpha; a
 * PAM's depth), each 0 to MAXVAL, a byte when MAXVAL is at most 255,
 * else two, big-endian, as a PNM raster holds them; with *BITS set (a
 * bilevel image, as a PBM's) a row is of bits instead, eight pixels a
 * byte from its high bit, 1 black. */
SP_API void sp_image_layout(const sp_image *image, size_t *width,
                            size_t *height, unsigned *channels,
                            unsigned *maxval, int *bits);

/* sp_image_row: the samples of IMAGE's row Y (its top row is 0), laid
 * out as sp_image_layout() says; NULL when Y is past the last row.
 * Valid until sp_image_free(IMAGE). */
SP_API const void *sp_image_row(const sp_image *image, size_t y);

/* sp_image_free: free IMAGE (NULL is safe). */
SP_API void sp_image_free(sp_image *image);

#ifdef __cplusplus
}
#endif

#endif
