/* cli_pending.h: the command line's registry of the outputs being written
 * out of sight, installed as the output file's hook (pending.h), so that
 * its signal handler, or a stopped batch, removes their temporaries.  A
 * one-file run writes one output at a time, a batch several. */
#ifndef SP_CLI_PENDING_H
#define SP_CLI_PENDING_H

/* sp_cli_pending_install: the registry installed as the output file's
 * hook; before the first job. */
void sp_cli_pending_install(void);

/* sp_cli_discard_pending: for a signal handler (async-signal-safe):
 * remove the named temporaries being written, if any.  Returns 1 when an
 * output was being written out of sight (so its target is untouched), 0
 * when none was, or it was written in place. */
int sp_cli_discard_pending(void);

#endif
