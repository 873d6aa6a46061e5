#include "job.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guard.h"
#include "image.h"
#include "parallel.h"

/* One thread's own: the chunk it scales into (PNM), and what its calls
 * measured. */
struct lane {
    struct sp_image chunk;
    struct sp_phase phase[SP_NPHASES];
};

/* When an item was scaled, CLOCK_MONOTONIC ns. */
struct span {
    uint64_t t0, t1;
};

/* The job's output, made in items of ROWS output rows: each scaled by one
 * thread into its lane's chunk (or, for the stb formats, into its place in
 * WHOLE) and written, in order, by the same thread. */
struct stream {
    const struct sp_job *job;
    struct sp_image *src;
    struct sp_output *out;
    struct sp_report *report;
    struct sp_image whole;     /* stb: the whole output; else empty */
    size_t rows, orow;
    size_t grain;              /* see sp_image_drop_rows */
    struct lane *lanes;        /* [threads] */
    struct span *spans;        /* [items]: when each was scaled */
};

static void item_span(const struct stream *s, size_t item, size_t *y0,
                      size_t *y1)
{
    size_t oh = s->report->out_height;

    *y0 = item * s->rows;
    *y1 = oh - *y0 < s->rows ? oh : *y0 + s->rows;
}

static unsigned char *item_dest(const struct stream *s, unsigned thread,
                                size_t y0)
{
    if (s->whole.pixels != NULL)
        return s->whole.pixels + y0 * s->orow;
    return s->lanes[thread].chunk.pixels;
}

struct scale_call {
    const struct stream *s;
    unsigned thread;
    size_t y0, y1;
};

static sp_status run_scale(void *arg)
{
    const struct scale_call *c = arg;

    sp_scale_rows(c->s->src, c->s->job->factor, c->s->job->filter, c->y0,
                  c->y1, item_dest(c->s, c->thread, c->y0));
    return SP_OK;
}

/* scale_item: an item's rows; reading a mapping, under the SIGBUS
 * guard. */
static sp_status scale_item(void *arg, unsigned thread, size_t item)
{
    struct stream *s = arg;
    struct scale_call c = {s, thread, 0, 0};
    struct sp_meter m;
    sp_status st;

    item_span(s, item, &c.y0, &c.y1);
    sp_meter_start(&m);
    s->spans[item].t0 = sp_now_ns();
    st = s->src->backing == SP_BACKING_MMAP ? sp_guard_run(run_scale, &c)
                                            : run_scale(&c);
    s->spans[item].t1 = sp_now_ns();
    sp_meter_stop(&m, &s->lanes[thread].phase[SP_SCALE]);
    return st;
}

/* first_source_row: the first source row that output row Y reads. */
static size_t first_source_row(size_t y, int factor)
{
    if (factor > 1)
        return y / (size_t)factor;
    if (factor < -1)
        return y * (size_t)-factor;
    return y;
}

/* write_item: with every earlier item written, give back the input rows
 * no later item reads, and write this one's rows. */
static sp_status write_item(void *arg, unsigned thread, size_t item)
{
    struct stream *s = arg;
    struct lane *l = &s->lanes[thread];
    struct sp_meter m;
    sp_status st = SP_OK;
    size_t y0, y1;

    item_span(s, item, &y0, &y1);
    if (y1 < s->report->out_height) {
        sp_meter_start(&m);
        sp_image_drop_rows(s->src, first_source_row(y1, s->job->factor),
                           s->grain);
        sp_meter_stop(&m, &l->phase[SP_RELEASE]);
    }
    if (s->whole.pixels == NULL) {
        sp_meter_start(&m);
        l->chunk.height = y1 - y0;
        st = sp_output_put(s->out, &l->chunk, s->report->why);
        sp_meter_stop(&m, &l->phase[SP_WRITE]);
        if (st != SP_OK)
            s->report->failed_path = s->job->out;
    }
    return st;
}

/* drop_grain: how a mapped input of LEN bytes is given back: in blocks of
 * a 64th of it or so (a power of two), from a page to SP_DROP_GRAIN.  Each
 * madvise() costs tens of microseconds here (a TLB flush on every CPU
 * running the job), so a large input goes 2 MiB at a time; a small one in
 * smaller blocks, or it would stay mapped whole (on the 3.75 MB image an
 * enlarge peaked at 5.3 MB with 2 MiB blocks, 3.3 MB with 32 KiB). */
