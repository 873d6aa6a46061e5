/* outnames.h: the outputs of a batch named, their folders made, and
 * refused where they could not each appear whole and apart: library
 * code, which says why in a line its caller prints (cli_batch.c). */
#ifndef SP_OUTNAMES_H
#define SP_OUTNAMES_H

#include "names.h"
#include "status.h"

/* How a batch names its outputs (names.h, sp_batch_name). */
struct sp_naming {
    const char *target;       /* a directory, or a %s / %r pattern */
    int target_dir;           /* TARGET is a directory */
    const char *format;       /* the outputs' extension, or NULL */
    const char *relative_to;  /* the tree mirrored, or NULL */
    /* suit: the caller's own check of each output's name, before any
     * folder is made (the command line's: --quality for a JPEG only);
     * 0 accepts it, else it is refused and the caller has said why.
     * NULL: none. */
    int (*suit)(void *arg, const char *out);
    void *suit_arg;
};

/* Why a batch's outputs were refused. */
struct sp_refusal {
    int usage;   /* the command asks for what cannot be (exit status 2),
                    not a failure of the system (1) */
    char *line;  /* what to say, one line without the program's name
                    (malloc'd; the caller frees it), or NULL when SUIT
                    refused and said it, or no memory was left */
};

/* sp_batch_outputs: into OUT, the output N names for each of the inputs
 * IN (refused if one has an empty file name, as IN/ under %s gives, or
 * an extension no format has); their folders made where missing (mkdir
 * -p), before any file is scaled, so that a missing one is one refusal
 * and not a failure a file;
 * then refused if one is a descriptor the process holds (standard
 * output, by any name), is there and no regular file (written in place,
 * it could not appear whole or not at all), would be written by two
 * inputs, or is an input.  Returns 0, or nonzero with *WHY saying why,
 * the folders it made removed.  The folders are made before the outputs
 * are compared, since a new output is known by its folder
 * (sp_names_clash). */
int sp_batch_outputs(const struct sp_naming *n, const struct sp_names *in,
                     struct sp_names *out, struct sp_refusal *why);

#endif
