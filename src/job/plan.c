#include "plan.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "parallel.h"
#include "scale.h"

/* item_rows: how many output rows of OROW bytes make an item: about
 * BUDGET bytes; for an enlarge by N, whole source rows (N output rows)
 * where that costs at most 4 x BUDGET, so that each source row is expanded
 * once; and no more than an even share of the OH rows among THREADS. */
static size_t item_rows(size_t budget, size_t orow, size_t oh,
                        unsigned threads, int factor)
{
    size_t unit = factor > 1 ? (size_t)factor : 1;
    size_t share = (oh + threads - 1) / threads;
    size_t rows = budget / orow;

    share = (share + unit - 1) / unit * unit;
    if (rows >= unit)
        rows -= rows % unit;
    else if (orow <= budget / unit * 4)
        rows = unit;
    else if (rows == 0)
        rows = 1;
    return rows < share ? rows : share;
}

const struct sp_filter_row *sp_plan_filter(
    const struct sp_geom *g, const struct sp_filter_row *filter)
{
    if (g->resample)
        return &sp_filter_area;
    return g->factor < -1 ? sp_filter_of(filter) : NULL;
}

void sp_plan_scaling(const struct sp_geom *g, struct sp_scaling *s)
{
    const int crop = g->cover_width != 0;

    *s = (struct sp_scaling){g->in_width, g->in_height,
                             crop ? g->cover_width : g->out_width,
                             crop ? g->cover_height : g->out_height,
                             g->factor};
}

/* band_rows: the most source rows one request reads: the most an output
 * row's span holds, for a filter's rows (item.c asks row by row); those
 * an item of ROWS output rows reads, for an enlarge or a copy; never more
 * than H. */
static size_t band_rows(const struct sp_job *job, size_t rows, size_t h)
{
    const struct sp_geom *g = &job->geom;
    const struct sp_filter_row *f = sp_plan_filter(g, job->filter);
    struct sp_scaling s;
    size_t n = rows;

    sp_plan_scaling(g, &s);
    if (f != NULL)
        n = f->span_max(&s);
    else if (g->factor > 1)
        n = rows / (size_t)g->factor + 2;
    return n < h ? n : h;
}

void sp_plan_make(struct sp_plan *p, const struct sp_job *job, int chunked,
                  size_t orow, size_t out_height, size_t in_height,
                  size_t segments)
{
    size_t budget = job->chunk_bytes ? job->chunk_bytes : SP_CHUNK;

    if (!chunked)
        budget = (size_t)-1;
    if (segments)
        budget = SP_SEGMENT;
    memset(p, 0, sizeof *p);
    p->geom = job->geom;
    p->filter = job->filter;
    p->out_height = out_height;
    /* A segmented output's items: one share of all the rows, whatever
     * the threads. */
    p->rows = item_rows(budget, orow, out_height,
                        segments ? 1 : job->threads, job->geom.factor);
    if (segments && p->rows < segments)
        p->rows = segments < out_height ? segments : out_height;
    p->times = chunked && job->geom.factor > 1 &&
                       p->rows % (size_t)job->geom.factor == 0
                   ? (unsigned)job->geom.factor
                   : 1;
    p->chunk_rows = p->rows / p->times;
    p->items = (out_height + p->rows - 1) / p->rows;
    p->threads = job->threads > p->items ? (unsigned)p->items : job->threads;
    p->slots = p->threads * SP_RUN_DEPTH;
    p->band_rows = band_rows(job, p->rows, in_height);
}

void sp_plan_item(const struct sp_plan *p, size_t item, size_t *y0,
                  size_t *y1)
{
    *y0 = item * p->rows;
    *y1 = p->out_height - *y0 < p->rows ? p->out_height : *y0 + p->rows;
}

