/* reporter.h: how the library tells its caller what a batch (batch.h) is
 * doing, instead of printing it: a struct of callbacks and the argument
 * they are given, which the caller supplies.  The command line's front
 * (cli_batch.c) prints them on stderr; a test records them.
 *
 * The calls of one batch come one at a time (under the batch's lock),
 * from whichever of its threads ended a file or keeps the time, so a
 * reporter needs no lock of its own for them; it must not run a job nor
 * wait for one.  Each callback may be NULL: that event is not wanted. */
#ifndef SP_REPORTER_H
#define SP_REPORTER_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "status.h"

/* How far a batch has come, a quarter of a second apart. */
struct sp_progress {
    size_t done;       /* files ended: scaled, failed or skipped */
    size_t files;      /* in the batch */
    uint64_t bytes;    /* the inputs' bytes of the files scaled */
    uint64_t ns;       /* since the batch began */
    double eta;        /* seconds left (sp_batch_eta), or negative when
                          there is no estimate yet */
};

struct sp_reporter {
    void *arg;         /* given to each callback */
    /* file: file I of the batch ended with ST: scaled (SP_OK), skipped
     * (SP_OK, R->skipped set: its output was whole already) or failed,
     * R->failed_path and R->why saying where and what.  A file the
     * batch's own stop ended (a signal, --fail-fast) is not reported: it
     * was not done. */
    void (*file)(void *arg, size_t i, sp_status st,
                 const struct sp_report *r);
    /* progress: the batch's progress, every quarter of a second while
     * it runs; with it NULL the batch keeps no estimate. */
    void (*progress)(void *arg, const struct sp_progress *p);
    /* over: no more progress will come (the batch is over, or stopped
     * and about to call its stopped): a progress line can be wiped. */
    void (*over)(void *arg);
};

#endif
