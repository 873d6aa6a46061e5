/* batch.h: many inputs scaled in one run, each into its own output.
 *
 * The threads are started once for the batch: min(threads, files) of
 * them, with a stack of their own (the caller's waits: its stack is as
 * large as RLIMIT_STACK says, which may be little), each taking the next
 * file and running it as a job (job.h) with its share of the threads, so
 * that one file is read while another is scaled or written.  (A batch of
 * fewer files than threads splits each file's rows too, and those
 * threads start for each file, as a one-file run's do.)  Each output is
 * written atomically as a one-file run's is; a file that fails is
 * reported and the batch goes on.  The batch prints nothing: each file's
 * end, the progress and the moment it is over go to the caller's
 * reporter (reporter.h), which the command line's front (cli_batch.c)
 * prints.  A signal (SIGINT, SIGTERM, ...) is waited for on a thread of
 * its own: it stops the batch, the jobs in progress stop at their next
 * item and remove their outputs, and the finished ones stay; the jobs
 * that have not stopped within half a second (blocked on a FIFO, a
 * stalled filesystem) are not waited for.  When no thread can be started
 * for the signals, the files run on the caller's thread alone, one after
 * another, with no progress reported, and the signals are the process's
 * handlers' to see. */
#ifndef SP_BATCH_H
#define SP_BATCH_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "cancel.h"
#include "job.h"
#include "reporter.h"
#include "status.h"

struct sp_tally;

struct sp_batch {
    struct sp_job job;     /* what each file's job does; its in and out
                              are each file's, its threads the batch's;
                              its cancel, if set, is the caller's token,
                              which then stops the batch too (and which
                              a signal or --fail-fast sets); NULL: the
                              batch's own */
    char *const *in;       /* the inputs, N of them */
    char *const *out;      /* the output of each */
    size_t n;
    enum sp_buffer_policy buffers;  /* the read path's (input_buffer.h):
                                       REUSE, a buffer each worker */
    int fail_fast;         /* stop at the first file that fails */
    int skip_existing;     /* an input whose output exists is skipped */
    struct sp_reporter reporter;  /* where each file's end and the
                                     progress go (reporter.h) */
    sigset_t stop_signals; /* the signals that stop the batch: blocked
                              in every thread while it runs */
    /* stopped: once a signal has stopped the batch, called with it and
     * the tally, on the caller's thread once the jobs have stopped, or on
     * the batch's own when they have not within the grace or a second
     * signal came (the jobs still running, their outputs out of sight
     * the program's to remove through its registry, pending.h; no file
     * counted or reported any more; the reporter's over called first).  It must not return:
     * it ends the process (by the signal, after the tally).  NULL: no
     * grace, the batch waits for its jobs and returns EINTR. */
    void (*stopped)(int sig, const struct sp_tally *t);
};

/* What a batch did. */
struct sp_tally {
    size_t files;          /* in the batch */
    size_t scaled, failed, skipped;
    uint64_t bytes;        /* the inputs' bytes of the files scaled */
    uint64_t ns;           /* the batch's wall time */
    int signal;            /* the signal that stopped it, or 0 */
};

/* sp_batch_run: B's files, each into its output, counted in *T, each
 * file's end told to B->reporter.  Returns 0 when every file was scaled
 * or skipped, or the status of a file that failed (EINTR when a signal
 * stopped the batch and B has no stopped, or when the caller's token,
 * B->job.cancel, stopped it before every file was done).  Reentrant:
 * batches and jobs may run side by side, each with its own token and
 * reporter. */
sp_status sp_batch_run(const struct sp_batch *b, struct sp_tally *t);

/* A file in progress, for the time-left estimate: its input's size
 * (0: no file, or no size known) and when its job began. */
struct sp_eta_file {
    uint64_t bytes;
    uint64_t start_ns;
};

/* sp_batch_eta: the seconds a batch has left, as its progress says,
 * from bytes and the rate so far: LEFT, the bytes of the files not yet
 * taken; DONE_BYTES and DONE_NS, those of the files ended and the time
 * their jobs took, summed, which give one job's rate; FLY, the NFLY
 * files in progress at NOW_NS, each credited with what the rate would
 * have done of it so far; WORKERS jobs at a time, but a file one job's.
 * Pure.  Returns a negative value while there is no rate (no file ended,
 * or none with bytes). */
double sp_batch_eta(uint64_t left, uint64_t done_bytes, uint64_t done_ns,
                    const struct sp_eta_file *fly, size_t nfly,
                    uint64_t now_ns, unsigned workers);

#endif
