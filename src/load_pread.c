/* The pread() backend: keep the file open and the raster in it; the scale
 * reads each band of rows it needs into a buffer of its own
 * (source_pread.c), so no copy of the raster is ever whole in memory
 * and nothing is mapped.  Released with close(). */
#include <errno.h>
#include <fcntl.h>

#include "load_backend.h"

sp_status sp_load_pread(int fd, const struct sp_header *hdr,
                        struct sp_image *img)
{
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);

    if (own < 0)
        return errno;
    sp_image_adopt(img, SP_BACKING_FILE, NULL, 0, hdr, NULL);
    img->fd = own;
    img->offset = hdr->raster_offset;
    return SP_OK;
}
