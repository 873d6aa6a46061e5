#include "names.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

sp_status sp_names_add(struct sp_names *l, const char *name)
{
    char *copy;

    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        char **grown = realloc(l->name, cap * sizeof *grown);

        if (grown == NULL)
            return ENOMEM;
        l->name = grown;
        l->cap = cap;
    }
    copy = strdup(name);
    if (copy == NULL)
        return ENOMEM;
    l->name[l->n++] = copy;
    return SP_OK;
}

sp_status sp_names_read(FILE *f, int sep, struct sp_names *l)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    sp_status st = SP_OK;

    errno = 0;
    while (st == SP_OK && (got = getdelim(&line, &cap, sep, f)) >= 0) {
        if (got > 0 && line[got - 1] == (char)sep)
            line[--got] = '\0';
        if (got > 0)
            st = sp_names_add(l, line);
        errno = 0;
    }
    if (st == SP_OK && ferror(f))
        st = errno ? errno : EIO;
    free(line);
    return st;
}

void sp_names_free(struct sp_names *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->name[i]);
    free(l->name);
    *l = (struct sp_names){0};
}

/* put: N bytes of S at *AT in OUT (LEN bytes), leaving room for the
 * terminating NUL; -1 when they do not fit. */
static int put(char *out, size_t len, size_t *at, const char *s, size_t n)
{
    if (n >= len - *at)
        return -1;
    memcpy(out + *at, s, n);
    *at += n;
    return 0;
}

/* stem: how much of NAME is kept without its extension: up to the last
 * dot of its final component, unless that dot starts the component. */
static size_t stem(const char *name)
{
    const char *slash = strrchr(name, '/');
    const char *base = slash != NULL ? slash + 1 : name;
    const char *dot = strrchr(base, '.');

    return dot != NULL && dot != base ? (size_t)(dot - name) : strlen(name);
}

sp_status sp_batch_name(const char *target, int dir, const char *format,
                        const char *in, const char *rel, char *out,
                        size_t len)
{
    const char *slash = strrchr(in, '/');
    const char *base = slash != NULL ? slash + 1 : in;
    const char *kept = rel != NULL ? rel : base;  /* under a -o DIR/ */
    size_t at = 0, n = strlen(target);
    int bad = 0;

    if (dir) {
        bad |= put(out, len, &at, target, n);
        if (n > 0 && target[n - 1] != '/')
            bad |= put(out, len, &at, "/", 1);
        if (format == NULL) {
            bad |= put(out, len, &at, kept, strlen(kept));
        } else {
            bad |= put(out, len, &at, kept, stem(kept));
            bad |= put(out, len, &at, ".", 1);
            bad |= put(out, len, &at, format, strlen(format));
        }
    } else {
        for (const char *p = target; *p != '\0' && !bad; p++) {
            if (p[0] == '%' && p[1] == 's')
                bad |= put(out, len, &at, base, stem(base)), p++;
            else if (p[0] == '%' && p[1] == 'r' && rel != NULL)
                bad |= put(out, len, &at, rel, stem(rel)), p++;
            else if (p[0] == '%' && p[1] == '%')
                bad |= put(out, len, &at, "%", 1), p++;
            else
                bad |= put(out, len, &at, p, 1);
        }
    }
    out[at] = '\0';
    /* "-" would be standard output to the writer: a batch writes files */
    if (!bad && strcmp(out, "-") == 0) {
        if (len < sizeof "./-")
            return ENAMETOOLONG;
        memcpy(out, "./-", sizeof "./-");
    }
    return bad ? ENAMETOOLONG : SP_OK;
}

int sp_pattern_ok(const char *target)
{
    int has = 0;

    for (const char *p = target; *p != '\0'; p++) {
        if (*p != '%')
            continue;
        if (p[1] == 's' || p[1] == 'r')
            has = 1;
        else if (p[1] != '%')
            return 0;
        p++;
    }
    return has;
}

int sp_pattern_has_rel(const char *target)
{
    for (const char *p = target; *p != '\0'; p++) {
        if (p[0] == '%' && p[1] == 'r')
            return 1;
        if (p[0] == '%' && p[1] != '\0')
            p++;
    }
    return 0;
}

/* next_part: the next component of the path at *P (its length in *N),
 * "" and "." skipped; NULL at the end. */
static const char *next_part(const char **p, size_t *n)
{
    for (;;) {
        const char *s = *p + strspn(*p, "/");

        *n = strcspn(s, "/");
        *p = s + *n;
        if (*n == 0)
            return NULL;
        if (!(*n == 1 && s[0] == '.'))
            return s;
    }
}

