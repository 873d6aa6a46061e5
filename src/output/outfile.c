#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pending.h"
#include "sys.h"

/* hold_signals: no handler runs in this thread until the mask OLD is put
 * back, so a temporary is never named without being registered.  A
 * one-file run opens its output before the job's threads start and
 * commits it after they are joined, so no other thread is there to take
 * a signal; a batch blocks its signals in every thread, and waits for
 * them on one of its own. */
static void hold_signals(sigset_t *old)
{
    sigset_t all;

    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, old);
}

/* same_file: whether A and B (from stat) are one file. */
static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* fd_number: N when PATH is "DIR/N" and DIR is this process's table of
 * descriptors, however it is spelled (/dev/fd, /proc/self/fd,
 * /proc/PID/fd, /proc/thread-self/fd, //dev/fd): the kernel resolves DIR,
 * and its identity is compared.  Else -1. */
static int fd_number(const char *path)
{
    const char *slash = strrchr(path, '/');
    struct stat dir, own;
    size_t digits;
    char *name;
    int fd, n = -1;

    if (slash == NULL || slash == path)
        return -1;
    digits = strspn(slash + 1, "0123456789");
    if (digits == 0 || digits > 9 || slash[1 + digits] != '\0')
        return -1;
    name = strndup(path, (size_t)(slash - path));
    fd = name != NULL ? open(name, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
    free(name);
    if (fd < 0)
        return -1;
    if (fstat(fd, &dir) == 0 &&
        ((stat("/proc/self/fd", &own) == 0 && same_file(&dir, &own)) ||
         (stat("/proc/thread-self/fd", &own) == 0 && same_file(&dir, &own))))
        n = atoi(slash + 1);
    close(fd);
    return n;
}

/* held_fd: the descriptor the process holds that PATH names, or -1.  A
 * descriptor is recognised by what it is, never by how it is named:
 * DIR/N in the process's descriptor table is N (open or not: N not open
 * is an error, not a file to create); else a file that is the one
 * standard output or standard error writes (/dev/stdout, //dev/stdout,
 * /proc/PID/fd/1, the terminal's device, a FIFO) is that descriptor.
 *
 * So `scaleppm in.ppm f >> f` appends to f through standard output, as
 * `scaleppm in.ppm >> f` would: f and standard output are one file, and
 * of the two ways to write it the shell's descriptor is the one the user
 * set up with >>; replacing f instead would leave that descriptor on a
 * removed file, and the result would depend on which was written last. */
static int held_fd(const char *path)
{
    static const int std[] = {STDOUT_FILENO, STDERR_FILENO};
    struct stat want, sb;
    int n = fd_number(path), fd;

    if (n >= 0)
        return n;
    fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return -1;
    /* with standard output closed, FD may be 1 itself: not a match */
    if (fstat(fd, &want) == 0)
        for (size_t i = 0; i < sizeof std / sizeof *std && n < 0; i++)
            if (std[i] != fd && fstat(std[i], &sb) == 0 &&
                same_file(&want, &sb))
                n = std[i];
    close(fd);
    return n;
}

/* open_held: write straight into descriptor N, shared with whoever opened
 * it (its offset, O_APPEND). */
static sp_status open_held(struct sp_outfile *o, int n, char *why)
{
    int flags = fcntl(n, F_GETFL);

    if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY) {
        snprintf(why, SP_WHY_MAX, "descriptor %d is not open for writing",
                 n);
        return EBADF;
    }
    o->fd = fcntl(n, F_DUPFD_CLOEXEC, 3);
    return o->fd < 0 ? errno : SP_OK;
}

/* open_in_place: open PATH, found to be WAS (not a regular file), for
 * writing; it must still be WAS once open. */
static sp_status open_in_place(struct sp_outfile *o, const char *path,
                               const struct stat *was, char *why)
{
    struct stat sb;
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);

    if (fd < 0)
        return errno;
    if (fstat(fd, &sb) != 0 || !same_file(&sb, was)) {
        close(fd);
        snprintf(why, SP_WHY_MAX, "it changed while it was being opened");
        return SP_E_REFUSED;
    }
    o->fd = fd;
    return SP_OK;
}

/* at_dir: O->dir and O->name for the file at PATH. */
static sp_status at_dir(struct sp_outfile *o, const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash != NULL ? slash + 1 : path;
    char *dir;

    if (*name == '\0')
        return EISDIR;
    dir = slash == NULL   ? strdup(".")
          : slash == path ? strdup("/")
                          : strndup(path, (size_t)(slash - path));
    o->name = strdup(name);
    if (dir == NULL || o->name == NULL) {
        free(dir);
        return ENOMEM;
    }
    o->dir = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    return o->dir < 0 ? errno : SP_OK;
}

/* temp_name: a fresh ".NAME.XXXXXX" for NAME in BUF (NAME_MAX + 1), NAME
 * cut short to fit. */
