/* The PNM encoder's raster: rows as they are (P5/P6, 8 or 16 bits), in
 * one fwrite when packed, or each row repeated by writev() so that the
 * kernel makes an enlarge's copies, or by vmsplice() into a pipe, so that
 * it makes none.  The header is header.c's
 * (libnetpbm). */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
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

/* renew: fresh zero pages over PAGES, whose old ones a pipe now holds;
 * populated in the one call (a fault each, on a VM, cost as much again:
 * 0.4 s against 0.27 s for the 12000x10000 image enlarged by 2). */
static sp_status renew(const struct iovec *pages)
{
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE;
    void *m = sp_sys.mmap(pages->iov_base, pages->iov_len,
                          PROT_READ | PROT_WRITE, flags, -1, 0);

    return m == MAP_FAILED ? errno : SP_OK;
}

/* put_each: IMG's rows to F, each TIMES times, through stdio: for a F
 * with no descriptor (a memory or callback target). */
static sp_status put_each(const struct sp_image *img, unsigned times,
                          FILE *f)
{
    size_t row = sp_image_row_bytes(img, img->width);

    errno = 0;
    for (size_t y = 0; y < img->height; y++)
        for (unsigned t = 0; t < times; t++)
            if (fwrite(img->pixels + y * img->stride, 1, row, f) != row)
                return errno ? errno : EIO;
    return SP_OK;
}

/* IMG's rows to F, each TIMES times, with writev() on F's
 * descriptor (after what stdio holds): the copies are the kernel's, made
 * as it writes, not the caller's.  With PAGES, vmsplice() instead: the
 * pipe takes the pages themselves, and PAGES gets new ones.  A F with no
 * descriptor is written through stdio. */
sp_status sp_pnm_put_repeated(const struct sp_image *img, unsigned times,
                             FILE *f, const struct iovec *pages)
{
    sp_status (*out)(int, struct iovec *, size_t) =
        pages != NULL ? sp_sys_vmsplice_full : sp_sys_writev_full;
    size_t row = sp_image_row_bytes(img, img->width), n = 0;
    struct iovec iov[PUT_BATCH];
    sp_status st;

    if (fileno(f) < 0)
        return put_each(img, times, f);
    errno = 0;
    if (fflush(f) != 0)
        return errno ? errno : EIO;
    for (size_t y = 0; y < img->height; y++) {
        for (unsigned t = 0; t < times; t++) {
            iov[n].iov_base = img->pixels + y * img->stride;
            iov[n].iov_len = row;
            if (++n == PUT_BATCH) {
                st = out(fileno(f), iov, n);
                if (st != SP_OK)
                    return st;
                n = 0;
            }
        }
    }
    st = out(fileno(f), iov, n);
    return st == SP_OK && pages != NULL ? renew(pages) : st;
}
