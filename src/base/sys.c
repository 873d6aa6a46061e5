#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

/* Both tables start from the same real calls. */
#define REAL_CALLS                                                           \
    {                                                                        \
        .open = open, .close = close, .fstat = fstat, .read = read,          \
        .write = write, .pread = pread, .preadv2 = preadv2, .lseek = lseek,  \
        .mmap = mmap, .munmap = munmap, .madvise = madvise,                  \
        .fadvise = posix_fadvise, .writev = writev, .vmsplice = vmsplice,    \
        .openat = openat, .fsync = fsync,                                    \
    }

static const struct sp_sys real = REAL_CALLS;
SP_INTERNAL struct sp_sys sp_sys = REAL_CALLS;

SP_INTERNAL void sp_sys_reset(void)
{
    sp_sys = real;
}

ssize_t sp_sys_read_some(int fd, void *buf, size_t len)
{
    ssize_t n;

    do
        n = sp_sys.read(fd, buf, len);
    while (n < 0 && errno == EINTR);
    return n;
}

ssize_t sp_sys_pread_some(int fd, void *buf, size_t len, off_t off)
{
    ssize_t n;

    do
        n = sp_sys.pread(fd, buf, len, off);
    while (n < 0 && errno == EINTR);
    return n;
}

/* read_in: the loop of both full reads; OFF < 0 reads at the descriptor's
 * offset (read), else from OFF on (pread). */
static sp_status read_in(int fd, unsigned char *buf, size_t len, off_t off,
                         size_t *got)
{
    size_t done = 0;

    while (done < len) {
        ssize_t n = off < 0 ? sp_sys_read_some(fd, buf + done, len - done)
                            : sp_sys_pread_some(fd, buf + done, len - done,
                                                off + (off_t)done);
        if (n < 0) {
            *got = done;
            return errno;
        }
        if (n == 0)
            break;
        done += (size_t)n;
    }
    *got = done;
    return SP_OK;
}

sp_status sp_sys_read_full(int fd, void *buf, size_t len, size_t *got)
{
    return read_in(fd, buf, len, -1, got);
}

sp_status sp_sys_pread_full(int fd, void *buf, size_t len, off_t off,
                            size_t *got)
{
    if (off < 0) {
        *got = 0;
        return EINVAL;
    }
    return read_in(fd, buf, len, off, got);
}

sp_status sp_sys_write_full(int fd, const void *buf, size_t len)
{
    const unsigned char *p = buf;

    while (len > 0) {
        ssize_t n = sp_sys.write(fd, p, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno;
        if (n == 0)
            return EIO;
        p += n;
        len -= (size_t)n;
    }
    return SP_OK;
}

/* vec_out: the loop of both vectored writes: vmsplice when SPLICE. */
static sp_status vec_out(int fd, struct iovec *iov, size_t n, int splice)
{
    for (;;) {
        ssize_t w;
        size_t done;

        /* empty buffers would make a call that writes nothing look like
         * a failure */
        for (; n > 0 && iov->iov_len == 0; iov++)
            n--;
        if (n == 0)
            return SP_OK;
        w = splice ? sp_sys.vmsplice(fd, iov, n > IOV_MAX ? IOV_MAX : n, 0)
                   : sp_sys.writev(fd, iov, n > IOV_MAX ? IOV_MAX : (int)n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno;
        if (w == 0)
            return EIO;
        /* skip the buffers written whole, then trim the one cut short */
        for (done = (size_t)w; n > 0 && done >= iov->iov_len; iov++, n--)
            done -= iov->iov_len;
        if (n > 0) {
            iov->iov_base = (unsigned char *)iov->iov_base + done;
            iov->iov_len -= done;
        }
    }
}

sp_status sp_sys_writev_full(int fd, struct iovec *iov, size_t n)
{
    return vec_out(fd, iov, n, 0);
}

sp_status sp_sys_vmsplice_full(int fd, struct iovec *iov, size_t n)
{
    return vec_out(fd, iov, n, 1);
}
