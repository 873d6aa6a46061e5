/* target.h: a target: where an output's bytes go (write.h opens it).
 *
 *   PATH      a file, whole or not at all (outfile.h; "-": standard
 *             output, written in place and never closed);
 *   FD        the caller's descriptor, written in order from where it
 *             stands, never closed;
 *   MEMORY    a buffer grown as the bytes come: on success, and only
 *             then, *DATA is set to it, malloc'd, holding *LEN bytes, the
 *             caller's to free(); a failure leaves both untouched;
 *   CALLBACK  WRITE(ARG, P, N) for each run of bytes, in order; it takes
 *             all N bytes and returns 0, or fails with a status, which
 *             fails the output with it (nothing more is written);
 *   IMAGE     no bytes: the scaled image itself, whole, in *IMAGE (and
 *             its metadata in *META), on success and only then, the
 *             caller's to release (sp_image_release, sp_meta_free); a
 *             failure leaves both untouched.  The job fills it (job.h);
 *             an output (write.h) is never opened on it.
 * NONE (the zero target) writes nothing.  NAME, unless NULL, is what
 * messages call it; else sp_target_name()'s default.  Made by the
 * sp_target_*() calls below. */
#ifndef SP_TARGET_H
#define SP_TARGET_H

#include <stddef.h>
#include <stdio.h>

#include "outfile.h"
#include "status.h"

enum sp_target_kind {
    SP_TARGET_NONE,
    SP_TARGET_PATH,
    SP_TARGET_FD,
    SP_TARGET_MEMORY,
    SP_TARGET_CALLBACK,
    SP_TARGET_IMAGE
};

struct sp_image;
struct sp_meta;

/* A target's callback: the N bytes at P written; 0, or the status that
 * fails the output. */
typedef sp_status sp_write_fn(void *arg, const void *p, size_t n);

struct sp_target {
    enum sp_target_kind kind;
    const char *path;       /* PATH */
    int fd;                 /* FD */
    unsigned char **data;   /* MEMORY: where the buffer goes, */
    size_t *len;            /* and its length */
    sp_write_fn *write;     /* CALLBACK, with ARG */
    void *arg;
    struct sp_image *image; /* IMAGE: where the image goes, */
    struct sp_meta *meta;   /* and its metadata */
    const char *name;       /* what messages call it; NULL: default */
    char label[16];         /* FD's default name, "fd N" */
};

/* sp_target_path, sp_target_fd, sp_target_memory, sp_target_callback: a
 * target of each kind, named by default (NAME NULL). */
struct sp_target sp_target_path(const char *path);
struct sp_target sp_target_fd(int fd);
struct sp_target sp_target_memory(unsigned char **data, size_t *len);
struct sp_target sp_target_callback(sp_write_fn *write, void *arg);
struct sp_target sp_target_image(struct sp_image *image,
                                 struct sp_meta *meta);

/* sp_target_name: what messages call T: its NAME if set, else its path,
 * "fd N", "memory", "callback" or "image"; NULL for NONE.  Valid as long as T
 * is. */
const char *sp_target_name(const struct sp_target *t);

struct sp_sink;

/* A target opened for an output (write.h's): F is what the encoders
 * write to; FD its descriptor, for what writes on one directly (writev,
 * vmsplice), -1 for memory and callbacks; PIPE: FD is a pipe, widened
 * (standard output only); FILE a path's atomic file (outfile.h); SINK a
 * memory or callback target's state; T the target, copied. */
struct sp_target_file {
    FILE *f;
    int fd;
    int pipe;
    struct sp_outfile file;
    struct sp_sink *sink;
    struct sp_target t;
};

/* sp_target_open: TF opened on T (copied; a memory target's DATA and
 * LEN, a callback's ARG, must outlive TF), a path as sp_outfile_open()
 * opens it with NOWAIT, standard output ("-") as it is, a descriptor
 * through a duplicate, memory and callbacks through a stdio cookie.  WHY
 * (SP_WHY_MAX) may get a detail.  Returns 0, an errno value (EINVAL for
 * a target with nothing to write to) or sp_outfile_open()'s status; on
 * failure TF holds nothing, and sp_target_close() is still safe. */
sp_status sp_target_open(struct sp_target_file *tf, const struct sp_target *t,
                         int nowait, char *why);

/* sp_target_close: TF flushed; with ST 0 put in place (a path's commit,
 * memory handed to the caller); closed (never standard output nor the
 * caller's descriptor).  Returns 0, or the status of the failure: a
 * callback's once it failed (what failed after it failed with it), else
 * ST if non-zero, else the errno value of what failed here.  Safe on a
 * TF never opened, once zeroed with FD and FILE.FD -1 (sp_target_init). */
sp_status sp_target_close(struct sp_target_file *tf, sp_status st);

/* sp_target_init: TF holding nothing. */
void sp_target_init(struct sp_target_file *tf);

#endif