static size_t drop_grain(size_t len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), grain = SP_DROP_GRAIN;

    while (grain / 2 >= page && grain > len / 64)
        grain /= 2;
    return grain;
}

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

/* over_limit: a W x H image has more pixels than LIMIT allows. */
static int over_limit(struct sp_report *r, const char *what, size_t w,
                      size_t h, uint64_t limit)
{
    unsigned __int128 px = (unsigned __int128)w * h;

    if (px <= limit)
        return 0;
    snprintf(r->why, sizeof r->why, "%s is %zux%zu, over the limit of "
             "%llu pixels (raise it with --max-pixels)", what, w, h,
             (unsigned long long)limit);
    return 1;
}

static sp_status fail(struct sp_report *r, const char *path, sp_status st)
{
    r->failed_path = path;
    return st;
}

static int by_start(const void *a, const void *b)
{
    const struct span *x = a, *y = b;

    return (x->t0 > y->t0) - (x->t0 < y->t0);
}

/* scaling_time: how long at least one thread was scaling: the union of
 * the N items' spans (sorted here). */
static uint64_t scaling_time(struct span *spans, size_t n)
{
    uint64_t total = 0, t0 = 0, t1 = 0;

    qsort(spans, n, sizeof *spans, by_start);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || spans[i].t0 > t1) {
            total += t1 - t0;
            t0 = spans[i].t0;
            t1 = spans[i].t1;
        } else if (spans[i].t1 > t1) {
            t1 = spans[i].t1;
        }
    }
    return total + (t1 - t0);
}

/* gather: the lanes' figures into the report: page faults summed over
 * the threads; the scale phase the time any thread was scaling (the
 * threads scale side by side, and beside another's write); write and
 * release summed (one thread at a time does them). */
static void gather(const struct stream *s, unsigned threads, size_t items,
                   struct sp_report *r)
{
    for (unsigned t = 0; t < threads; t++)
        for (int p = SP_SCALE; p <= SP_WRITE; p++) {
            const struct sp_phase *lp = &s->lanes[t].phase[p];
            struct sp_phase *rp = &r->phase[p];

            if (p != SP_SCALE)
                rp->ns += lp->ns;
            rp->minflt += lp->minflt;
            rp->majflt += lp->majflt;
        }
    r->phase[SP_SCALE].ns += scaling_time(s->spans, items);
}

/* scale_and_write: the output of SRC, item by item, into OUT. */
static sp_status scale_and_write(const struct sp_job *job,
                                 struct sp_image *src, struct sp_output *out,
                                 enum sp_outfmt fmt, struct sp_report *r)
{
    struct stream s = {job, src, out, r, {0}, 0, 0, 0, NULL, NULL};
    size_t oh = r->out_height, budget = job->chunk_bytes, items;
    unsigned threads = job->threads;
    struct sp_meter m;
    sp_status st = SP_OK;

    s.orow = r->out_width * sp_image_pixel_size(src);
    /* The stb encoders take the whole image at once. */
    if (fmt != SP_OUT_PNM)
        budget = (size_t)-1;
    else if (budget == 0)
        budget = SP_CHUNK;
    s.rows = item_rows(budget, s.orow, oh, threads, job->factor);
    s.grain = job->drop_grain ? job->drop_grain : drop_grain(src->base_len);
    items = (oh + s.rows - 1) / s.rows;
    if (threads > items)
        threads = (unsigned)items;
    r->threads_used = threads;

    sp_meter_start(&m);
    s.lanes = calloc(threads, sizeof *s.lanes);
    s.spans = calloc(items, sizeof *s.spans);
    if (s.lanes == NULL || s.spans == NULL)
        st = ENOMEM;
    else if (fmt != SP_OUT_PNM)
        st = sp_image_alloc(&s.whole, r->out_width, oh, src->channels,
                            src->bytes, src->maxval);
    for (unsigned t = 0; st == SP_OK && fmt == SP_OUT_PNM && t < threads; t++)
        st = sp_image_alloc(&s.lanes[t].chunk, r->out_width, s.rows,
                            src->channels, src->bytes, src->maxval);
    sp_meter_stop(&m, &r->phase[SP_SCALE]);

