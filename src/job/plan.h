/* plan.h: how a job's output is cut into work, and the memory the work
 * needs.  The units, here and in every module that uses them:
 *
 *   item     output rows [y0, y1) that one thread scales and that are
 *            written, in order, by whichever thread finishes them
 *            (parallel.h calls them items too);
 *   slot     one of a thread's SP_RUN_DEPTH places for an item: one is
 *            scaled into while another waits to be written (parallel.h);
 *   chunk    a slot's buffer: an item's distinct output rows (a
 *            streamed output: PNM, PNG, JPEG);
 *   band     the source rows one request to the row source reads
 *            (source.h);
 *   scratch  a thread's buffer that a row source copies a band into,
 *            when it copies (the pread backend).
 *
 * A streamed output (PNM, PNG, JPEG) goes in items of about a budget of
 * bytes each, so memory stays two chunks a thread however large the
 * output; BMP and TGA (stb) take the whole image at once. */
#ifndef SP_PLAN_H
#define SP_PLAN_H

#include <stddef.h>

#include "filter.h"
#include "job_types.h"
#include "status.h"

struct sp_plan {
    struct sp_geom geom; /* the image's (job_types.h) */
    const struct sp_filter_row *filter;  /* the job's (filter.h) */
    size_t out_height;
    size_t rows;         /* output rows an item (the last may have fewer) */
    unsigned times;      /* each chunk row is written TIMES times: an
                            enlarge by N into chunks makes each distinct
                            row once */
    size_t chunk_rows;   /* rows / times: the rows a chunk holds */
    size_t items;
    unsigned threads;    /* the job's, no more than the items */
    unsigned slots;      /* threads * SP_RUN_DEPTH */
    size_t band_rows;    /* the most source rows one request reads */
};

/* sp_plan_make: the plan of JOB for its image (JOB->geom) for an output
 * of OUT_HEIGHT rows of OROW bytes from IN_HEIGHT source rows; CHUNKED
 * for a streamed output (made and written item by item), 0 for one
 * scaled whole and written at the end.  SEGMENTS (a segmented PNG,
 * write.h) makes items whose rows depend on the image alone, never on the
 * threads or JOB's chunk size: about SP_SEGMENT bytes each, and no fewer
 * than SEGMENTS rows (the lookback an item's encode scales again, so that
 * its band fits what a thread's scratch holds); 0: none. */
void sp_plan_make(struct sp_plan *p, const struct sp_job *job, int chunked,
                  size_t orow, size_t out_height, size_t in_height,
                  size_t segments);

/* SP_SEGMENT: the output bytes of a segmented PNG's item. */
#define SP_SEGMENT ((size_t)1 << 19)

/* sp_plan_item: item ITEM's output rows, [*Y0, *Y1). */
void sp_plan_item(const struct sp_plan *p, size_t item, size_t *y0,
                  size_t *y1);

/* sp_plan_first_row: the first source row that output row Y reads: of a
 * resample, floor(Y H / H'). */
size_t sp_plan_first_row(const struct sp_plan *p, size_t y);

/* sp_plan_filter: the filter G's rows are made by (filter.h): the area
 * average of a resample, FILTER's row (sp_filter_of) for a reduce; NULL
 * for an enlarge or a copy, which no filter makes (scale.h). */
const struct sp_filter_row *sp_plan_filter(
    const struct sp_geom *g, const struct sp_filter_row *filter);

/* sp_plan_scaling: G's sizes and factor as a filter takes them. */
void sp_plan_scaling(const struct sp_geom *g, struct sp_scaling *s);

/* sp_plan_type: the type of the rows G makes from a source of SRC's type
 * with FILTER, into OUT (its width and height are the caller's): the
 * filter's (sp_plan_filter), or an enlarge's or a copy's (sp_scale_type:
 * the source's). */
void sp_plan_type(const struct sp_geom *g, const struct sp_filter_row *filter,
                  const struct sp_image *src, struct sp_image *out);

/* The work's memory: SLOTS chunks of CHUNK bytes, then THREADS scratch
 * buffers of SCRATCH bytes, in one block: from the heap, or a mapping of
 * its own (sp_buffers_map says which). */
struct sp_buffers {
    unsigned char *base;  /* as allocated: what sp_buffers_unmap frees */
    size_t len;
    int mapped;           /* BASE is a mapping (munmap), else malloc's */
    unsigned char *chunks;
    unsigned char *scratch;
    size_t chunk, scratch_len;
};

/* sp_buffers_map: P's memory: a chunk of CHUNK bytes a slot and a
 * scratch of SCRATCH bytes a thread (its slots share it: a thread scales
 * one item at a time).  A block of a huge page or more is a mapping of
 * its own, laid on huge pages where the kernel allows them; so is one
 * whose chunks' pages a pipe takes (PAGES: write_pnm.c's vmsplice gives
 * them away and maps new ones in their place).  A smaller one comes from
 * the heap, where a process that runs job after job (the server's
 * workers, a batch) finds the pages the last job faulted in.  The bytes
 * are not zeroed.  L is empty when CHUNK and SCRATCH are 0.  Returns 0,
 * SP_E_TOOBIG or ENOMEM. */
sp_status sp_buffers_map(struct sp_buffers *l, const struct sp_plan *p,
                         size_t chunk, size_t scratch, int pages);

/* sp_buffers_chunk / sp_buffers_scratch: SLOT's chunk, and its thread's
 * scratch. */
unsigned char *sp_buffers_chunk(const struct sp_buffers *l, unsigned slot);
unsigned char *sp_buffers_scratch(const struct sp_buffers *l, unsigned slot);

/* sp_buffers_unmap: give L's memory back; safe on an empty L. */
void sp_buffers_unmap(struct sp_buffers *l);

#endif
