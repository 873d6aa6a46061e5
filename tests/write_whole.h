/* write_whole.h: for the tests and the fuzz harnesses, an image written
 * whole through the sp_output API in one call. */
#ifndef SP_WRITE_WHOLE_H
#define SP_WRITE_WHOLE_H

#include "write.h"

/* sp_write: IMG written whole to PATH as FMT: sp_output_open, one
 * sp_output_put, sp_output_close; their status. */
sp_status sp_write(const struct sp_image *img, const char *path,
                   enum sp_outfmt fmt, char *why);

#endif
