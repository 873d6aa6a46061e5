#include "work.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#include "item.h"
#include "parallel.h"
#include "plan.h"

/* A slot's own: the chunk an item is scaled into (a streamed output),
 * the scale phase its thread measured, and for a segmented PNG the rows
 * above the item (scaled again) and the item's segment. */
struct slot {
    struct sp_image chunk;
    struct sp_phase scale;
    struct sp_image before;
    struct sp_segment *seg;
    struct sp_deflater *def;  /* the thread's (its first slot's) */
    int encode_failed;        /* the segment's encode failed: the
                                 output's failure, not the input's */
};

/* The job's work: the plan's items, each scaled by one thread into its
 * slot's chunk (or, for BMP and TGA, into its place in WHOLE) and
 * written, in order, by whichever thread finishes it: PNM's rows, and
 * PNG's and JPEG's, encoded as they come (write.h). */
struct work {
    const struct sp_job *job;
    struct sp_plan plan;
    struct sp_source *src;
    struct sp_output *out;
    struct sp_report *report;
    struct sp_image whole;     /* BMP, TGA: the whole output; else empty */
    struct sp_image type;      /* the scaled rows' (sp_scale_type) */
    size_t orow;
    size_t gift;               /* a chunk's whole pages, for a pipe
                                  output to take; 0: none */
    size_t lookback;           /* a segmented PNG's (write.h); 0: not
                                  one */
    struct sp_buffers mem;       /* the chunks and the scratch */
    struct slot *slot;         /* [plan.slots] */
    struct sp_interval *intervals;     /* [items]: when each was scaled */
    struct sp_phase release, write;  /* summed over the items' finishes */
};

/* encode_item: item ITEM's segment (scaled into L's chunk, rows [Y0,
 * Y1)) encoded, with the rows above it scaled again into L's BEFORE. */
static sp_status encode_item(struct work *w, struct slot *l, unsigned slot,
                             size_t y0, size_t y1)
{
    size_t n = y0 < w->lookback ? y0 : w->lookback;
    struct sp_item it = {w->src, &w->job->geom, w->job->filter, y0 - n, y0,
                         1, w->orow, l->before.pixels,
                         sp_buffers_scratch(&w->mem, slot)};
    sp_status st = n > 0 ? sp_item_scale(&it) : SP_OK;

    l->before.height = n;
    l->chunk.height = (y1 - y0) / w->plan.times;
    if (st == SP_OK) {
        st = sp_segment_encode(w->out,
                               &w->slot[slot / SP_RUN_DEPTH * SP_RUN_DEPTH]
                                    .def,
                               &l->seg, &l->chunk, w->plan.times, y0,
                               &l->before);
        l->encode_failed = st != SP_OK;
    }
    return st;
}

/* scale_item: item ITEM into SLOT's chunk, or its place in the whole;
 * a segmented PNG's encoded as well. */
static sp_status scale_item(void *arg, unsigned slot, size_t item)
{
    struct work *w = arg;
    struct sp_item it = {w->src, &w->job->geom, w->job->filter, 0, 0,
                         w->plan.times, w->orow, NULL,
                         sp_buffers_scratch(&w->mem, slot)};
    struct sp_meter m;
    sp_status st;

    sp_plan_item(&w->plan, item, &it.y0, &it.y1);
    it.dest = w->whole.pixels != NULL ? w->whole.pixels + it.y0 * w->orow
                                      : w->slot[slot].chunk.pixels;
    sp_meter_start(&m);
    w->intervals[item].t0 = sp_now_ns();
    st = sp_item_scale(&it);
    if (st == SP_OK && w->lookback)
        st = encode_item(w, &w->slot[slot], slot, it.y0, it.y1);
    w->intervals[item].t1 = sp_now_ns();
    sp_meter_stop(&m, &w->slot[slot].scale);
    return st;
}

/* write_item: with every earlier item written, tell the source which rows
 * no later item reads, and write this one's rows (if there is an
 * output). */
static sp_status write_item(void *arg, unsigned slot, size_t item)
{
    struct work *w = arg;
    struct slot *l = &w->slot[slot];
    struct sp_meter m;
    sp_status st = SP_OK;
    size_t y0, y1;

    if (sp_cancelled(w->job->cancel)) {
        w->report->failed_path = w->report->input;
        return EINTR;
    }
    sp_plan_item(&w->plan, item, &y0, &y1);
    if (y1 < w->plan.out_height) {
        size_t keep = w->lookback < y1 ? w->lookback : y1;

        sp_meter_start(&m);
        sp_source_done_before(w->src,
                              sp_plan_first_row(&w->plan, y1 - keep));
        sp_meter_stop(&m, &w->release);
    }
    /* No output: the item's rows stay in its chunk, scaled and never
     * written, and the slot is free again. */
    if (w->out == NULL)
        return SP_OK;
    if (w->lookback) {
        sp_meter_start(&m);
        st = sp_output_put_segment(w->out, l->seg, w->report->why);
        sp_meter_stop(&m, &w->write);
        if (st != SP_OK)
            w->report->failed_path = w->report->output;
    } else if (w->whole.pixels == NULL) {
        struct iovec pages = {l->chunk.pixels, w->gift};

        sp_meter_start(&m);
        l->chunk.height = (y1 - y0) / w->plan.times;
        st = sp_output_put_repeated(w->out, &l->chunk, w->plan.times,
                                    w->gift ? &pages : NULL, w->report->why);
        sp_meter_stop(&m, &w->write);
        if (st != SP_OK)
            w->report->failed_path = w->report->output;
    }
    return st;
}

