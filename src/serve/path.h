/* path.h: a request's path, decoded once and opened beneath the root.
 *
 * The server hands sp_serve_path_decode() the path exactly as the client
 * sent it (libmicrohttpd's own unescaping is turned off, serve.c), so
 * that one decoder, this one, decides what a path means: a %00 cannot
 * cut it, and an encoded '/' cannot hide a segment.  sp_serve_open()
 * then lets the kernel resolve the decoded path beneath the root's
 * descriptor, so that no symbolic link or ".." leads out of it. */
#ifndef SP_SERVE_PATH_H
#define SP_SERVE_PATH_H

#include <stddef.h>
#include <sys/stat.h>

#include "status.h"

/* sp_serve_path_decode: RAW, a request's path as sent (it must start with
 * '/'), with each %XX decoded once, into OUT (OUTLEN bytes) without its
 * leading '/', so that OUT is relative to the root.  Refused: a path not
 * starting with '/'; a '%' not followed by two hex digits; an escape of a
 * character that never needs one (letters, digits, "-._~": a client
 * writes them plainly, and "%2e" is how ".." is smuggled); an escape that
 * decodes to NUL, '/' or '\'; a backslash; a control character; the
 * bytes of an overlong UTF-8 form (0xC0, 0xC1, and 0xE0 or 0xF0 followed
 * by a byte that makes the form overlong: they spell '.' and '/' to
 * decoders that accept them); an empty segment ("//", a trailing '/',
 * the root itself); a segment "." or "..".  Returns 0; EINVAL with *WHY
 * (a static phrase) saying which rule refused it; or ENAMETOOLONG when
 * the decoded path does not fit OUTLEN. */
sp_status sp_serve_path_decode(const char *raw, char *out, size_t outlen,
                               const char **why);

/* sp_serve_open: open REL (decoded as above: relative, no "." or "..")
 * beneath the directory ROOT for reading, with openat2() resolving
 * beneath it and following no magic link, or where the kernel has no
 * openat2() with sp_serve_open_walk().  A FIFO is not waited for.  On
 * success *FD is the caller's to close and *SB what fstat() says of it.
 * Returns 0; ENOENT or ENOTDIR (not there); EXDEV (it leads out of the
 * root); ELOOP (a link not followed); EISDIR (a directory); EINVAL
 * (another file that is not a regular file: a FIFO, a device, a socket);
 * or another errno value (EACCES, ENAMETOOLONG, EMFILE...).  On failure
 * nothing is open. */
sp_status sp_serve_open(int root, const char *rel, int *fd, struct stat *sb);

/* sp_serve_open_walk: sp_serve_open()'s fallback, public so that its
 * tests run both: REL opened a component at a time with O_NOFOLLOW, each
 * directory beneath the last, so that every symbolic link is refused
 * (ELOOP), those that stay inside the root too: without the kernel's
 * resolution a walk cannot tell them apart safely.  Returns as
 * sp_serve_open(). */
sp_status sp_serve_open_walk(int root, const char *rel, int *fd,
                             struct stat *sb);

#endif
