/* work.h: the run of a job's plan (plan.h): each item scaled by one of
 * the threads (parallel.h) from the row source, and written in order
 * into the output, the source told after each which rows no later item
 * reads.  The scale, release and write phases of the report are measured
 * here. */
#ifndef SP_WORK_H
#define SP_WORK_H

#include "job_types.h"
#include "report.h"
#include "source.h"
#include "status.h"
#include "write.h"

/* sp_work_run: JOB's output, scaled from SRC, into OUT (opened for FMT):
 * item by item for a PNM output, into one whole image written at the end
 * for the stb formats; with OUT NULL (no output: FMT PNM), each item
 * into its chunk, and nothing written; with OUT NULL and KEEP not NULL,
 * into one whole image that *KEEP gets on success (a fresh malloc'd
 * raster, the caller's to release).  Sets R's threads_used and phases;
 * on a write error R->failed_path is JOB->out.  Returns 0 or the first
 * error. */
sp_status sp_work_run(const struct sp_job *job, struct sp_source *src,
                      struct sp_output *out, enum sp_outfmt fmt,
                      struct sp_image *keep, struct sp_report *r);

#endif
