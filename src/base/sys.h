/* sys.h: the system calls the loaders and the output file make, through
 * one table, and the loops that transfer a whole buffer through it.
 *
 * Production code calls sp_sys.read(...) instead of read(...); a test swaps
 * an entry to force EINTR, short reads or an mmap failure, and puts the
 * original back with sp_sys_reset().  The table is process-global: swap it
 * only while no load is running.  A test seam, internal (internal.h):
 * hidden from a shared library's symbols, never a library user's. */
#ifndef SP_SYS_H
#define SP_SYS_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "internal.h"
#include "status.h"

struct sp_sys {
    int (*open)(const char *path, int flags, ...);
    int (*close)(int fd);
    int (*fstat)(int fd, struct stat *st);
    ssize_t (*read)(int fd, void *buf, size_t len);
    ssize_t (*write)(int fd, const void *buf, size_t len);
    ssize_t (*pread)(int fd, void *buf, size_t len, off_t off);
    ssize_t (*preadv2)(int fd, const struct iovec *iov, int n, off_t off,
                       int flags);
    off_t (*lseek)(int fd, off_t off, int whence);
    void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd,
                  off_t off);
    int (*munmap)(void *addr, size_t len);
    int (*madvise)(void *addr, size_t len, int advice);
    int (*fadvise)(int fd, off_t off, off_t len, int advice);
    ssize_t (*writev)(int fd, const struct iovec *iov, int n);
    ssize_t (*vmsplice)(int fd, const struct iovec *iov, size_t n,
                        unsigned flags);
    int (*openat)(int dirfd, const char *path, int flags, ...);
    int (*fsync)(int fd);
};

extern SP_INTERNAL struct sp_sys sp_sys;

/* sp_sys_reset: put every entry of sp_sys back to the real call. */
SP_INTERNAL void sp_sys_reset(void);

/* sp_sys_read_some: one read() of up to LEN bytes from FD into BUF, made
 * again after EINTR: the bytes read (0 at end of file), or -1 with errno
 * set.  The loop under every read of a stream. */
ssize_t sp_sys_read_some(int fd, void *buf, size_t len);

/* sp_sys_pread_some: sp_sys_read_some at offset OFF of FD, with pread. */
ssize_t sp_sys_pread_some(int fd, void *buf, size_t len, off_t off);

/* The full transfers: each calls its entry of sp_sys again after a short
 * transfer or EINTR until the whole buffer is done, and returns SP_OK or
 * the errno value of the call that failed. */

/* sp_sys_read_full: read LEN bytes from FD into BUF.  *GOT gets the bytes
 * read: less than LEN at end of file (SP_OK) or on an error. */
sp_status sp_sys_read_full(int fd, void *buf, size_t len, size_t *got);

/* sp_sys_pread_full: sp_sys_read_full from offset OFF of FD, with pread. */
sp_status sp_sys_pread_full(int fd, void *buf, size_t len, off_t off,
                            size_t *got);

/* sp_sys_write_full: write the LEN bytes of BUF to FD.  Returns SP_OK, the
 * errno value of the call that failed, or EIO for a call that wrote
 * nothing. */
sp_status sp_sys_write_full(int fd, const void *buf, size_t len);

/* sp_sys_writev_full: write the N buffers of IOV to FD, in as many writev
 * calls as it takes (at most IOV_MAX buffers a call).  IOV is used up: its
 * entries are changed.  Returns as sp_sys_write_full. */
sp_status sp_sys_writev_full(int fd, struct iovec *iov, size_t n);

/* sp_sys_vmsplice_full: sp_sys_writev_full with vmsplice() into the pipe
 * FD: the pipe takes references to the buffers' pages instead of copies,
 * so they must not be written again while a reader may still see them
 * (write_pnm.c maps fresh pages over them). */
sp_status sp_sys_vmsplice_full(int fd, struct iovec *iov, size_t n);

#endif
