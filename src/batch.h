/* batch.h: many inputs scaled in one run, each into its own output.
 *
 * The threads are started once for the batch: min(threads, files) of
 * them (the caller's among them), each taking the next file and running
 * it as a job (job.h) with its share of the threads, so that one file is
 * read while another is scaled or written.  (A batch of fewer files
 * than threads splits each file's rows too, and those threads start for
 * each file, as a one-file run's do.)  Each output is written atomically
 * as a one-file run's is; a file that fails is one line on stderr and
 * the batch goes on.  A signal (SIGINT, SIGTERM, ...) is waited for on a
 * thread of its own: it stops the batch, the jobs in progress stop at
 * their next item and remove their outputs, and the finished ones stay. */
#ifndef SP_BATCH_H
#define SP_BATCH_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "job.h"
#include "status.h"

struct sp_batch {
    struct sp_job job;     /* what each file's job does; its in and out
                              are each file's, its threads the batch's */
    char *const *in;       /* the inputs, N of them */
    char *const *out;      /* the output of each */
    size_t n;
    enum sp_buffer_policy buffers;  /* the read path's (image.h) */
    int fail_fast;         /* stop at the first file that fails */
    int skip_existing;     /* an input whose output exists is skipped */
    int progress;          /* a progress line on stderr, rewritten */
    int timings, json;     /* a record a scaled file on stderr */
    sigset_t stop_signals; /* the signals that stop the batch */
};

/* What a batch did. */
struct sp_tally {
    size_t files;          /* in the batch */
    size_t scaled, failed, skipped;
    uint64_t bytes;        /* the inputs' bytes of the files scaled */
    uint64_t ns;           /* the batch's wall time */
    int signal;            /* the signal that stopped it, or 0 */
};

/* sp_batch_run: B's files, each into its output, counted in *T.  Returns
 * 0 when every file was scaled or skipped, SP_E_THREAD when no thread
 * could be started for the signals, or the status of a file that failed
 * (EINTR when a signal stopped the batch). */
sp_status sp_batch_run(const struct sp_batch *b, struct sp_tally *t);

/* sp_tally_print: the summary line of T on stderr:
 * "scaleppm: 498 scaled, 2 failed, 3 skipped, 1.9 GB in 4.1 s", and the
 * files not done when the batch stopped early. */
void sp_tally_print(const struct sp_tally *t);

#endif
