#include "cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sys.h"

/* One pass: write back, then drop what is not mapped or locked. */
static sp_status evict_once(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    sp_status st = SP_OK;

    if (fd < 0)
        return errno;
    if (fdatasync(fd) != 0)
        st = errno;
    else
        st = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    return st;
}

sp_status sp_cache_evict(const char *path)
{
    const struct timespec pause = {0, 50 * 1000 * 1000};
    size_t resident, total;
    sp_status st;

    for (int tries = 0;; tries++) {
        st = evict_once(path);
        if (st == SP_OK)
            st = sp_cache_resident(path, &resident, &total);
        if (st != SP_OK)
            return st;
        if (resident * 100 <= total)
            return SP_OK;
        if (tries == 19)
            return EBUSY;
        nanosleep(&pause, NULL);
    }
}

sp_status sp_cache_resident(const char *path, size_t *resident,
                            size_t *total)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), pages;
    unsigned char *vec;
    struct stat sb;
    sp_status st = SP_OK;
    void *map;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return errno;
    if (fstat(fd, &sb) != 0) {
        st = errno;
        close(fd);
        return st;
    }
    *resident = 0;
    *total = pages = ((size_t)sb.st_size + page - 1) / page;
    if (pages == 0) {
        close(fd);
        return SP_OK;
    }
    map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return errno;
    vec = malloc(pages);
    if (vec == NULL)
        st = ENOMEM;
    else if (mincore(map, (size_t)sb.st_size, vec) != 0)
        st = errno;
    for (size_t i = 0; st == SP_OK && i < pages; i++)
        *resident += vec[i] & 1;
    free(vec);
    munmap(map, (size_t)sb.st_size);
    return st;
}

sp_status sp_cache_copy(const char *src, const char *dst, size_t block)
{
    struct stat in_sb, out_sb;
    unsigned char *buf;
    sp_status st = SP_OK;
    int in, out = -1;

    if (block == 0)
        return SP_E_USAGE;
    in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return errno;
    if (fstat(in, &in_sb) != 0)
        st = errno;
    else if (S_ISDIR(in_sb.st_mode))
        st = EISDIR;
    /* No O_TRUNC yet: DST may be SRC under another name. */
    if (st == SP_OK &&
        (out = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
        st = errno;
    if (st == SP_OK && fstat(out, &out_sb) != 0)
        st = errno;
    if (st == SP_OK && in_sb.st_dev == out_sb.st_dev &&
        in_sb.st_ino == out_sb.st_ino)
        st = EINVAL;
    if (st == SP_OK && ftruncate(out, 0) != 0)
        st = errno;
    buf = st == SP_OK ? malloc(block) : NULL;
    if (st == SP_OK && buf == NULL)
        st = ENOMEM;
    while (st == SP_OK) {
        size_t got;

        st = sp_sys_read_full(in, buf, block, &got);
        if (st == SP_OK)
            st = sp_sys_write_full(out, buf, got);
        if (got < block)
            break;
    }
    if (out >= 0 && close(out) != 0 && st == SP_OK)
        st = errno;
    close(in);
    free(buf);
    return st;
}
