/* pending.h: the outputs being written out of sight (outfile.c), for a
 * signal handler, or a batch's signal thread, to discard with
 * sp_outfile_discard_pending().
 *
 * A slot an output: claimed while the output is out of sight, named while
 * its temporary has a name in a directory.  A batch writes several
 * outputs at once, a one-file run one.  Lock-free, for a handler: a
 * slot's name and directory are set while it is only claimed, and read
 * only while it is named.  A slot is 1 + its index; 0 is none. */
#ifndef SP_PENDING_H
#define SP_PENDING_H

/* sp_pending_claim: a free slot, claimed; 0 when none is free. */
int sp_pending_claim(void);

/* sp_pending_name: SLOT's temporary is NAME in the directory DIR. */
void sp_pending_name(int slot, int dir, const char *name);

/* sp_pending_unname: SLOT's temporary has no name to remove any more. */
void sp_pending_unname(int slot);

/* sp_pending_free: SLOT freed; returns 0, for the caller's slot. */
int sp_pending_free(int slot);

/* sp_outfile_discard_pending: for a signal handler (async-signal-safe):
 * remove the named temporaries being written, if any.  Returns 1 when an
 * output was being written out of sight (so its target is untouched), 0
 * when none was, or it was written in place. */
int sp_outfile_discard_pending(void);

#endif
