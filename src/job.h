/* job.h: one scaleppm run: load the input, plan the work (plan.h), scale
 * and write it, report (report.h).
 *
 * The output is made and written in items of rows (plan.h): each thread
 * scales an item into one of its slots, from the bands of source rows the
 * row source (source.h) gives it; whichever thread finds the next item in
 * order ready writes it, tells the source which rows no later item reads
 * (a mapped input gives their pages back), and goes on with the ready
 * items after it (parallel.h).  So memory stays two chunks a thread
 * however large the output, and writes overlap the scaling. */
#ifndef SP_JOB_H
#define SP_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "cancel.h"
#include "input.h"
#include "report.h"
#include "scale.h"
#include "status.h"
#include "timing.h"
#include "write.h"

struct sp_job {
    const char *in;        /* input path, "-" for standard input */
    const char *out;       /* output path, "-" for standard output */
    enum sp_io io;
    int factor;            /* see scale.h */
    enum sp_filter filter;
    unsigned threads;      /* 1..SP_THREADS_MAX, clamped to the items */
    uint64_t max_pixels;   /* input or output pixels beyond this are
                              refused (SP_E_LIMIT); 0: SP_MAX_PIXELS */
    size_t chunk_bytes;    /* output bytes an item (PNM); 0: SP_CHUNK */
    size_t drop_grain;     /* a mapped input is given back in blocks ending
                              on multiples of this (sp_source_open's GRAIN);
                              0: the mmap backend's default */
    int quality;           /* JPEG quality, 1..100; 0: 90 */
    int compression_set;   /* PNG: COMPRESSION is the zlib level (0..9);
                              else stb's default, 8 */
    int compression;
    int open_nowait;       /* open the input without waiting for a FIFO's
                              writer (sp_input_open's NOWAIT): a batch sets
                              it, so that no file can hold a worker in
                              open() forever; a FIFO with no writer then
                              fails with SP_E_EMPTY */
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

/* sp_job_run: load, scale, release and write as JOB says, measuring each
 * phase into REPORT, every image of the input in turn through the one
 * descriptor it opens (sp_input_open), as pamscale reads them: whitespace
 * between images is skipped, anything else after an image must be an
 * image (else SP_E_NOTPNM, REPORT->why naming the image and its offset).
 * REPORT->load is the last image's, its trailing_bytes the whitespace
 * after it.  The output format comes from JOB->out's extension.
 * Returns 0, or the status of the first phase that failed, with
 * REPORT->failed_path and REPORT->why saying where and what; nothing is
 * left allocated, mapped or open, and no output file is created.  An input
 * that changes while it is read (its size, mtime or ctime differ after
 * the last item is scaled, or a mapped one shrinks under the scale: see
 * guard.h) gives SP_E_CHANGED, and its output is not committed.
 * Reentrant: jobs run side by side in one process, each with its own
 * JOB, REPORT and token (JOB->cancel); it prints nothing and never exits
 * (docs/design.md, "Running jobs side by side"). */
sp_status sp_job_run(const struct sp_job *job, struct sp_report *report);

#endif
