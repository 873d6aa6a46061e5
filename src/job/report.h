/* report.h: what a job measured and found, and its one-line form.
 * The phases, as the Sun study timed them:
 *   load    open, parse, read() or mmap() the input
 *   scale   fill the output, rows split among the threads
 *   release free(), madvise(MADV_DONTNEED) + munmap(), or close() of the
 *           input
 *   write   encode and write the output (timed apart: not in the study;
 *           zero with no output, --no-output, as the study wrote none)
 * The scale figure is the wall time during which at least one thread was
 * scaling; items are written one at a time, so the write and release
 * figures are sums; scale and write overlap, so together they can exceed
 * the run.  Page faults are counted for every thread. */
#ifndef SP_REPORT_H
#define SP_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "input.h"
#include "status.h"
#include "timing.h"

enum sp_phase_id { SP_LOAD, SP_SCALE, SP_RELEASE, SP_WRITE, SP_NPHASES };

struct sp_report {
    struct sp_phase phase[SP_NPHASES];
    struct sp_load_info load;  /* io path used, trailing data, ... */
    unsigned threads_used;     /* the threads that ran the items */
    unsigned images;           /* of a multi-image input: those loaded
                                  (the sizes are the last one's) */
    size_t in_width, in_height, out_width, out_height;  /* in: as
                                  decoded (a JPEG shrunk on load: 1/SHRINK
                                  of the file's) */
    unsigned shrink;           /* the decoder's shrink-on-load; 1 or 0:
                                  none */
    unsigned channels, sample_size, maxval;
    const char *input, *output;  /* the job's source and target by name
                                    (sp_src_name, sp_target_name: a path,
                                    "-" standard I/O, "fd N", "memory",
                                    "callback"; output NULL: none,
                                    --no-output) */
    int factor;
    const char *filter;          /* its filter row's name (filter.h) */
    int skipped;               /* --skip-existing: the output was there,
                                  whole, and nothing ran */
    int in_batch;              /* a file of a batch (batch.h): the three
                                  below are set */
    unsigned worker;           /* the batch's thread that ran it, from 0 */
    uint64_t start_ns, end_ns; /* when it was taken and when it ended,
                                  since the batch began */
    const char *failed_path;   /* on error: the file the error is about */
    char why[SP_WHY_MAX];      /* on error: a detail, possibly empty */
};

/* sp_report_print: REPORT of a job that ended with ST on F as key=value
 * pairs on one line, or as one JSON object when JSON is set; one line
 * either way, a record a run that names what ran: input, output (as JSON
 * strings in both forms; no output: output=none, JSON null), factor,
 * filter, I/O path, threads, sizes, each
 * phase's time and faults, shrink when the input was decoded shrunk, and
 * last status ok, or status error and
 * error, sp_strerror(ST) as a JSON string in both forms (the figures of
 * a failed job are those it reached: zero for a phase it never began);
 * status skipped for a file --skip-existing left alone.  A batch's file
 * has worker, start_ns and end_ns before the status: which of the
 * batch's threads ran it and when, so that the records show the files
 * that overlapped. */
void sp_report_print(const struct sp_report *report, sp_status st, int json,
                     FILE *f);

#endif