static void temp_name(char *buf, const char *name)
{
    static atomic_uint seq;
    uint32_t r;

    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = (uint32_t)getpid() * 2654435761u + seq++;
    snprintf(buf, NAME_MAX + 1, ".%.*s.%06" PRIx32, NAME_MAX - 8, name,
             r & 0xffffff);
}

/* link_name: make a new name for O's file; LINK (O->fd to LINK at a name
 * in O->dir) either links the unnamed file or creates a named one. */
static sp_status link_name(struct sp_outfile *o,
                           int (*link)(struct sp_outfile *, const char *))
{
    char *buf = malloc(NAME_MAX + 1);
    sp_status st;

    if (buf == NULL)
        return ENOMEM;
    for (int tries = 0; tries < 100; tries++) {
        temp_name(buf, o->name);
        if (link(o, buf) == 0) {
            o->tmp = buf;
            return SP_OK;
        }
        if (errno != EEXIST)
            break;
    }
    st = errno;
    free(buf);
    return st;
}

/* NEW_MODE: the bits a new file is made with, less the umask. */
#define NEW_MODE 0666

static int create_named(struct sp_outfile *o, const char *name)
{
    o->fd = sp_sys.openat(o->dir, name,
                          O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW |
                              O_CLOEXEC,
                          NEW_MODE);
    return o->fd < 0 ? -1 : 0;
}

static int link_unnamed(struct sp_outfile *o, const char *name)
{
    char proc[32];

    snprintf(proc, sizeof proc, "/proc/self/fd/%d", o->fd);
    return linkat(AT_FDCWD, proc, o->dir, name, AT_SYMLINK_FOLLOW);
}

/* create: the new file in O->dir, unnamed where the filesystem and /proc
 * allow it (it can be linked in at the end), else named and registered
 * for the signal handler. */
static sp_status create(struct sp_outfile *o, char *why)
{
    char proc[32];
    sigset_t old;
    sp_status st;

    o->fd = sp_sys.openat(o->dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC,
                          NEW_MODE);
    if (o->fd >= 0) {
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", o->fd);
        if (access(proc, F_OK) == 0) {
            o->slot = sp_pending_claim();
            return SP_OK;
        }
        close(o->fd);
    } else if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
        st = errno;
        goto out;
    }
    hold_signals(&old);
    st = link_name(o, create_named);
    if (st == SP_OK) {
        o->slot = sp_pending_claim();
        sp_pending_name(o->slot, o->dir, o->tmp);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
out:
    if (st != SP_OK)
        snprintf(why, SP_WHY_MAX, "cannot create a file in its directory");
    return st;
}

/* adopt_owner: give O's new file the replaced file's permission bits
 * (less setuid, setgid, sticky) and, where allowed, its owner and group
 * (a failed chown keeps ours, as sed -i does). */
static sp_status adopt_owner(struct sp_outfile *o, const struct stat *was)
{
    if ((was->st_uid != geteuid() || was->st_gid != getegid()) &&
        fchown(o->fd, was->st_uid, was->st_gid) != 0)
        (void)fchown(o->fd, (uid_t)-1, was->st_gid);
    return fchmod(o->fd, was->st_mode & 0777) != 0 ? errno : SP_OK;
}

/* final_path: where PATH, open as FD, leads: PATH, or, when PATH is a
 * symbolic link, the file the kernel opened, as /proc names it. */
static sp_status final_path(int fd, const char *path, char **out)
{
    char proc[32], *buf;
    struct stat sb;
    ssize_t n;

    if (lstat(path, &sb) != 0)
        return errno;
    if (!S_ISLNK(sb.st_mode)) {
        *out = strdup(path);
        return *out == NULL ? ENOMEM : SP_OK;
    }
    buf = malloc(PATH_MAX);
    if (buf == NULL)
        return ENOMEM;
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    n = readlink(proc, buf, PATH_MAX - 1);
    if (n < 0) {
        free(buf);
        return errno;
    }
    buf[n] = '\0';
    *out = buf;
    return SP_OK;
}

/* check_replace: may O's target, found as WAS, be replaced? */
static sp_status check_replace(struct sp_outfile *o, const struct stat *was,
                               char *why)
{
    struct stat now;

    if (fstatat(o->dir, o->name, &now, AT_SYMLINK_NOFOLLOW) != 0 ||
        !same_file(&now, was)) {
        snprintf(why, SP_WHY_MAX, "it changed while it was being opened");
        return SP_E_REFUSED;
    }
    if (was->st_nlink > 1) {
        snprintf(why, SP_WHY_MAX, "it has %ju hard links, which replacing "
                 "it would break", (uintmax_t)was->st_nlink);
        return SP_E_REFUSED;
    }
    if (faccessat(o->dir, o->name, W_OK, AT_EACCESS) != 0)
        return errno;
    o->replace = 1;
    return SP_OK;
}

