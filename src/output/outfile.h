/* outfile.h: an output file that appears whole or not at all.
 *
 * sp_outfile_open() decides how PATH is written:
 *   - a descriptor the process already holds is written directly, at its
 *     offset and with its flags, so `>> all.ppm` appends and `>(cmd)` gets
 *     the bytes: N in the process's table of descriptors (/dev/fd/N,
 *     /proc/self/fd/N, /proc/PID/fd/N, however spelled), or the file
 *     standard output or standard error is (/dev/stdout, //dev/stdout,
 *     /proc/thread-self/fd/1, and a plain name of that file too), found
 *     by device and inode, not by name;
 *   - an existing file that is not a regular file (a device, a FIFO) is
 *     written in place;
 *   - anything else is written to a new file in the target's directory,
 *     out of sight until sp_outfile_commit() renames it over the target:
 *     an unnamed O_TMPFILE where the filesystem has them (nothing to clean
 *     up after any ending, SIGKILL included), else a named ".NAME.XXXXXX"
 *     that sp_outfile_close() removes, and the program's signal handler
 *     through its registry (pending.h), if it installed one.
 *
 * The kernel follows every symbolic link, with its rules
 * (fs.protected_symlinks); a dangling link is refused, as cp refuses it.
 * An existing regular file is replaced only if the caller may write to it
 * and it has no other hard link; the new file gets its permission bits
 * less setuid, setgid and sticky, its owner and group where the caller
 * may set them, and is fsynced before the rename, its directory after, so
 * that a crash leaves the old version or the new one, whole.  A new file
 * is not fsynced, as cp and the peers do not: a crash can leave its name
 * on an empty or short file, but no data is lost (its input makes it
 * again), and --skip-existing tells such a file from a whole one
 * (sp_output_whole, write.h).  Fsyncing every new output made the Sun
 * study's enlarges, which write up to 250 MB a run, five times slower. */
#ifndef SP_OUTFILE_H
#define SP_OUTFILE_H

#include <sys/stat.h>

#include "pending.h"
#include "status.h"

struct sp_outfile {
    int fd;        /* what to write; the caller closes it, after commit */
    int dir;       /* O_PATH descriptor of the target's directory, or -1
                      when the output is written in place */
    char *name;    /* the target's name in DIR */
    char *tmp;     /* the named temporary's name in DIR, or NULL */
    int replace;   /* the target exists: make its replacement durable */
    int slot;      /* the program's registry's slot for it (pending.h),
                      or 0 */
};

/* sp_outfile_open: open PATH for writing as above.  With NOWAIT it never
 * waits: a target that is there and not a regular file (a FIFO with no
 * reader, a device), whose open may wait, is refused without being
 * opened for writing, however it came there (a batch checks its outputs
 * first, but one may be made after the check).  WHY (SP_WHY_MAX) may get
 * a detail.  Returns 0, an errno value (EACCES, EISDIR, EBADF for a
 * descriptor that is not open for writing, ...), or SP_E_REFUSED (a
 * dangling link, a file with other hard links, with NOWAIT a target that
 * is no regular file); on failure nothing is left open or created. */
sp_status sp_outfile_open(struct sp_outfile *o, const char *path,
                          int nowait, char *why);

/* sp_outfile_held: whether PATH names a descriptor the process holds, as
 * sp_outfile_open() finds it, "-" naming standard output; if so *SB gets
 * what fstat says of it.  Such an output is written in place, so a
 * caller can refuse one that is its input (cat's "input file is output
 * file") before a byte is written. */
int sp_outfile_held(const char *path, struct stat *sb);

/* sp_outfile_commit: with every byte written to O->fd, put the file in
 * place under the target's name (nothing to do when written in place).
 * Returns 0 or an errno value; on failure the target is as it was. */
sp_status sp_outfile_commit(struct sp_outfile *o);

/* sp_outfile_close: forget O: a named temporary not committed is removed
 * (an unnamed one goes with its descriptor).  O->fd is the caller's to
 * close.  Safe on an O that failed to open and after a commit. */
void sp_outfile_close(struct sp_outfile *o);

#endif
