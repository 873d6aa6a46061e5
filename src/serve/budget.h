/* budget.h: --max-memory: the bytes a request's job would hold, from its
 * header, and the ledger that admits a request only while the total of
 * those admitted stays under the budget (the study's memory contention
 * made into a control: a read path that would hold the whole raster is
 * turned away with a 503, not killed by the kernel). */
#ifndef SP_SERVE_BUDGET_H
#define SP_SERVE_BUDGET_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "header.h"
#include "job_types.h"

/* sp_serve_cost: the bytes a job holds at most for the image HDR scaled
 * by FACTOR, or fitted to FIT when its box has a side (struct sp_fit, the
 * output's size as the job's policy makes it), on THREADS threads: the raster when HELD (the read path, a
 * plain raster, a decoded JPEG or PNG), else the row buffers of mmap and
 * pread (two chunks a thread, job_types.h); and the output: the whole
 * 8-bit image and its encoding when STB (BMP, TGA: stb_image_write), else
 * two chunks a thread (PNM, and PNG and JPEG, streamed row by row).
 * Saturates at UINT64_MAX. */
uint64_t sp_serve_cost(const struct sp_header *hdr, int factor,
                       const struct sp_fit *fit, int held, int stb,
                       unsigned threads);

/* sp_serve_body: the bytes of the answer planned for the image HDR
 * scaled by FACTOR or fitted to FIT: its output's raster (the output's
 * pixels, HDR's channels and sample size), a PNM's size but for its
 * header, and more than a PNG, JPEG, BMP or TGA of it but for noise.
 * Saturates at UINT64_MAX. */
uint64_t sp_serve_body(const struct sp_header *hdr, int factor,
                       const struct sp_fit *fit);

/* The ledger: BUDGET bytes (0: no limit), USED of them admitted. */
struct sp_budget {
    pthread_mutex_t mu;
    uint64_t budget, used;
};

void sp_budget_init(struct sp_budget *b, uint64_t budget);
void sp_budget_destroy(struct sp_budget *b);

/* sp_budget_take: admit COST bytes: 0; EAGAIN while the others admitted
 * leave too little (try later); EFBIG when COST alone is over the budget
 * (never admitted). */
int sp_budget_take(struct sp_budget *b, uint64_t cost);

/* sp_budget_give: COST bytes, taken before, given back. */
void sp_budget_give(struct sp_budget *b, uint64_t cost);

/* sp_budget_used: the bytes taken and not given back (0 with no
 * budget: nothing is counted). */
uint64_t sp_budget_used(struct sp_budget *b);

#endif
