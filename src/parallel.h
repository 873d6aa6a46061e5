/* parallel.h: a pool of threads, started once, that runs a function over
 * bands of rows as many times as its owner asks.  Knows nothing of pixels:
 * it splits [y0, y1) and collects statuses. */
#ifndef SP_PARALLEL_H
#define SP_PARALLEL_H

#include <stddef.h>

#include "status.h"

#define SP_THREADS_MAX 1024
#define SP_THREADS_STUDY 10  /* the Sun study's */

/* A band function: process rows [Y0, Y1) as band BAND (0..threads-1, the
 * same band number always runs in the same thread); return 0 or a status. */
typedef sp_status (*sp_band_fn)(void *arg, unsigned band, size_t y0,
                                size_t y1);

struct sp_pool;

/* sp_pool_start: a pool of THREADS threads (1..SP_THREADS_MAX): the
 * caller's own and THREADS - 1 started here, which wait for work.  Returns
 * 0, SP_E_USAGE, ENOMEM, or SP_E_THREAD (nothing is left running). */
sp_status sp_pool_start(unsigned threads, struct sp_pool **pool);

/* sp_pool_bands: split rows [Y0, Y1) into T = min(threads, rows)
 * contiguous bands of floor or ceil rows/T, run FN(ARG, b, ...) for band b
 * in the pool's thread b (band 0 in the caller's), and return when all are
 * done: 0 or the status of the first band, in band order, that failed.
 * *USED (if not NULL) gets T. */
sp_status sp_pool_bands(struct sp_pool *pool, size_t y0, size_t y1,
                        sp_band_fn fn, void *arg, unsigned *used);

/* sp_pool_stop: stop and join the pool's threads and free it; NULL is a
 * no-op. */
void sp_pool_stop(struct sp_pool *pool);

#endif
