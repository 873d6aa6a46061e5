#include "write_whole.h"

sp_status sp_write(const struct sp_image *img, const char *path,
                   enum sp_outfmt fmt, char *why)
{
    struct sp_output o;
    sp_status st = sp_output_open(&o, path, fmt, img, 0, why);

    if (st != SP_OK)
        return st;
    return sp_output_close(&o, sp_output_put(&o, img, why));
}