/* open_replacement: a new file to replace the regular file open as FD
 * (O_PATH) at PATH, found as WAS. */
static sp_status open_replacement(struct sp_outfile *o, int fd,
                                  const char *path, const struct stat *was,
                                  char *why)
{
    char *final = NULL;
    sp_status st = final_path(fd, path, &final);

    if (st == SP_OK)
        st = at_dir(o, final);
    free(final);
    if (st == SP_OK)
        st = check_replace(o, was, why);
    if (st == SP_OK)
        st = create(o, why);
    if (st == SP_OK)
        st = adopt_owner(o, was);
    return st;
}

/* open_target: PATH, not a descriptor the process holds, opened as
 * outfile.h says; with NOWAIT a target that is there and not a regular
 * file is refused before it is opened for writing (its O_PATH descriptor
 * waits for nothing). */
static sp_status open_target(struct sp_outfile *o, const char *path,
                             int nowait, char *why)
{
    struct stat sb;
    sp_status st;
    int fd = open(path, O_PATH | O_CLOEXEC);

    if (fd < 0 && errno != ENOENT)
        return errno;
    if (fd < 0) {
        if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
            snprintf(why, SP_WHY_MAX, "a dangling symbolic link: not "
                     "written through (cp refuses too)");
            return SP_E_REFUSED;
        }
        st = at_dir(o, path);
        return st == SP_OK ? create(o, why) : st;
    }
    if (fstat(fd, &sb) != 0)
        st = errno;
    else if (S_ISDIR(sb.st_mode))
        st = EISDIR;
    else if (!S_ISREG(sb.st_mode) && nowait) {
        snprintf(why, SP_WHY_MAX, "%s, not a regular file: not opened "
                 "(opening one may wait)",
                 S_ISFIFO(sb.st_mode) ? "a FIFO" : "a device or a socket");
        st = SP_E_REFUSED;
    } else if (!S_ISREG(sb.st_mode))
        st = open_in_place(o, path, &sb, why);
    else
        st = open_replacement(o, fd, path, &sb, why);
    close(fd);
    return st;
}

int sp_outfile_held(const char *path, struct stat *sb)
{
    int n = strcmp(path, "-") == 0 ? STDOUT_FILENO : held_fd(path);

    return n >= 0 && fstat(n, sb) == 0;
}

sp_status sp_outfile_open(struct sp_outfile *o, const char *path,
                          int nowait, char *why)
{
    int n = held_fd(path);
    sp_status st;

    *o = (struct sp_outfile){.fd = -1, .dir = -1};
    st = n >= 0 ? open_held(o, n, why) : open_target(o, path, nowait, why);
    if (st != SP_OK) {
        if (o->fd >= 0)
            close(o->fd);
        sp_outfile_close(o);  /* which forgets O->fd */
    }
    return st;
}

/* sync_dir: make the rename in O->dir durable.  Advice after the fact:
 * the file is in place, and a directory we may not open is left alone. */
static void sync_dir(const struct sp_outfile *o)
{
    int d = sp_sys.openat(o->dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (d >= 0) {
        (void)sp_sys.fsync(d);
        close(d);
    }
}

sp_status sp_outfile_commit(struct sp_outfile *o)
{
    sigset_t old;
    sp_status st = SP_OK;

    if (o->dir < 0)
        return SP_OK;
    if (o->replace && sp_sys.fsync(o->fd) != 0)
        return errno;
    hold_signals(&old);
    if (o->tmp == NULL) {  /* unnamed: name it for the rename */
        st = link_name(o, link_unnamed);
        if (st == SP_OK)
            sp_pending_name(o->slot, o->dir, o->tmp);
    }
    if (st == SP_OK && renameat(o->dir, o->tmp, o->dir, o->name) != 0)
        st = errno;
    if (o->tmp != NULL)
        sp_pending_unname(o->slot);
    if (st != SP_OK && o->tmp != NULL)
        (void)unlinkat(o->dir, o->tmp, 0);
    free(o->tmp);
    o->tmp = NULL;
    if (st == SP_OK)
        o->slot = sp_pending_free(o->slot);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (st == SP_OK && o->replace)
        sync_dir(o);
    return st;
}

void sp_outfile_close(struct sp_outfile *o)
{
    sigset_t old;

    /* Signals held only while there is a name or a slot to undo: not for
     * an output written in place, nor a target that is no path (two
     * system calls a request of the server). */
    if (o->tmp != NULL || o->slot != 0) {
        hold_signals(&old);
        if (o->tmp != NULL) {
            sp_pending_unname(o->slot);
            (void)unlinkat(o->dir, o->tmp, 0);
        }
        o->slot = sp_pending_free(o->slot);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    free(o->tmp);
    free(o->name);
    if (o->dir >= 0)
        close(o->dir);
    *o = (struct sp_outfile){.fd = -1, .dir = -1};
}
