/* The targets (target.h): each opened as the FILE the encoders write to.
 * A path through the atomic output file (outfile.c), standard output as
 * it is, a descriptor through a duplicate of it (so that closing the FILE
 * leaves the caller's open), memory and callbacks through a stdio cookie
 * that grows the buffer or calls the caller.  What writes on a
 * descriptor itself (write_pnm.c's writev and vmsplice) has one where the
 * target is a path or a descriptor (TF->fd), else writes through the
 * FILE. */
#include "target.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sp_target sp_target_path(const char *path)
{
    return (struct sp_target){.kind = SP_TARGET_PATH, .path = path,
                              .fd = -1};
}

struct sp_target sp_target_fd(int fd)
{
    struct sp_target t = {.kind = SP_TARGET_FD, .fd = fd};

    snprintf(t.label, sizeof t.label, "fd %d", fd);
    return t;
}

struct sp_target sp_target_memory(unsigned char **data, size_t *len)
{
    return (struct sp_target){.kind = SP_TARGET_MEMORY, .fd = -1,
                              .data = data, .len = len};
}

struct sp_target sp_target_callback(sp_write_fn *write, void *arg)
{
    return (struct sp_target){.kind = SP_TARGET_CALLBACK, .fd = -1,
                              .write = write, .arg = arg};
}

struct sp_target sp_target_image(struct sp_image *image,
                                 struct sp_meta *meta)
{
    return (struct sp_target){.kind = SP_TARGET_IMAGE, .fd = -1,
                              .image = image, .meta = meta};
}

const char *sp_target_name(const struct sp_target *t)
{
    if (t->name != NULL)
        return t->name;
    switch (t->kind) {
    case SP_TARGET_NONE:
        return NULL;
    case SP_TARGET_PATH:
        return t->path != NULL ? t->path : "-";
    case SP_TARGET_FD:
        return t->label[0] != '\0' ? t->label : "descriptor";
    case SP_TARGET_MEMORY:
        return "memory";
    case SP_TARGET_CALLBACK:
        return "callback";
    case SP_TARGET_IMAGE:
        break;
    }
    return "image";
}

/* What a memory or callback target's cookie keeps: the buffer grown so
 * far (MEMORY), and the first failure, which is the output's status. */
struct sp_sink {
    struct sp_target t;
    unsigned char *buf;
    size_t len, cap;
    sp_status st;
};

/* SINK_FIRST: a memory target's first buffer; it doubles as it fills. */
#define SINK_FIRST ((size_t)64 * 1024)

static sp_status sink_append(struct sp_sink *s, const char *p, size_t n)
{
    if (n > s->cap - s->len) {
        size_t cap = s->cap ? s->cap : SINK_FIRST;
        unsigned char *b;

        while (cap - s->len < n)
            if (__builtin_mul_overflow(cap, 2, &cap))
                return ENOMEM;
        if ((b = realloc(s->buf, cap)) == NULL)
            return ENOMEM;
        s->buf = b;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, p, n);
    s->len += n;
    return SP_OK;
}

static ssize_t sink_write(void *cookie, const char *p, size_t n)
{
    struct sp_sink *s = cookie;

    if (s->st == SP_OK)
        s->st = s->t.kind == SP_TARGET_MEMORY ? sink_append(s, p, n)
                                               : s->t.write(s->t.arg, p, n);
    if (s->st != SP_OK) {
        errno = s->st > 0 ? s->st : EIO;
        return -1;
    }
    return (ssize_t)n;
}

/* open_sink: TF->f writing to T, a memory or callback target. */
static sp_status open_sink(struct sp_target_file *tf, const struct sp_target *t)
{
    static const cookie_io_functions_t io = {.write = sink_write};

    if (t->kind == SP_TARGET_CALLBACK ? t->write == NULL
                                      : t->data == NULL || t->len == NULL)
        return EINVAL;
    tf->sink = calloc(1, sizeof *tf->sink);
    if (tf->sink == NULL)
        return ENOMEM;
    tf->sink->t = *t;
    tf->f = fopencookie(tf->sink, "wb", io);
    return tf->f == NULL ? ENOMEM : SP_OK;
}

/* open_fd: TF->f writing to a duplicate of FD, so that its close leaves
 * FD open. */
static sp_status open_fd(struct sp_target_file *tf, int fd)
{
    int dup = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 0);

    if (dup < 0)
        return fd < 0 ? EBADF : errno;
    if ((tf->f = fdopen(dup, "wb")) == NULL) {
        sp_status st = errno;

        close(dup);
        return st;
    }
    tf->fd = dup;
    return SP_OK;
}