/* absolute: PATH from CWD when it is relative, into BUF (PATH_MAX). */
static int absolute(const char *cwd, const char *path, char *buf)
{
    int n = path[0] == '/' ? snprintf(buf, PATH_MAX, "%s", path)
                           : snprintf(buf, PATH_MAX, "%s/%s", cwd, path);

    return n < 0 || n >= PATH_MAX ? -1 : 0;
}

sp_status sp_names_relative(const char *cwd, const char *base,
                            const char *in, char *rel, size_t len)
{
    char *b = malloc(PATH_MAX), *i = malloc(PATH_MAX);
    const char *bp = b, *ip = i, *bs, *is;
    size_t bn, in_n, at = 0;
    sp_status st = SP_OK;

    if (b == NULL || i == NULL)
        st = ENOMEM;
    else if (absolute(cwd, base, b) != 0 || absolute(cwd, in, i) != 0)
        st = ENAMETOOLONG;
    /* BASE's components, one by one, begin IN's */
    while (st == SP_OK && (bs = next_part(&bp, &bn)) != NULL) {
        is = next_part(&ip, &in_n);
        if (is == NULL || in_n != bn || memcmp(is, bs, bn) != 0)
            st = EINVAL;
    }
    while (st == SP_OK && (is = next_part(&ip, &in_n)) != NULL) {
        if (in_n == 2 && memcmp(is, "..", 2) == 0)
            st = EINVAL;
        else if ((at > 0 && put(rel, len, &at, "/", 1) != 0) ||
                 put(rel, len, &at, is, in_n) != 0)
            st = ENAMETOOLONG;
    }
    if (st == SP_OK && at == 0)
        st = EINVAL;  /* BASE itself */
    if (len > 0)
        rel[st == SP_OK ? at : 0] = '\0';
    free(b);
    free(i);
    return st;
}

sp_status sp_names_make_dir(const char *path, char *made, size_t len,
                            struct sp_names *created)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash != NULL ? (size_t)(slash - path) : 0;
    struct stat sb;

    if (n == 0 || n >= len)
        return n >= len ? ENAMETOOLONG : SP_OK;  /* "." or "/" */
    memcpy(made, path, n);
    made[n] = '\0';
    if (stat(made, &sb) == 0)
        return S_ISDIR(sb.st_mode) ? SP_OK : ENOTDIR;
    /* each prefix in turn, as mkdir -p: one that exists is fine if it is
     * a directory (stat follows a link to one) */
    for (size_t k = 1; k <= n; k++) {
        if (k < n && made[k] != '/')
            continue;
        made[k] = '\0';
        if (mkdir(made, 0777) == 0) {
            if (created != NULL && sp_names_add(created, made) != SP_OK)
                return ENOMEM;
        } else if (errno != EEXIST || stat(made, &sb) != 0 ||
                   !S_ISDIR(sb.st_mode)) {
            return errno == EEXIST ? ENOTDIR : errno;
        }
        if (k < n)
            made[k] = '/';
    }
    return SP_OK;
}

/* Where an output is written: an existing file (DEV, INO), or a new
 * file NAME in the directory (DEV, INO), or, when not even its directory
 * can be found, the output's name as given (NAME alone, DEV and INO 0). */
struct out_id {
    enum { EXISTING, NEW_IN_DIR, BY_NAME } kind;
    dev_t dev;
    ino_t ino;
    char *name;     /* NULL for an existing file */
    size_t index;   /* of the output */
};

/* LINKS_MAX: dangling links followed before a name is taken as it is
 * (the kernel's own limit on a path's links). */
#define LINKS_MAX 40

/* dir_of: the directory part of PATH (".", "/" or PATH up to its last
 * slash), malloc'd; *BASE gets what follows it. */
