/* The read() backend: seek past the header, read the raster into one
 * malloc'd buffer (kept, in a batch, for the next image: image.h),
 * released with free(). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load_backend.h"
#include "sys.h"

sp_status sp_load_read(int fd, const struct sp_header *hdr,
                       struct sp_image *img)
{
    unsigned char *buf;
    size_t got;
    sp_status st;

    if (sp_sys.lseek(fd, hdr->raster_offset, SEEK_SET) < 0)
        return errno;
    buf = sp_buffer_take(hdr->raster_bytes);
    if (buf == NULL)
        return ENOMEM;
    st = sp_sys_read_full(fd, buf, hdr->raster_bytes, &got);
    if (st == SP_OK && got < hdr->raster_bytes)
        st = SP_E_CHANGED;  /* the length was checked: the file shrank */
    if (st != SP_OK)
        free(buf);
    else
        sp_image_adopt(img, SP_BACKING_MALLOC, buf, hdr->raster_bytes, hdr,
                       buf);
    return st;
}
