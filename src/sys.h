/* sys.h: the system calls the loaders and the output file make, through
 * one table.
 *
 * Production code calls sp_sys.read(...) instead of read(...); a test swaps
 * an entry to force EINTR, short reads or an mmap failure, and puts the
 * original back with sp_sys_reset().  The table is process-global: swap it
 * only while no load is running. */
#ifndef SP_SYS_H
#define SP_SYS_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

struct sp_sys {
    int (*open)(const char *path, int flags, ...);
    int (*close)(int fd);
    int (*fstat)(int fd, struct stat *st);
    ssize_t (*read)(int fd, void *buf, size_t len);
    ssize_t (*pread)(int fd, void *buf, size_t len, off_t off);
    ssize_t (*preadv2)(int fd, const struct iovec *iov, int n, off_t off,
                       int flags);
    off_t (*lseek)(int fd, off_t off, int whence);
    void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd,
                  off_t off);
    int (*munmap)(void *addr, size_t len);
    int (*madvise)(void *addr, size_t len, int advice);
    ssize_t (*writev)(int fd, const struct iovec *iov, int n);
    int (*openat)(int dirfd, const char *path, int flags, ...);
    int (*fsync)(int fd);
};

extern struct sp_sys sp_sys;

/* sp_sys_reset: put every entry of sp_sys back to the real call. */
void sp_sys_reset(void);

#endif
