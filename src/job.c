#include "job.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "item.h"
#include "policy.h"
#include "parallel.h"
#include "plan.h"
#include "source.h"

/* A slot's own: the chunk an item is scaled into (PNM), and the scale
 * phase its thread measured. */
struct lane {
    struct sp_image chunk;
    struct sp_phase scale;
};

/* The job's work: the plan's items, each scaled by one thread into its
 * slot's chunk (or, for the stb formats, into its place in WHOLE) and
 * written, in order, by whichever thread finishes it. */
struct work {
    const struct sp_job *job;
    struct sp_plan plan;
    struct sp_source *src;
    struct sp_output *out;
    struct sp_report *report;
    struct sp_image whole;     /* stb: the whole output; else empty */
    size_t orow;
    struct sp_lanes mem;       /* the chunks and the scratch */
    struct lane *lanes;        /* [slots] */
    struct sp_span *spans;     /* [items]: when each was scaled */
    struct sp_phase release, write;  /* summed over the items' finishes */
};

/* scale_item: item ITEM into SLOT's chunk, or its place in the whole. */
static sp_status scale_item(void *arg, unsigned slot, size_t item)
{
    struct work *w = arg;
    struct sp_item it = {w->src, w->job->factor, w->job->filter, 0, 0,
                         w->plan.times, w->orow, NULL,
                         sp_lanes_scratch(&w->mem, slot)};
    struct sp_meter m;
    sp_status st;

    sp_plan_item(&w->plan, item, &it.y0, &it.y1);
    it.dest = w->whole.pixels != NULL ? w->whole.pixels + it.y0 * w->orow
                                      : w->lanes[slot].chunk.pixels;
    sp_meter_start(&m);
    w->spans[item].t0 = sp_now_ns();
    st = sp_item_scale(&it);
    w->spans[item].t1 = sp_now_ns();
    sp_meter_stop(&m, &w->lanes[slot].scale);
    return st;
}

/* write_item: with every earlier item written, tell the source which rows
 * no later item reads, and write this one's rows. */
