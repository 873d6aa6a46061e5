/* A request's path: the one decoder of its escapes, and the opening of
 * what it names beneath the root (path.h). */
#include "path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif

/* hex: the value of the hex digit C, or -1. */
static int hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* unreserved: a character RFC 3986 says a URI writes plainly. */
static int unreserved(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
           c == '~';
}

/* overlong: whether the byte C, followed by NEXT, starts an overlong
 * UTF-8 form. */
static int overlong(unsigned char c, unsigned char next)
{
    return c == 0xC0 || c == 0xC1 || (c == 0xE0 && next < 0xA0) ||
           (c == 0xF0 && next < 0x90);
}

/* decode_byte: the byte at *P (advanced past it and its escape) into *B;
 * 0, or the phrase of the rule it breaks. */
static const char *decode_byte(const char **p, unsigned char *b)
{
    const char *s = *p;
    int hi, lo;

    if (*s != '%') {
        *b = (unsigned char)*s;
        *p = s + 1;
        return *b == '\\' ? "a backslash" : NULL;
    }
    if ((hi = hex(s[1])) < 0 || (lo = hex(s[2])) < 0)
        return "a bad %-escape";
    *b = (unsigned char)(hi << 4 | lo);
    *p = s + 3;
    if (*b == '\0')
        return "an encoded NUL";
    if (*b == '/' || *b == '\\')
        return "an encoded slash or backslash";
    if (unreserved(*b))
        return "an escape of a character that needs none";
    return NULL;
}

/* check_segments: PATH's segments (between '/'s) are none empty, "." or
 * "..": 0, or the phrase of the rule broken. */
static const char *check_segments(const char *path)
{
    const char *s = path;

    for (;;) {
        size_t n = strcspn(s, "/");

        if (n == 0)
            return "an empty segment";
        if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
            return "a '.' or '..' segment";
        if (s[n] == '\0')
            return NULL;
        s += n + 1;
    }
}

sp_status sp_serve_path_decode(const char *raw, char *out, size_t outlen,
                               const char **why)
{
    const char *p = raw + 1;
    size_t n = 0;

    *why = "a path not starting with '/'";
    if (raw[0] != '/')
        return EINVAL;
    while (*p != '\0') {
        unsigned char b;

        if ((*why = decode_byte(&p, &b)) != NULL)
            return EINVAL;
        if (b < 0x20 || b == 0x7F) {
            *why = "a control character";
            return EINVAL;
        }
        if (n > 0 && overlong((unsigned char)out[n - 1], b)) {
            *why = "an overlong UTF-8 form";
            return EINVAL;
        }
        if (n + 1 >= outlen)
            return ENAMETOOLONG;
        out[n++] = (char)b;
    }
    /* a lone 0xC0 or 0xC1 at the end is overlong whatever would follow */
    if (n > 0 && overlong((unsigned char)out[n - 1], 0xFF)) {
        *why = "an overlong UTF-8 form";
        return EINVAL;
    }
    if (outlen == 0)
        return ENAMETOOLONG;
    out[n] = '\0';
    *why = check_segments(out);
    return *why != NULL ? EINVAL : SP_OK;
}

/* OPEN_FLAGS: how the file itself is opened: never waiting for a FIFO's
 * writer, never becoming the controlling terminal. */
#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

/* finish: FD, just opened, kept if it is a regular file (its O_NONBLOCK
 * cleared, *SB filled), else closed.  Returns as sp_serve_open().  Of
 * OPEN_FLAGS, O_NONBLOCK is the one F_SETFL changes: 0 clears it, with no
 * F_GETFL first. */
static sp_status finish(int fd, int *out, struct stat *sb)
{
    sp_status st = SP_OK;

    if (fstat(fd, sb) != 0)
        st = errno;
    else if (S_ISDIR(sb->st_mode))
        st = EISDIR;
    else if (!S_ISREG(sb->st_mode))
        st = EINVAL;
    else if (fcntl(fd, F_SETFL, 0) != 0)
        st = errno;
    if (st != SP_OK) {
        close(fd);
        return st;
    }
    *out = fd;
    return SP_OK;
}

/* link_refused: ERR from an O_NOFOLLOW open of NAME in DIR, made ELOOP
 * when NAME is a symbolic link (O_DIRECTORY says ENOTDIR for one). */
static sp_status link_refused(int dir, const char *name, int err)
{
    struct stat sb;

    if (err == ENOTDIR && fstatat(dir, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(sb.st_mode))
        return ELOOP;
    return err;
}

sp_status sp_serve_open_walk(int root, const char *rel, int *fd,
                             struct stat *sb)
{
    char name[NAME_MAX + 1];
    int dir = root, next;
    const char *s = rel;
    sp_status st;

    for (;;) {
        size_t n = strcspn(s, "/");

        if (n == 0 || n > NAME_MAX) {
            st = n == 0 ? EINVAL : ENAMETOOLONG;
            break;
        }
        memcpy(name, s, n);
        name[n] = '\0';
        if (s[n] == '\0') {
            next = openat(dir, name, OPEN_FLAGS | O_NOFOLLOW);
            st = next < 0 ? errno : finish(next, fd, sb);
            break;
        }
        next = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW |
                                     O_CLOEXEC);
        if (next < 0) {
            st = link_refused(dir, name, errno);
            break;
        }
        if (dir != root)
            close(dir);
        dir = next;
        s += n + 1;
    }
    if (dir != root)
        close(dir);
    return st;
}

#ifdef RESOLVE_BENEATH
sp_status sp_serve_open(int root, const char *rel, int *fd, struct stat *sb)
{
    struct open_how how = {
        .flags = OPEN_FLAGS,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
    };
    long r = syscall(SYS_openat2, root, rel, &how, sizeof how);

    if (r < 0 && errno == ENOSYS)
        return sp_serve_open_walk(root, rel, fd, sb);
    if (r < 0)
        return errno;
    return finish((int)r, fd, sb);
}
#else
sp_status sp_serve_open(int root, const char *rel, int *fd, struct stat *sb)
{
    return sp_serve_open_walk(root, rel, fd, sb);
}
#endif