/* PIPE_BYTES: the pipe size asked for on a pipe output: the most an
 * unprivileged process may set by default (/proc/sys/fs/pipe-max-size).
 * A 64 KiB pipe wakes its reader and blocks its writer 16 times as often:
 * enlarging the 12000x10000 image by 2 into `| cat` took 1.8 s with it,
 * 0.45 s with 1 MiB (by hand, before vmsplice; results/threads has the
 * pipe as it is now). */
#define PIPE_BYTES (1024 * 1024)

/* widen_pipe: whether FD is a pipe; if so, made PIPE_BYTES large where it
 * is smaller and the kernel allows (a refusal keeps the pipe as it is). */
static int widen_pipe(int fd)
{
    struct stat st;
    int size;

    if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode))
        return 0;
    size = fcntl(fd, F_GETPIPE_SZ);
    if (size >= 0 && size < PIPE_BYTES)
        (void)fcntl(fd, F_SETPIPE_SZ, PIPE_BYTES);
    return 1;
}

/* open_path: TF->f writing to PATH ("-": standard output). */
static sp_status open_path(struct sp_target_file *tf, const char *path, int nowait,
                           char *why)
{
    sp_status st;

    if (strcmp(path, "-") == 0) {
        tf->f = stdout;
        tf->fd = STDOUT_FILENO;
        tf->pipe = widen_pipe(STDOUT_FILENO);
        return SP_OK;
    }
    st = sp_outfile_open(&tf->file, path, nowait, why);
    if (st == SP_OK && (tf->f = fdopen(tf->file.fd, "wb")) == NULL) {
        st = errno;
        close(tf->file.fd);
        tf->file.fd = -1;
    }
    if (st == SP_OK)
        tf->fd = tf->file.fd;
    return st;
}

void sp_target_init(struct sp_target_file *tf)
{
    memset(tf, 0, sizeof *tf);
    tf->fd = -1;
    tf->file = (struct sp_outfile){.fd = -1, .dir = -1};
}

sp_status sp_target_open(struct sp_target_file *tf, const struct sp_target *t,
                         int nowait, char *why)
{
    tf->t = *t;
    tf->fd = -1;
    switch (t->kind) {
    case SP_TARGET_PATH:
        return t->path != NULL ? open_path(tf, t->path, nowait, why) : EINVAL;
    case SP_TARGET_FD:
        return open_fd(tf, t->fd);
    case SP_TARGET_MEMORY:
    case SP_TARGET_CALLBACK:
        return open_sink(tf, t);
    case SP_TARGET_NONE:
    case SP_TARGET_IMAGE:  /* the job's to fill, no bytes */
        break;
    }
    return EINVAL;
}

/* failure: the status of TF's FILE's failed flush or close: the sink's
 * own, else errno's. */
static sp_status failure(const struct sp_target_file *tf)
{
    if (tf->sink != NULL && tf->sink->st != SP_OK)
        return tf->sink->st;
    return errno ? errno : EIO;
}

sp_status sp_target_close(struct sp_target_file *tf, sp_status st)
{
    struct sp_sink *s = tf->sink;

    /* a callback's failure is the cause of whatever failed after it */
    if (st != SP_OK && s != NULL && s->st != SP_OK)
        st = s->st;
    if (tf->f != NULL) {
        errno = 0;
        if (fflush(tf->f) != 0 && st == SP_OK)
            st = failure(tf);
        if (ferror(tf->f) && st == SP_OK)
            st = failure(tf);
    }
    /* Standard output is the caller's to close. */
    if (tf->f != stdout) {
        if (st == SP_OK && tf->f != NULL && tf->t.kind == SP_TARGET_PATH)
            st = sp_outfile_commit(&tf->file);
        errno = 0;
        if (tf->f != NULL && fclose(tf->f) != 0 && st == SP_OK)
            st = failure(tf);
        sp_outfile_close(&tf->file);
    }
    if (s != NULL && s->t.kind == SP_TARGET_MEMORY && st == SP_OK) {
        /* what the caller holds is what it got: the doubling's slack
         * given back (a failure keeps the larger block) */
        unsigned char *fit = s->len > 0 && s->len < s->cap
                                 ? realloc(s->buf, s->len)
                                 : NULL;

        if (fit != NULL)
            s->buf = fit;
        *s->t.data = s->buf;
        *s->t.len = s->len;
    } else if (s != NULL) {
        free(s->buf);
    }
    free(s);
    tf->f = NULL;
    tf->sink = NULL;
    tf->fd = -1;
    return st;
}
