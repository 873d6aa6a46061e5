/* pending.h: the program's registry of the outputs being written out of
 * sight (outfile.c), a hook the program installs, so that its signal
 * handler can remove them.
 *
 * A signal handler that must not leave a temporary behind finds it only
 * through something process-wide: that is the program's (the command
 * line's table, src/cli/cli_pending.c), not the library's.  The output
 * file tells the hook, if one is installed, when an output goes out of
 * sight (claim), when its temporary gets a name in a directory and loses
 * it (name, unname), and when it is done (release); with none (a library
 * host, the default) nothing is registered and nothing is kept.  A slot
 * is the hook's number for an output, 0 none. */
#ifndef SP_PENDING_H
#define SP_PENDING_H

struct sp_pending_hooks {
    int (*claim)(void);  /* a slot, or 0 when there is none */
    void (*name)(int slot, int dir, const char *name);
    void (*unname)(int slot);
    void (*release)(int slot);
};

/* sp_pending_hook: HOOKS (static, NULL: none) told of every output from
 * now on; set by the program before its first job. */
void sp_pending_hook(const struct sp_pending_hooks *hooks);

/* sp_pending_claim: the hook's slot for an output going out of sight; 0
 * with no hook. */
int sp_pending_claim(void);

/* sp_pending_name: SLOT's temporary is NAME in the directory DIR. */
void sp_pending_name(int slot, int dir, const char *name);

/* sp_pending_unname: SLOT's temporary has no name to remove any more. */
void sp_pending_unname(int slot);

/* sp_pending_free: SLOT released; returns 0, for the caller's slot. */
int sp_pending_free(int slot);

#endif
