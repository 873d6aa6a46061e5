/* names.h: the file names of a batch (batch.h): the inputs, read from a
 * list as well as the command line, and the output each one writes. */
#ifndef SP_NAMES_H
#define SP_NAMES_H

#include <stddef.h>
#include <stdio.h>

#include "status.h"

/* A growing array of names, each its own malloc'd string. */
struct sp_names {
    char **name;
    size_t n, cap;
};

/* sp_names_add: a copy of NAME appended to L: 0 or ENOMEM. */
sp_status sp_names_add(struct sp_names *l, const char *name);

/* sp_names_read: the names in F appended to L, each ended by SEP ('\n'
 * or '\0'; the last may go without): every byte else is part of a name,
 * blanks and leading dashes too; empty names are skipped.  0, ENOMEM or
 * the errno value of a read error. */
sp_status sp_names_read(FILE *f, int sep, struct sp_names *l);

/* sp_names_free: L's strings and array, and L emptied. */
void sp_names_free(struct sp_names *l);

/* sp_batch_name: into OUT (LEN bytes), the output TARGET gives the input
 * IN, whose path below the tree a batch mirrors is REL (sp_names_relative)
 * or NULL when none is.  TARGET is a directory when DIR is set: the
 * output is REL, or else IN's base name, in it, its extension replaced by
 * FORMAT when FORMAT is not NULL.  Otherwise TARGET is a pattern: each %s
 * is IN's base name without its extension, each %r REL without its
 * extension (a %r with no REL is copied as it is), and %% a %.  An output
 * named "-" is "./-": a batch never writes to standard output.  Returns
 * 0, or ENAMETOOLONG. */
sp_status sp_batch_name(const char *target, int dir, const char *format,
                        const char *in, const char *rel, char *out,
                        size_t len);

/* sp_pattern_ok: whether the pattern TARGET names each input apart: it
 * holds a %s or a %r, and no % but in %s, %r and %%. */
int sp_pattern_ok(const char *target);

/* sp_pattern_has_rel: whether the pattern TARGET holds a %r. */
int sp_pattern_has_rel(const char *target);

/* sp_names_relative: into REL (LEN bytes), the path of the input IN below
 * the directory BASE, both taken from CWD when relative: what a batch
 * mirrors of IN's tree.  Compared as written, component by component
 * ("." and repeated slashes aside), not resolved: a link below BASE is
 * part of the tree.  Returns 0, ENOMEM, ENAMETOOLONG, or EINVAL when IN
 * is not below BASE, or has a ".." below it (its output would leave the
 * output's tree). */
sp_status sp_names_relative(const char *cwd, const char *base,
                            const char *in, char *rel, size_t len);

/* sp_names_make_dir: the directory part of the output PATH made when
 * missing, with its parents, as mkdir -p makes them (mode 0777 less the
 * umask), each directory it made added to CREATED (NULL: not kept), so
 * that a batch refused afterwards can remove them.  MADE (LEN bytes) gets
 * that directory, or on failure the prefix that failed.  Returns 0,
 * ENAMETOOLONG, ENOMEM, or the errno value of the failure (ENOTDIR for a
 * part that is not a directory). */
sp_status sp_names_make_dir(const char *path, char *made, size_t len,
                            struct sp_names *created);

/* sp_names_clash: whether two of the N output names in NAMES would write
 * one file; if so *FIRST and *SECOND are the indexes of the first such
 * pair (first < second, the lowest second).  Names are compared by what
 * they lead to, not as strings: an existing file by device and inode,
 * following symbolic links as the write will (a dangling one to the file
 * it names, which an earlier output may create); a new file by its
 * directory's device and inode and its name there; a name whose
 * directory cannot be found, as a string.  0 when none, 1 when found, -1
 * when there was no memory to look. */
int sp_names_clash(char *const *names, size_t n, size_t *first,
                   size_t *second);

/* sp_names_overwrite: whether an existing output in OUT is one of the
 * files in IN (N of each; the same file by device and inode, whatever its
 * name): a batch would overwrite an input.  If so *I is that output's
 * index and *J the input's.  0 when none, 1 when found, -1 when there
 * was no memory to look. */
int sp_names_overwrite(char *const *in, char *const *out, size_t n,
                       size_t *i, size_t *j);

#endif