size_t sp_plan_first_row(const struct sp_plan *p, size_t y)
{
    const struct sp_geom *g = &p->geom;
    const struct sp_filter_row *f = sp_plan_filter(g, p->filter);
    struct sp_scaling s;
    size_t first, end;

    if (f != NULL) {
        sp_plan_scaling(g, &s);
        f->span(&s, y + g->crop_y, &first, &end);
        return first;
    }
    return g->factor > 1 ? y / (size_t)g->factor : y;
}

void sp_plan_type(const struct sp_geom *g, const struct sp_filter_row *filter,
                  const struct sp_image *src, struct sp_image *out)
{
    const struct sp_filter_row *f = sp_plan_filter(g, filter);
    struct sp_scaling s;

    sp_plan_scaling(g, &s);
    if (f != NULL)
        f->type(src, &s, out);
    else
        sp_scale_type(src, g->factor, SP_REDUCE_SAMPLE, out);
}

/* HUGE_PAGE: the size of a transparent huge page on x86-64 and arm64
 * (4 KiB base pages). */
#define HUGE_PAGE ((size_t)2 << 20)

/* A huge page costs one fault where 512 small pages cost 512, but now and
 * then a stall of its own (results/README.md, "design notes"): only a
 * mapping of a huge page or more is laid on huge pages, where the kernel
 * allows them (THP "madvise" or "always"; otherwise the advice changes
 * nothing).  map_block: L's block of TOTAL bytes as a mapping of its
 * own; returns where its bytes begin, or NULL. */
static unsigned char *map_block(struct sp_buffers *l, size_t total)
{
    size_t len = total;
    unsigned char *m;

    if (total >= HUGE_PAGE)
        len = (total + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE + HUGE_PAGE;
    m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
             -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    l->base = m;
    l->len = len;
    l->mapped = 1;
    if (len != total) {
        m = (unsigned char *)(((uintptr_t)m + HUGE_PAGE - 1) &
                              ~(uintptr_t)(HUGE_PAGE - 1));
        (void)madvise(m, len - HUGE_PAGE, MADV_HUGEPAGE);
    }
    return m;
}

/* A block under a huge page comes from the heap: a mapping of its own
 * cost the server a fault a page on every request (the Sun study's image
 * reduced by 4: about 60 of the 172 faults of an mmap request, 0.15 ms of
 * its 0.52 ms of CPU, with the heap's own below). */
sp_status sp_buffers_map(struct sp_buffers *l, const struct sp_plan *p,
                         size_t chunk, size_t scratch, int pages)
{
    size_t scratches, total;
    unsigned char *m;

    memset(l, 0, sizeof *l);
    if (__builtin_mul_overflow(scratch, (size_t)p->threads, &scratches) ||
        __builtin_mul_overflow(chunk, (size_t)p->slots, &total) ||
        __builtin_add_overflow(total, scratches, &total) ||
        total > SIZE_MAX - 2 * HUGE_PAGE)
        return SP_E_TOOBIG;
    if (total == 0)
        return SP_OK;
    if (total < HUGE_PAGE && !pages) {
        if ((l->base = m = malloc(total)) == NULL)
            return ENOMEM;
        l->len = total;
    } else if ((m = map_block(l, total)) == NULL) {
        return ENOMEM;
    }
    l->chunks = m;
    l->scratch = m + chunk * p->slots;
    l->chunk = chunk;
    l->scratch_len = scratch;
    return SP_OK;
}

unsigned char *sp_buffers_chunk(const struct sp_buffers *l, unsigned slot)
{
    return l->chunk ? l->chunks + l->chunk * slot : NULL;
}

unsigned char *sp_buffers_scratch(const struct sp_buffers *l, unsigned slot)
{
    return l->scratch_len ? l->scratch + l->scratch_len * (slot / SP_RUN_DEPTH)
                          : NULL;
}

void sp_buffers_unmap(struct sp_buffers *l)
{
    if (l->mapped)
        (void)munmap(l->base, l->len);
    else
        free(l->base);
    memset(l, 0, sizeof *l);
}
