/* job.h: one scaleppm run, phase by phase, as the Sun study timed it:
 *   load    open, parse, read() or mmap() the input
 *   scale   fill the output, rows split among the threads
 *   release free(), madvise(MADV_DONTNEED) + munmap(), or close() of the
 *           input
 *   write   encode and write the output (timed apart: not in the study)
 *
 * The output is made and written in items of rows, about SP_CHUNK bytes
 * each (see parallel.h): each thread scales an item into one of its two
 * chunks (a pread input: from a band of the rows it reads, read for it);
 * whichever thread finds the next item in order ready writes it, gives
 * back the pages of the mapped input rows no later item reads, and goes
 * on with the ready items after it.  So memory stays two chunks a thread
 * however large the output, and writes overlap the scaling.  The scale
 * figure is the wall time during which at least one thread was scaling;
 * items are written one at a time, so the write and release figures are
 * sums; scale and write overlap, so together they can exceed the run.
 * Page faults are counted for every thread. */
#ifndef SP_JOB_H
#define SP_JOB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "load.h"
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

enum sp_phase_id { SP_LOAD, SP_SCALE, SP_RELEASE, SP_WRITE, SP_NPHASES };

struct sp_report {
    struct sp_phase phase[SP_NPHASES];
    struct sp_load_info load;  /* io path used, trailing data, ... */
    unsigned threads_used;     /* the threads that ran the items */
    size_t in_width, in_height, out_width, out_height;
    unsigned channels, bytes, maxval;
    const char *failed_path;   /* on error: the file the error is about */
    char why[SP_WHY_MAX];      /* on error: a detail, possibly empty */
};

/* sp_job_run: load, scale, release and write as JOB says, measuring each
 * phase into REPORT.  The output format comes from JOB->out's extension.
 * Returns 0, or the status of the first phase that failed, with
 * REPORT->failed_path and REPORT->why saying where and what; nothing is
 * left allocated, mapped or open, and no output file is created.  An input
 * that changes while it is read (its size, mtime or ctime differ after
 * the last item is scaled, or a mapped one shrinks under the scale: see
 * guard.h) gives SP_E_CHANGED, and its output is not committed. */
sp_status sp_job_run(const struct sp_job *job, struct sp_report *report);

/* sp_report_print: REPORT on F as key=value pairs on one line, or as one
 * JSON object when JSON is set; one line either way. */
void sp_report_print(const struct sp_report *report, int json, FILE *f);

#endif
