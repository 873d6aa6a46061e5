/* cli_batch.h: the command line's front of a batch (cli_batch.c): the
 * inputs read, the outputs named and checked (outnames.h), the batch run
 * (batch.h), and what the library reports (a refusal, reporter.h's
 * calls) printed on stderr.  The library prints nothing; this layer, with
 * main.c, does. */
#ifndef SP_CLI_BATCH_H
#define SP_CLI_BATCH_H

#include <signal.h>

#include "batch.h"
#include "options.h"

/* sp_cli_batch: the batch O asks for (-o, --files-from), stopped by the
 * signals STOP_SIGNALS, with STOPPED as its sp_batch.stopped (main.c's:
 * the tally, then death by the signal).  Prints each failure, each
 * --timings record, the progress line on a terminal and, without -q, the
 * summary.  Returns the exit status. */
int sp_cli_batch(const struct options *o, const sigset_t *stop_signals,
                 void (*stopped)(int sig, const struct sp_tally *t));

/* sp_cli_tally_print: the summary line of T on stderr:
 * "scaleppm: 498 scaled, 2 failed, 3 skipped, 1.9 GB in 4.1 s", and the
 * files not done when the batch stopped early. */
void sp_cli_tally_print(const struct sp_tally *t);

#endif
