/* The read path: seek past the header, read the raster into one buffer
 * (the caller's to reuse, if it gave one: input_buffer.h), and use its
 * rows in place; released by freeing (or keeping) the buffer.  Plain
 * rasters, decoded into a buffer by input.c, are held by this path too. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "input.h"
#include "input_path.h"
#include "sys.h"

static sp_status load(struct sp_input *in, const struct sp_header *hdr)
{
    unsigned char *buf;
    size_t got;
    sp_status st;

    if (sp_sys.lseek(in->fd, hdr->raster_offset, SEEK_SET) < 0)
        return errno;
    buf = sp_reuse_take(in->reuse, hdr->raster_bytes);
    if (buf == NULL)
        return ENOMEM;
    st = sp_sys_read_full(in->fd, buf, hdr->raster_bytes, &got);
    if (st == SP_OK && got < hdr->raster_bytes)
        st = SP_E_CHANGED;  /* the length was checked: the file shrank */
    if (st != SP_OK)
        free(buf);
    else
        sp_input_hold(in, hdr, buf, hdr->raster_bytes, buf);
    return st;
}

const struct sp_input_path sp_input_read = {
    .io = SP_IO_READ,
    .load = load,
    SP_INPUT_IN_MEMORY,
};
