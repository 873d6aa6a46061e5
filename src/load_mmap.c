/* The mmap() backend: map the whole file PROT_READ, MAP_PRIVATE and use the
 * raster in place at the header's offset; released with
 * madvise(MADV_DONTNEED) and munmap() of exactly what was mapped. */
#include <errno.h>
#include <sys/mman.h>

#include "load.h"
#include "sys.h"

sp_status sp_load_mmap(int fd, size_t file_size, const struct sp_header *hdr,
                       struct sp_image *img)
{
    void *map = sp_sys.mmap(NULL, file_size, PROT_READ, MAP_PRIVATE, fd, 0);

    if (map == MAP_FAILED)
        return errno;
    img->backing = SP_BACKING_MMAP;
    img->base = map;
    img->base_len = file_size;
    sp_image_view(img, hdr, (unsigned char *)map + hdr->raster_offset);
    return SP_OK;
}