    if (st == SP_OK) {
        st = sp_run_ordered(threads, items, scale_item, write_item, &s);
        if (st == SP_OK)
            gather(&s, threads, items, r);
    }
    if (st == SP_OK && s.whole.pixels != NULL) {
        sp_meter_start(&m);
        st = sp_output_put(out, &s.whole, r->why);
        sp_meter_stop(&m, &r->phase[SP_WRITE]);
        if (st != SP_OK)
            r->failed_path = job->out;
    }
    for (unsigned t = 0; s.lanes != NULL && t < threads; t++)
        sp_image_release(&s.lanes[t].chunk);
    free(s.lanes);
    free(s.spans);
    sp_image_release(&s.whole);
    return st;
}

sp_status sp_job_run(const struct sp_job *job, struct sp_report *r)
{
    struct sp_image src, layout;
    struct sp_output out;
    int opened = 0;
    struct sp_meter m;
    enum sp_outfmt fmt;
    sp_status st, rel;
    uint64_t limit = job->max_pixels ? job->max_pixels : SP_MAX_PIXELS;

    memset(r, 0, sizeof *r);
    if (job->threads < 1 || job->threads > SP_THREADS_MAX)
        return fail(r, job->in, SP_E_USAGE);
    st = sp_outfmt_for(job->out, &fmt);
    if (st != SP_OK)
        return fail(r, job->out, st);

    sp_meter_start(&m);
    st = sp_load(job->in, job->io, &src, &r->load);
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
    if (job->after_load != NULL)
        job->after_load(job->after_load_arg);

    st = sp_scale_size(src.width, src.height, job->factor, &r->out_width,
                       &r->out_height);
    if (st == SP_E_TOOBIG)
        snprintf(r->why, sizeof r->why, "scaled by %d it would be larger "
                 "than memory can address", job->factor);
    if (st == SP_OK &&
        (over_limit(r, "the input", src.width, src.height, limit) ||
         over_limit(r, "the output", r->out_width, r->out_height, limit)))
        st = SP_E_LIMIT;
    if (st == SP_OK) {
        layout = src;
        layout.width = r->out_width;
        layout.height = r->out_height;
        sp_meter_start(&m);
        st = sp_output_open(&out, job->out, fmt, &layout, r->why);
        sp_meter_stop(&m, &r->phase[SP_WRITE]);
        if (st != SP_OK)
            r->failed_path = job->out;
        opened = st == SP_OK;
    }
    if (opened)
        st = scale_and_write(job, &src, &out, fmt, r);

    sp_meter_start(&m);
    rel = sp_image_release(&src);
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

void sp_report_print(const struct sp_report *r, int json, FILE *f)
{
    static const char *names[SP_NPHASES] = {"load", "scale", "release",
                                            "write"};
    const char *io = sp_io_name(r->load.io_used);

    if (json) {
        fprintf(f, "{\"io\":\"%s\",\"threads\":%u", io, r->threads_used);
        for (int i = 0; i < SP_NPHASES; i++)
            fprintf(f, ",\"%s_ns\":%" PRIu64 ",\"%s_minflt\":%ld,"
                    "\"%s_majflt\":%ld", names[i], r->phase[i].ns, names[i],
                    r->phase[i].minflt, names[i], r->phase[i].majflt);
        fprintf(f, ",\"in\":\"%zux%zu\",\"out\":\"%zux%zu\"}\n", r->in_width,
                r->in_height, r->out_width, r->out_height);
        return;
    }
    fprintf(f, "io=%s threads=%u", io, r->threads_used);
    for (int i = 0; i < SP_NPHASES; i++)
        fprintf(f, " %s_ns=%" PRIu64 " %s_minflt=%ld %s_majflt=%ld", names[i],
                r->phase[i].ns, names[i], r->phase[i].minflt, names[i],
                r->phase[i].majflt);
    fprintf(f, " in=%zux%zu out=%zux%zu\n", r->in_width, r->in_height,
            r->out_width, r->out_height);
}
