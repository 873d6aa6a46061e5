/* job.h: one scaleppm run, phase by phase, as the Sun study timed it:
 *   load    open, parse, read() or mmap() the input
 *   scale   fill the output, one thread per band of rows
 *   release free(), or madvise(MADV_DONTNEED) + munmap() of the input
 *   write   encode and write the output (timed apart: not in the study)
 *
 * The output is made and written a window of rows at a time: the pool's
 * threads scale a window (a band each), the caller writes it, and a mapped
 * input gives back the pages of the rows it is done with; so memory stays
 * a window's worth however large the output.  Each phase's figure is the
 * sum over the windows. */
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
    unsigned threads;      /* 1..SP_THREADS_MAX, clamped to output rows */
    uint64_t max_pixels;   /* input or output pixels beyond this are
                              refused (SP_E_LIMIT); 0: SP_MAX_PIXELS */
    size_t window_bytes;   /* output bytes scaled per write; 0: the
                              default, from SP_WINDOW_MIN to _MAX */
    /* A test seam: called, if set, between load and scale. */
    void (*after_load)(void *arg);
    void *after_load_arg;
};

/* The default window's bounds: at least a share of a core's L2 cache per
 * thread, at most 16 MiB in all. */
#define SP_WINDOW_MIN ((size_t)256 * 1024)
#define SP_WINDOW_MAX ((size_t)16 * 1024 * 1024)

/* The default of --max-pixels: 2^31 pixels, 6 GiB as 8-bit RGB. */
#define SP_MAX_PIXELS ((uint64_t)1 << 31)

enum sp_phase_id { SP_LOAD, SP_SCALE, SP_RELEASE, SP_WRITE, SP_NPHASES };

struct sp_report {
    struct sp_phase phase[SP_NPHASES];
    struct sp_load_info load;  /* io path used, trailing data, ... */
    unsigned threads_used;
    size_t in_width, in_height, out_width, out_height;
    unsigned channels, bytes, maxval;
    const char *failed_path;   /* on error: the file the error is about */
    char why[SP_WHY_MAX];      /* on error: a detail, possibly empty */
};

/* sp_job_run: load, scale, release and write as JOB says, measuring each
 * phase into REPORT.  The output format comes from JOB->out's extension.
 * Returns 0, or the status of the first phase that failed, with
 * REPORT->failed_path and REPORT->why saying where and what; nothing is
 * left allocated, mapped or open, and no output file is created.  A mapped
 * input that shrinks under the scale gives SP_E_CHANGED (see guard.h). */
sp_status sp_job_run(const struct sp_job *job, struct sp_report *report);

/* sp_report_print: REPORT on F as key=value pairs on one line, or as one
 * JSON object when JSON is set; one line either way. */
void sp_report_print(const struct sp_report *report, int json, FILE *f);

#endif
