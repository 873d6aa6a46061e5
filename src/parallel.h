/* parallel.h: run a function over bands of rows, one pthread per band.
 * Knows nothing of pixels: it splits [0, rows) and collects statuses. */
#ifndef SP_PARALLEL_H
#define SP_PARALLEL_H

#include <stddef.h>

#include "status.h"

#define SP_THREADS_MAX 1024
#define SP_THREADS_DEFAULT 10  /* the Sun study's */

/* A band function: process rows [Y0, Y1); return 0 or a status. */
typedef sp_status (*sp_band_fn)(void *arg, size_t y0, size_t y1);

/* sp_parallel_bands: split rows [0, ROWS) into T = min(THREADS, ROWS)
 * contiguous bands of floor or ceil ROWS/T rows, run FN(ARG, y0, y1) for
 * each in a thread of its own, and join them all.  *USED (if not NULL)
 * gets T.  THREADS must be 1..SP_THREADS_MAX.  Returns 0, the first
 * non-zero status a band returned, SP_E_THREAD when a thread could not be
 * created or joined (the ones created are still joined), or SP_E_USAGE. */
sp_status sp_parallel_bands(size_t rows, unsigned threads, sp_band_fn fn,
                            void *arg, unsigned *used);

#endif
