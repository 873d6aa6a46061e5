/* The memory path: a memory source's bytes (input.h: sp_src_memory) are
 * the image's raster in place, the caller's; nothing is read, copied,
 * guarded or given back, and bytes in memory never change under the
 * rows.  A JPEG or PNG in memory is decoded from them into a buffer that
 * the read path holds (input_decoded.c). */
#include "input.h"
#include "input_path.h"

static sp_status load(struct sp_input *in, const struct sp_header *hdr)
{
    /* input.c checked the raster against the length */
    sp_input_hold(in, hdr, NULL, 0,
                  (unsigned char *)in->mem + hdr->raster_offset);
    return SP_OK;
}

static sp_status release(struct sp_input *in)
{
    (void)in;  /* the caller's bytes */
    return SP_OK;
}

const struct sp_input_path sp_input_memory = {
    .io = SP_IO_MEMORY,
    .load = load,
    .rows = sp_input_in_place,
    .scratch = sp_input_no_scratch,
    .done_before = sp_input_keep,
    .guard = sp_input_unguarded,
    .check = sp_input_unchanged,
    .release = release,
};
