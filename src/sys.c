#include "sys.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

/* Both tables start from the same real calls. */
#define REAL_CALLS                                                           \
    {                                                                        \
        .open = open, .close = close, .fstat = fstat, .read = read,          \
        .pread = pread, .preadv2 = preadv2, .lseek = lseek, .mmap = mmap,    \
        .munmap = munmap, .madvise = madvise, .writev = writev,              \
        .openat = openat, .fsync = fsync,                                    \
    }

static const struct sp_sys real = REAL_CALLS;
struct sp_sys sp_sys = REAL_CALLS;

void sp_sys_reset(void)
{
    sp_sys = real;
}
