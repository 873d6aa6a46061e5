/* encode.h: the two encoders behind write.h's sp_output, for write.c
 * only.  Each returns 0, an errno value (ENOMEM, ENOSPC, ...), or (stb)
 * SP_E_TOOBIG or SP_E_ENCODE with a detail in WHY (SP_WHY_MAX). */
#ifndef SP_ENCODE_H
#define SP_ENCODE_H

#include <stdio.h>
#include <sys/uio.h>

#include "image.h"
#include "status.h"
#include "outfmt.h"

/* sp_pnm_put_rows: IMG's rows, as a PNM raster, to F; a packed raster
 * goes out in one call, so large rasters bypass stdio's buffer. */
sp_status sp_pnm_put_rows(const struct sp_image *img, FILE *f);

/* sp_pnm_put_repeated: IMG's rows to F, each TIMES times, with writev()
 * on F's descriptor after what stdio holds is flushed.  With PAGES (F a
 * pipe; IMG's rows inside PAGES, whole pages of private anonymous memory)
 * with vmsplice(), and then fresh zero pages are mapped over PAGES: the
 * pipe keeps the old ones, which nothing writes again. */
sp_status sp_pnm_put_repeated(const struct sp_image *img, unsigned times,
                              FILE *f, const struct iovec *pages);

/* sp_stb_put: IMG whole, as FMT (not PNM), to F: checked against
 * sp_outfmt_fits() first, samples rescaled to 8 bits where they are not,
 * every write of the encoder checked; JPEG at QUALITY (1..100, 0: 90),
 * PNG at zlib level COMPRESSION (0..9, -1: stb's default, 8).  An
 * allocation that fails, the encoder's or this function's, is ENOMEM:
 * the encoder is left and what it held freed (write_stb.c says how).
 * Safe on several threads at once. */
sp_status sp_stb_put(const struct sp_image *img, FILE *f, enum sp_outfmt fmt,
                     int quality, int compression, char *why);

/* sp_stb_put_failing: sp_stb_put, with the encoder's FAIL_AT-th
 * allocation failing (1: its first; 0: none), and the allocations it asked
 * for in *ALLOCS where ALLOCS is not NULL: for tests of the failure
 * path. */
sp_status sp_stb_put_failing(const struct sp_image *img, FILE *f,
                             enum sp_outfmt fmt, int quality,
                             int compression, char *why,
                             unsigned long fail_at, unsigned long *allocs);

#endif