static char *dir_of(const char *path, const char **base)
{
    const char *slash = strrchr(path, '/');

    *base = slash != NULL ? slash + 1 : path;
    if (slash == NULL)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* dangling: where the dangling symbolic link PATH leads, malloc'd: its
 * target, taken from the link's directory when relative.  A batch writes
 * its outputs one after another: an earlier output may create the file
 * the link names, and the write through the link (which the kernel
 * follows) would then replace it, so the link counts as that file.
 * The kernel resolves no link to a file that is not there, so the link is
 * read here, one at a time; the directories on the way stay the kernel's
 * to resolve (identify opens the target's directory). */
static char *dangling(const char *path)
{
    char *target = malloc(PATH_MAX), *dir, *out;
    const char *base;
    ssize_t n;

    if (target == NULL)
        return NULL;
    n = readlink(path, target, PATH_MAX - 1);
    if (n <= 0) {
        free(target);
        return NULL;
    }
    target[n] = '\0';
    if (target[0] == '/')
        return target;
    dir = dir_of(path, &base);
    out = dir != NULL ? malloc(strlen(dir) + strlen(target) + 2) : NULL;
    if (out != NULL)
        sprintf(out, "%s/%s", dir, target);
    free(dir);
    free(target);
    return out;
}

/* identify: into *ID, where the output PATH is written: the file it
 * names, following links as the kernel would; else the directory, which
 * the kernel finds, and the name in it.  0, or -1 when out of memory. */
static int identify(const char *path, struct out_id *id)
{
    struct stat sb;
    const char *base;
    char *dir, *link = NULL;
    int fd, err, depth = 0;
    const char *at = path;

    while (stat(at, &sb) != 0 && errno == ENOENT && depth < LINKS_MAX &&
           lstat(at, &sb) == 0 && S_ISLNK(sb.st_mode)) {
        char *next = dangling(at);

        if (next == NULL)
            break;  /* taken by its name: no worse than before */
        free(link);
        link = next;
        at = link;
        depth++;
    }
    if (stat(at, &sb) == 0) {
        *id = (struct out_id){EXISTING, sb.st_dev, sb.st_ino, NULL, 0};
        free(link);
        return 0;
    }
    err = errno;
    dir = dir_of(at, &base);
    fd = dir != NULL && err == ENOENT
             ? open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)
             : -1;
    if (fd >= 0 && fstat(fd, &sb) == 0)
        *id = (struct out_id){NEW_IN_DIR, sb.st_dev, sb.st_ino, strdup(base),
                              0};
    else
        *id = (struct out_id){BY_NAME, 0, 0, strdup(path), 0};
    if (fd >= 0)
        close(fd);
    free(dir);
    free(link);
    return id->name != NULL ? 0 : -1;
}

static int by_id_then_index(const void *a, const void *b)
{
    const struct out_id *x = a, *y = b;
    int c;

    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    c = x->name != NULL && y->name != NULL ? strcmp(x->name, y->name) : 0;
    if (c != 0)
        return c;
    return (x->index > y->index) - (x->index < y->index);
}

/* same_id: whether X and Y are one file (by_id_then_index but for the
 * index). */
static int same_id(const struct out_id *x, const struct out_id *y)
{
    return x->kind == y->kind && x->dev == y->dev && x->ino == y->ino &&
           (x->name == NULL || strcmp(x->name, y->name) == 0);
}

int sp_names_clash(char *const *names, size_t n, size_t *first,
                   size_t *second)
{
    struct out_id *ids = calloc(n ? n : 1, sizeof *ids);
    size_t made = 0;
    int found = 0;

    if (ids == NULL)
        return -1;
    for (; made < n; made++) {
        if (identify(names[made], &ids[made]) != 0) {
            found = -1;
            break;
        }
        ids[made].index = made;
    }
    if (found == 0)
        qsort(ids, n, sizeof *ids, by_id_then_index);
    for (size_t k = 1; k < n && found >= 0; k++) {
        /* sorted by index within a file: K - 1 is the file's first name
         * when K is its second */
        if (!same_id(&ids[k - 1], &ids[k]) ||
            (k >= 2 && same_id(&ids[k - 2], &ids[k])) ||
            (found && ids[k].index >= *second))
            continue;
        *first = ids[k - 1].index;
        *second = ids[k].index;
        found = 1;
    }
    for (size_t k = 0; k < made; k++)
        free(ids[k].name);
    free(ids);
    return found;
}

/* A file, by device and inode, and the index of the input that names it. */
struct file_id {
    dev_t dev;
    ino_t ino;
    size_t index;
};

static int by_id(const void *a, const void *b)
{
    const struct file_id *x = a, *y = b;

    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return (x->ino > y->ino) - (x->ino < y->ino);
}

int sp_names_overwrite(char *const *in, char *const *out, size_t n,
                       size_t *i, size_t *j)
{
    struct file_id *ids = malloc((n ? n : 1) * sizeof *ids);
    size_t m = 0;
    struct stat sb;
    int found = 0;

    if (ids == NULL)
        return -1;
    for (size_t k = 0; k < n; k++)
        if (stat(in[k], &sb) == 0)
            ids[m++] = (struct file_id){sb.st_dev, sb.st_ino, k};
    qsort(ids, m, sizeof *ids, by_id);
    for (size_t k = 0; k < n && !found; k++) {
        struct file_id key, *hit;

        if (stat(out[k], &sb) != 0)
            continue;
        key = (struct file_id){sb.st_dev, sb.st_ino, 0};
        hit = bsearch(&key, ids, m, sizeof *ids, by_id);
        if (hit != NULL) {
            *i = k;
            *j = hit->index;
            found = 1;
        }
    }
    free(ids);
    return found;
}