/* gather: the work's figures into the report: the scale phase the time
 * any thread was scaling (the threads scale side by side, and beside
 * another's write), with the page faults of every slot; write and release
 * summed over the items (one thread at a time does them). */
static void gather(struct work *w, struct sp_report *r)
{
    for (unsigned i = 0; i < w->plan.slots; i++)
        sp_phase_add(&r->phase[SP_SCALE], &w->slot[i].scale, 0);
    r->phase[SP_SCALE].ns += sp_interval_union(w->intervals, w->plan.items);
    sp_phase_add(&r->phase[SP_RELEASE], &w->release, 1);
    sp_phase_add(&r->phase[SP_WRITE], &w->write, 1);
}

/* prepare: W's memory: the slots, the intervals, the whole output (BMP,
 * TGA) or the chunks (a streamed output), and the source's scratch. */
static sp_status prepare(struct work *w, int chunked)
{
    const struct sp_plan *p = &w->plan;
    size_t chunk = 0;
    sp_status st = SP_OK;

    w->slot = calloc(p->slots, sizeof *w->slot);
    w->intervals = calloc(p->items, sizeof *w->intervals);
    if (w->slot == NULL || w->intervals == NULL)
        return ENOMEM;
    if (!chunked)
        st = sp_image_alloc_like(&w->whole, w->report->out_width,
                                 p->out_height, &w->type);
    else
        st = sp_image_raster_size(w->report->out_width, p->chunk_rows,
                                  &w->type, &chunk);
    /* A pipe takes whole pages: each chunk its own. */
    if (st == SP_OK && chunked && w->out != NULL && w->out->splice) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);

        chunk = w->gift = (chunk + page - 1) / page * page;
    }
    if (st == SP_OK)
        st = sp_buffers_map(&w->mem, p, chunk,
                          sp_item_scratch(w->src, &w->job->geom,
                                          w->job->filter, p->band_rows),
                          w->gift != 0);
    for (unsigned i = 0; st == SP_OK && chunked && i < p->slots; i++) {
        struct sp_image *c = &w->slot[i].chunk;

        if (w->lookback)
            st = sp_image_alloc_like(&w->slot[i].before,
                                     w->report->out_width, w->lookback,
                                     &w->type);

        *c = w->type;
        c->backing = SP_BACKING_NONE;
        c->base = NULL;
        c->base_len = 0;
        c->pixels = sp_buffers_chunk(&w->mem, i);
        c->width = w->report->out_width;
        c->height = p->chunk_rows;
        c->stride = w->orow;
    }
    return st;
}

sp_status sp_work_run(const struct sp_job *job, struct sp_source *src,
                      struct sp_output *out, enum sp_outfmt fmt,
                      struct sp_image *keep, struct sp_report *r)
{
    struct work w = {.job = job, .src = src, .out = out, .report = r};
    int chunked = keep == NULL && sp_output_is_streamed(fmt);
    struct sp_meter m;
    sp_status st;

    sp_plan_type(&job->geom, job->filter, &src->img, &w.type);
    w.orow = sp_image_row_bytes(&w.type, r->out_width);
    if (!chunked || out == NULL || !sp_output_segmented(out, &w.lookback))
        w.lookback = 0;
    sp_plan_make(&w.plan, job, chunked, w.orow, r->out_height,
                 src->img.height, w.lookback);
    r->threads_used = w.plan.threads;
    sp_meter_start(&m);
    st = prepare(&w, chunked);
    sp_meter_stop(&m, &r->phase[SP_SCALE]);
    if (st == SP_OK) {
        st = sp_run_ordered(w.plan.threads, w.plan.items, scale_item,
                            write_item, &w, &r->threads_used);
        if (st == SP_OK)
            gather(&w, r);
        for (unsigned i = 0; st != SP_OK && i < w.plan.slots; i++)
            if (w.slot[i].encode_failed && r->failed_path == NULL)
                r->failed_path = r->output;
    }
    if (st == SP_OK && keep != NULL) {
        *keep = w.whole;
        w.whole = (struct sp_image){0};
    } else if (st == SP_OK && !chunked) {
        sp_meter_start(&m);
        st = sp_output_put(out, &w.whole, r->why);
        sp_meter_stop(&m, &r->phase[SP_WRITE]);
        if (st != SP_OK)
            r->failed_path = r->output;
    }
    sp_buffers_unmap(&w.mem);
    for (unsigned i = 0; w.slot != NULL && i < w.plan.slots; i++) {
        sp_image_release(&w.slot[i].before);
        sp_segment_free(w.slot[i].seg);
        sp_deflater_free(w.slot[i].def);
    }
    free(w.slot);
    free(w.intervals);
    sp_image_release(&w.whole);
    return st;
}