static sp_status write_item(void *arg, unsigned slot, size_t item)
{
    struct work *w = arg;
    struct lane *l = &w->lanes[slot];
    struct sp_meter m;
    sp_status st = SP_OK;
    size_t y0, y1;

    sp_plan_item(&w->plan, item, &y0, &y1);
    if (y1 < w->plan.out_height) {
        sp_meter_start(&m);
        sp_source_done_before(w->src, sp_plan_first_row(&w->plan, y1));
        sp_meter_stop(&m, &w->release);
    }
    if (w->whole.pixels == NULL) {
        sp_meter_start(&m);
        l->chunk.height = (y1 - y0) / w->plan.times;
        st = sp_output_put_repeated(w->out, &l->chunk, w->plan.times);
        sp_meter_stop(&m, &w->write);
        if (st != SP_OK)
            w->report->failed_path = w->job->out;
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
        sp_phase_add(&r->phase[SP_SCALE], &w->lanes[i].scale, 0);
    r->phase[SP_SCALE].ns += sp_span_union(w->spans, w->plan.items);
    sp_phase_add(&r->phase[SP_RELEASE], &w->release, 1);
    sp_phase_add(&r->phase[SP_WRITE], &w->write, 1);
}

/* prepare: W's memory: the lanes, the spans, the whole output (stb) or
 * the chunks (PNM), and the source's scratch. */
static sp_status prepare(struct work *w, int chunked)
{
    const struct sp_image *src = &w->src->img;
    const struct sp_plan *p = &w->plan;
    size_t chunk = 0;
    sp_status st = SP_OK;

    w->lanes = calloc(p->slots, sizeof *w->lanes);
    w->spans = calloc(p->items, sizeof *w->spans);
    if (w->lanes == NULL || w->spans == NULL)
        return ENOMEM;
    if (!chunked)
        st = sp_image_alloc(&w->whole, w->report->out_width, p->out_height,
                            src->channels, src->bytes, src->maxval);
    else
        st = sp_image_raster_size(w->report->out_width, p->chunk_rows,
                                  src->channels, src->bytes, &chunk);
    if (st == SP_OK)
        st = sp_lanes_map(&w->mem, p, chunk,
                          sp_source_scratch(w->src, p->band_rows));
    for (unsigned i = 0; st == SP_OK && chunked && i < p->slots; i++) {
        struct sp_image *c = &w->lanes[i].chunk;

        *c = *src;
        c->backing = SP_BACKING_NONE;
        c->base = NULL;
        c->base_len = 0;
        c->fd = -1;
        c->pixels = sp_lanes_chunk(&w->mem, i);
        c->width = w->report->out_width;
        c->height = p->chunk_rows;
        c->stride = w->orow;
    }
    return st;
}

/* scale_and_write: the output of SRC, item by item, into OUT. */
static sp_status scale_and_write(const struct sp_job *job,
                                 struct sp_source *src, struct sp_output *out,
                                 enum sp_outfmt fmt, struct sp_report *r)
{
    struct work w = {.job = job, .src = src, .out = out, .report = r};
    int chunked = fmt == SP_OUT_PNM;
    struct sp_meter m;
    sp_status st;

    w.orow = r->out_width * sp_image_pixel_size(&src->img);
    sp_plan_make(&w.plan, job, chunked, w.orow, r->out_height,
                 src->img.height);
    r->threads_used = w.plan.threads;
    sp_meter_start(&m);
    st = prepare(&w, chunked);
    sp_meter_stop(&m, &r->phase[SP_SCALE]);
    if (st == SP_OK) {
        st = sp_run_ordered(w.plan.threads, w.plan.items, scale_item,
                            write_item, &w, &r->threads_used);
        if (st == SP_OK)
            gather(&w, r);
    }
    if (st == SP_OK && !chunked) {
        sp_meter_start(&m);
        st = sp_output_put(out, &w.whole, r->why);
        sp_meter_stop(&m, &r->phase[SP_WRITE]);
        if (st != SP_OK)
            r->failed_path = job->out;
    }
    sp_lanes_unmap(&w.mem);
    free(w.lanes);
    free(w.spans);
    sp_image_release(&w.whole);
    return st;
}

static sp_status fail(struct sp_report *r, const char *path, sp_status st)
{
    r->failed_path = path;
    return st;
}

sp_status sp_job_run(const struct sp_job *job, struct sp_report *r)
{
    struct sp_image src, layout;
    struct sp_source in;
    struct sp_output out;
    int opened = 0;
    struct sp_meter m;
    enum sp_outfmt fmt;
    sp_status st, rel;
    struct sp_policy policy = {
        job->factor, job->max_pixels ? job->max_pixels : SP_MAX_PIXELS,
        &r->out_width, &r->out_height};

    memset(r, 0, sizeof *r);
    if (job->threads < 1 || job->threads > SP_THREADS_MAX)
        return fail(r, job->in, SP_E_USAGE);
    st = sp_outfmt_for(job->out, &fmt);
    if (st != SP_OK)
        return fail(r, job->out, st);

    sp_meter_start(&m);
    st = sp_load_checked(job->in, job->io, sp_policy_accept, &policy, &src,
                         &r->load);
    sp_meter_stop(&m, &r->phase[SP_LOAD]);
    if (st != SP_OK) {
        memcpy(r->why, r->load.why, sizeof r->why);
        return fail(r, job->in, st);
    }
    r->in_width = src.width;
    r->in_height = src.height;
    r->channels = src.channels;
    r->bytes = src.bytes;
    r->maxval = src.maxval;
    sp_source_open(&in, &src, job->drop_grain);
    if (job->after_load != NULL)
        job->after_load(job->after_load_arg);

    layout = in.img;
    layout.width = r->out_width;
    layout.height = r->out_height;
    sp_meter_start(&m);
    st = sp_output_open(&out, job->out, fmt, &layout, r->why);
    sp_meter_stop(&m, &r->phase[SP_WRITE]);
    if (st != SP_OK)
        r->failed_path = job->out;
    opened = st == SP_OK;
    if (opened)
        st = scale_and_write(job, &in, &out, fmt, r);
    /* A mapped or pread input is read until the last item is scaled: it
     * must still be the file the load saw, or the output is not
     * committed. */
    if (opened && st == SP_OK)
        st = sp_source_check(&in);

    sp_meter_start(&m);
    rel = sp_source_release(&in);
    sp_meter_stop(&m, &r->phase[SP_RELEASE]);
    if (st == SP_OK && rel != SP_OK)
        st = rel;
    if (opened) {
        sp_status closed;

        sp_meter_start(&m);
        closed = sp_output_close(&out, st);
        sp_meter_stop(&m, &r->phase[SP_WRITE]);
        if (st == SP_OK && closed != SP_OK) {
            st = closed;
            r->failed_path = job->out;
        }
    }
    if (st != SP_OK)
        return fail(r, r->failed_path != NULL ? r->failed_path : job->in, st);
    return SP_OK;
}

