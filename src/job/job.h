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

#include "job_types.h"
#include "report.h"
#include "status.h"

/* sp_job_exec: load, scale, release and write as JOB says, measuring each
 * phase into REPORT, every image of the input in turn through the one
 * descriptor it opens (sp_input_open), as pamscale reads them: whitespace
 * between images is skipped, anything else after an image must be an
 * image (else SP_E_NOTPNM, REPORT->why naming the image and its offset).
 * REPORT->load is the last image's, its trailing_bytes the whitespace
 * after it.  JOB->in is read and JOB->out written as input.h and
 * target.h say, in JOB->fmt (a PNM in JOB->pnm_type); with no target
 * (SP_TARGET_NONE) every item is scaled as for a PNM output and dropped:
 * nothing is opened or written, and the write phase is zero.  A memory
 * target gets its bytes only when the job succeeds; an image target
 * (SP_TARGET_IMAGE) the first image, scaled (or with JOB->decode_only
 * decoded alone), whole in memory, and its metadata, only then, and
 * nothing after that image is read.  So the steps a run composes can be
 * taken one at a time: decode (decode_only, an image target), scale (an
 * image source, sp_src_image, into an image target), encode (an image
 * source at factor 1 into any other target); sp_job_exec() interleaves
 * them item by item, so that a run's memory stays two chunks a thread.
 * Returns 0, or the status of the first phase that failed, with
 * REPORT->failed_path and REPORT->why saying where and what; nothing is
 * left allocated, mapped or open, and no output file is created.  An input
 * that changes while it is read (its size, mtime or ctime differ after
 * the last item is scaled, or a mapped one shrinks under the scale: see
 * guard.h) gives SP_E_CHANGED, and its output is not committed.
 * Reentrant: jobs run side by side in one process, each with its own
 * JOB, REPORT and token (JOB->cancel); it prints nothing and never exits
 * (docs/design.md, "Running jobs side by side"). */
sp_status sp_job_exec(const struct sp_job *job, struct sp_report *report);

#endif
