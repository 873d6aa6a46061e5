/* The PNM encoder's raster: rows as they are (P5/P6, 8 or 16 bits), in
 * one fwrite when packed, or each row repeated by writev() so that the
 * kernel makes an enlarge's copies.  The header is header.c's
 * (libnetpbm). */
#include <errno.h>
#include <stdio.h>
#include <sys/uio.h>

#include "encode.h"
#include "sys.h"

/* IMG's rows, as a PNM raster, to F; a packed raster goes out
 * in one call, so large rasters bypass stdio's buffer instead of costing a
 * write() per few rows. */
sp_status sp_pnm_put_rows(const struct sp_image *img, FILE *f)
{
    size_t row = sp_image_row_bytes(img, img->width);
    size_t rows = img->stride == row ? 1 : img->height;
    size_t len = img->stride == row ? row * img->height : row;

    errno = 0;
    for (size_t y = 0; y < rows; y++)
        if (fwrite(img->pixels + y * img->stride, 1, len, f) != len)
            return errno ? errno : EIO;
    return SP_OK;
}

/* PUT_BATCH: the rows a writev() call takes (Linux allows 1024). */
#define PUT_BATCH 256

/* IMG's rows to F, each TIMES times, with writev() on F's
 * descriptor (after what stdio holds): the copies are the kernel's, made
 * as it writes, not the caller's. */
sp_status sp_pnm_put_repeated(const struct sp_image *img, unsigned times,
                             FILE *f)
{
    size_t row = sp_image_row_bytes(img, img->width), n = 0;
    struct iovec iov[PUT_BATCH];
    sp_status st;

    errno = 0;
    if (fflush(f) != 0)
        return errno ? errno : EIO;
    for (size_t y = 0; y < img->height; y++) {
        for (unsigned t = 0; t < times; t++) {
            iov[n].iov_base = img->pixels + y * img->stride;
            iov[n].iov_len = row;
            if (++n == PUT_BATCH) {
                st = sp_sys_writev_full(fileno(f), iov, n);
                if (st != SP_OK)
                    return st;
                n = 0;
            }
        }
    }
    return sp_sys_writev_full(fileno(f), iov, n);
}
