/* The mmap() backend: map the whole file PROT_READ, MAP_PRIVATE and use the
 * raster in place at the header's offset; released with
 * madvise(MADV_DONTNEED) and munmap() of exactly what was mapped.  The
 * descriptor is kept (a dup) for sp_image_check(): a mapping cannot be
 * fstat'ed, and a file written under it changes the pixels read. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "load_backend.h"
#include "sys.h"

sp_status sp_load_mmap(int fd, size_t file_size, const struct sp_header *hdr,
                       struct sp_image *img)
{
    void *map;
    int own;

    /* The raster must lie inside what is mapped: FILE_SIZE is both the
     * size it was checked against and the length mapped. */
    if (hdr->raster_offset < 0 ||
        (size_t)hdr->raster_offset > file_size ||
        hdr->raster_bytes > file_size - (size_t)hdr->raster_offset)
        return SP_E_TRUNCATED;
    own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0)
        return errno;
    map = sp_sys.mmap(NULL, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        sp_status st = errno;

        close(own);
        return st;
    }
    /* The loader compares the file's stamp now, before a page is touched:
     * a file that shrank since its size was taken would raise SIGBUS past
     * its new end, and one that changed would mix its bytes in. */
    sp_image_adopt(img, SP_BACKING_MMAP, map, file_size, hdr,
                   (unsigned char *)map + hdr->raster_offset);
    img->fd = own;
    return SP_OK;
}
