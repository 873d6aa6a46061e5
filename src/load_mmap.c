/* The mmap() backend: map the whole file PROT_READ, MAP_PRIVATE and use the
 * raster in place at the header's offset; released with
 * madvise(MADV_DONTNEED) and munmap() of exactly what was mapped. */
#include <errno.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "load.h"
#include "sys.h"

sp_status sp_load_mmap(int fd, size_t file_size, const struct sp_header *hdr,
                       struct sp_image *img)
{
    void *map = sp_sys.mmap(NULL, file_size, PROT_READ, MAP_PRIVATE, fd, 0);

    struct stat sb;

    if (map == MAP_FAILED)
        return errno;
    /* The file's length was checked before mapping; check it again now that
     * the mapping exists, or a file that shrank in between would fault with
     * SIGBUS on the first access past its new end. */
    if (sp_sys.fstat(fd, &sb) != 0 ||
        (size_t)sb.st_size < (size_t)hdr->raster_offset + hdr->raster_bytes) {
        sp_sys.munmap(map, file_size);
        return SP_E_CHANGED;
    }
    sp_image_adopt(img, SP_BACKING_MMAP, map, file_size, hdr,
                   (unsigned char *)map + hdr->raster_offset);
    return SP_OK;
}
