#include "job.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "image.h"
#include "parallel.h"
#include "source.h"

/* A slot's own (see parallel.h): the chunk an item is scaled into (PNM),
 * the scratch its source rows are read into when the source needs one
 * (its thread's, shared by its slots), and the scale phase its thread
 * measured. */
struct lane {
    struct sp_image chunk;
    unsigned char *scratch;
    struct sp_phase scale;
};

/* When an item was scaled, CLOCK_MONOTONIC ns. */
struct span {
    uint64_t t0, t1;
};

/* The job's output, made in items of ROWS output rows: each scaled by one
 * thread into its slot's chunk (or, for the stb formats, into its place in
 * WHOLE) and written, in order, by whichever thread finishes it.  An
 * enlarge by N into chunks makes each distinct row once (TIMES = N) and
 * has it written N times. */
struct stream {
    const struct sp_job *job;
    struct sp_source *src;
    struct sp_output *out;
    struct sp_report *report;
    struct sp_image whole;     /* stb: the whole output; else empty */
    size_t rows, orow;
    unsigned times;            /* each chunk row is written TIMES times */
    struct lane *lanes;        /* [slots] */
    void *mem;                 /* the lanes' chunks and bands: one
                                  anonymous mapping (map_lanes) */
    size_t mem_len;
    struct span *spans;        /* [items]: when each was scaled */
    struct sp_phase release, write;  /* summed over the items' finishes */
};

static void item_span(const struct stream *s, size_t item, size_t *y0,
                      size_t *y1)
{
    size_t oh = s->report->out_height;

    *y0 = item * s->rows;
    *y1 = oh - *y0 < s->rows ? oh : *y0 + s->rows;
}

static unsigned char *item_dest(const struct stream *s, unsigned slot,
                                size_t y0)
{
    if (s->whole.pixels != NULL)
        return s->whole.pixels + y0 * s->orow;
    return s->lanes[slot].chunk.pixels;
}

struct scale_call {
    struct sp_source *src;
    const struct sp_job *job;
    size_t y0, y1;
    unsigned times;            /* make one row of each TIMES */
    size_t orow;
    unsigned char *dest;
    unsigned char *scratch;
};

/* first_source_row: the first source row that output row Y reads. */
static size_t first_source_row(size_t y, int factor)
{
    if (factor > 1)
        return y / (size_t)factor;
    if (factor < -1)
        return y * (size_t)-factor;
    return y;
}

/* source_band: for an enlarge or a copy, the source rows [*SY0, *SY1)
 * that output rows [Y0, Y1) read; the band's first row is the first one
 * output row *FIRST reads.  (A reduce reads row by row: reduce_rows.) */
static void source_band(const struct sp_job *job, size_t y0, size_t y1,
                        size_t *sy0, size_t *sy1, size_t *first)
{
    *sy0 = first_source_row(y0, job->factor);
    if (job->factor > 1) {
        *sy1 = (y1 - 1) / (size_t)job->factor + 1;
        *first = *sy0 * (size_t)job->factor;
    } else {
        *sy1 = y1;
        *first = y0;
    }
}

/* band_rows: the most source rows one request reads: those an output row
 * reads, for a reduce (reduce_rows); those an item of ROWS output rows
 * reads, for an enlarge or a copy. */
static size_t band_rows(const struct sp_job *job, size_t rows, size_t h)
{
    size_t n = rows;

    if (job->factor < -1)
        n = job->filter == SP_FILTER_BOX ? (size_t)-(long long)job->factor
                                         : 1;
    else if (job->factor > 1)
        n = rows / (size_t)job->factor + 2;
    return n < h ? n : h;
}

/* enlarge_rows: C's output rows of an enlarge or a copy, from the band of
 * source rows they read. */
static sp_status enlarge_rows(const struct scale_call *c)
{
    size_t sy0, sy1, first, y1;
    struct sp_image band;
    unsigned char *d = c->dest;
    sp_status st;

    source_band(c->job, c->y0, c->y1, &sy0, &sy1, &first);
    st = sp_source_rows(c->src, sy0, sy1, c->scratch, &band);
    if (st != SP_OK)
        return st;
    y1 = c->y1 - first;
    if (c->times == 1)
        sp_scale_rows(&band, c->job->factor, c->job->filter, c->y0 - first,
                      y1, d);
    else
        for (size_t y = c->y0 - first; y < y1; y += c->times, d += c->orow)
            sp_scale_rows(&band, c->job->factor, c->job->filter, y, y + 1,
                          d);
    return SP_OK;
}

/* reduce_rows: C's output rows of a reduce, one at a time: each asks for
 * only the source rows it reads (one row of each N to sample, the N rows
 * of its blocks for box), so a source that copies rows copies only those,
 * into scratch that stays in the cache. */
static sp_status reduce_rows(const struct scale_call *c)
{
    size_t n = (size_t)-(long long)c->job->factor;
    size_t h = c->src->img.height;
    struct sp_image band;
    sp_status st;

    for (size_t y = c->y0; y < c->y1; y++) {
        size_t sy = y * n;
        size_t rows = c->job->filter != SP_FILTER_BOX ? 1
                      : h - sy < n                  ? h - sy
                                                    : n;

        st = sp_source_rows(c->src, sy, sy + rows, c->scratch, &band);
        if (st != SP_OK)
            return st;
        sp_scale_rows(&band, c->job->factor, c->job->filter, 0, 1,
                      c->dest + (y - c->y0) * c->orow);
    }
    return SP_OK;
}

static sp_status scale_rows(void *arg)
{
    const struct scale_call *c = arg;

    return c->job->factor < -1 ? reduce_rows(c) : enlarge_rows(c);
}

/* scale_item: an item's rows, read under the source's guard. */
static sp_status scale_item(void *arg, unsigned slot, size_t item)
{
    struct stream *s = arg;
    struct scale_call c = {s->src, s->job, 0, 0, s->times, s->orow, NULL,
                           s->lanes[slot].scratch};
    struct sp_meter m;
    sp_status st;

    item_span(s, item, &c.y0, &c.y1);
    c.dest = item_dest(s, slot, c.y0);
    sp_meter_start(&m);
    s->spans[item].t0 = sp_now_ns();
    st = sp_source_guard(s->src, scale_rows, &c);
    s->spans[item].t1 = sp_now_ns();
    sp_meter_stop(&m, &s->lanes[slot].scale);
    return st;
}

/* write_item: with every earlier item written, give back the input rows
 * no later item reads, and write this one's rows. */
static sp_status write_item(void *arg, unsigned slot, size_t item)
{
    struct stream *s = arg;
    struct lane *l = &s->lanes[slot];
    struct sp_meter m;
    sp_status st = SP_OK;
    size_t y0, y1;

    item_span(s, item, &y0, &y1);
    if (y1 < s->report->out_height) {
        sp_meter_start(&m);
        sp_source_done_before(s->src, first_source_row(y1, s->job->factor));
        sp_meter_stop(&m, &s->release);
    }
    if (s->whole.pixels == NULL) {
        sp_meter_start(&m);
        l->chunk.height = (y1 - y0) / s->times;
        st = sp_output_put_repeated(s->out, &l->chunk, s->times);
        sp_meter_stop(&m, &s->write);
        if (st != SP_OK)
            s->report->failed_path = s->job->out;
    }
    return st;
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

/* over_limit: a W x H image has more pixels than LIMIT allows; WHY
 * (SP_WHY_MAX bytes) says so. */
static int over_limit(char *why, const char *what, size_t w, size_t h,
                      uint64_t limit)
{
    unsigned __int128 px = (unsigned __int128)w * h;

    if (px <= limit)
        return 0;
    snprintf(why, SP_WHY_MAX, "%s is %zux%zu, over the limit of "
             "%llu pixels (raise it with --max-pixels)", what, w, h,
             (unsigned long long)limit);
    return 1;
}

/* The job's policy on an input, which the loader asks about its header
 * before it reads, maps or buffers the raster (sp_accept_fn): the output
 * size must be computable (into the report), and neither the input nor
 * the output may have more pixels than LIMIT. */
struct policy {
    const struct sp_job *job;
    struct sp_report *report;
    uint64_t limit;
};

static sp_status accept_header(const struct sp_header *hdr, void *arg,
                               char *why)
{
    const struct policy *p = arg;
    struct sp_report *r = p->report;
    sp_status st = sp_scale_size(hdr->width, hdr->height, p->job->factor,
                                 &r->out_width, &r->out_height);

    if (st == SP_E_TOOBIG)
        snprintf(why, SP_WHY_MAX, "scaled by %d it would be larger than "
                 "memory can address", p->job->factor);
    if (st == SP_OK &&
        (over_limit(why, "the input", hdr->width, hdr->height, p->limit) ||
         over_limit(why, "the output", r->out_width, r->out_height,
                    p->limit)))
        st = SP_E_LIMIT;
    return st;
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

/* add: phase P's figures to the report's, its time too if WITH_NS. */
static void add(struct sp_phase *to, const struct sp_phase *p, int with_ns)
{
    if (with_ns)
        to->ns += p->ns;
    to->minflt += p->minflt;
    to->majflt += p->majflt;
}

/* gather: the stream's figures into the report: the scale phase the time
 * any thread was scaling (the threads scale side by side, and beside
 * another's write), with the page faults of every slot; write and release
 * summed over the items (one thread at a time does them). */
static void gather(const struct stream *s, unsigned slots, size_t items,
                   struct sp_report *r)
{
    for (unsigned i = 0; i < slots; i++)
        add(&r->phase[SP_SCALE], &s->lanes[i].scale, 0);
    r->phase[SP_SCALE].ns += scaling_time(s->spans, items);
    add(&r->phase[SP_RELEASE], &s->release, 1);
    add(&r->phase[SP_WRITE], &s->write, 1);
}

/* HUGE_PAGE: the size of a transparent huge page on x86-64 and arm64
 * (4 KiB base pages); see map_lanes. */
#define HUGE_PAGE ((size_t)2 << 20)

/* map_lanes: S's lanes' memory, in one anonymous mapping: for a PNM
 * output a chunk of CHUNK_ROWS output rows for each of the SLOTS, and for
 * a pread source a band of BAND_ROWS source rows for each of their
 * threads (a thread scales one item at a time, so its slots share one).
 * A fresh 4 KiB page costs a fault and a clear: 1.2-1.5 us here, 190 us
 * for 512 KiB, with or without MAP_POPULATE.  A 2 MiB huge page took
 * 30-100 us in a loop, but 1-3 ms now and then in a fresh process (no
 * compaction was counted; the VM's host faulting the block back in is a
 * guess), a stall that swamped a 1 ms scale phase.  So only lanes of a
 * huge page or more are laid on huge pages, where the kernel allows them
 * (THP "madvise" or "always"; otherwise this is advice that changes
 * nothing). */
static sp_status map_lanes(struct stream *s, unsigned slots,
                           size_t chunk_rows, size_t band, int chunks)
{
    const struct sp_image *src = &s->src->img;
    size_t chunk = 0, bands, total, len;
    unsigned char *p;
    sp_status st;

    if (chunks) {
        st = sp_image_raster_size(s->report->out_width, chunk_rows,
                                  src->channels, src->bytes, &chunk);
        if (st != SP_OK)
            return st;
    }
    if (__builtin_mul_overflow(band, (size_t)(slots / SP_RUN_DEPTH), &bands) ||
        __builtin_mul_overflow(chunk, (size_t)slots, &total) ||
        __builtin_add_overflow(total, bands, &total) ||
        total > SIZE_MAX - 2 * HUGE_PAGE)
        return SP_E_TOOBIG;
    if (total == 0)
        return SP_OK;
    len = total >= HUGE_PAGE
              ? (total + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE + HUGE_PAGE
              : total;
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
             -1, 0);
    if (p == MAP_FAILED)
        return ENOMEM;
    s->mem = p;
    s->mem_len = len;
    if (len != total) {
        p = (unsigned char *)(((uintptr_t)p + HUGE_PAGE - 1) &
                              ~(uintptr_t)(HUGE_PAGE - 1));
        (void)madvise(p, len - HUGE_PAGE, MADV_HUGEPAGE);
    }
    for (unsigned i = 0; i < slots; i++) {
        struct lane *l = &s->lanes[i];

        l->scratch = p + chunk * slots + band * (i / SP_RUN_DEPTH);
        if (!chunks)
            continue;
        l->chunk.pixels = p + i * chunk;
        l->chunk.width = s->report->out_width;
        l->chunk.height = chunk_rows;
        l->chunk.stride = l->chunk.width * sp_image_pixel_size(src);
        l->chunk.channels = src->channels;
        l->chunk.bytes = src->bytes;
        l->chunk.maxval = src->maxval;
    }
    return SP_OK;
}

/* scale_and_write: the output of SRC, item by item, into OUT. */
static sp_status scale_and_write(const struct sp_job *job,
                                 struct sp_source *in, struct sp_output *out,
                                 enum sp_outfmt fmt, struct sp_report *r)
{
    struct stream s = {.job = job, .src = in, .out = out, .report = r};
    const struct sp_image *src = &in->img;
    size_t oh = r->out_height, budget = job->chunk_bytes, items;
    unsigned threads = job->threads, slots;
    struct sp_meter m;
    sp_status st = SP_OK;

    s.orow = r->out_width * sp_image_pixel_size(src);
    /* The stb encoders take the whole image at once. */
    if (fmt != SP_OUT_PNM)
        budget = (size_t)-1;
    else if (budget == 0)
        budget = SP_CHUNK;
    s.rows = item_rows(budget, s.orow, oh, threads, job->factor);
    s.times = fmt == SP_OUT_PNM && job->factor > 1 &&
                      s.rows % (size_t)job->factor == 0
                  ? (unsigned)job->factor
                  : 1;
    items = (oh + s.rows - 1) / s.rows;
    if (threads > items)
        threads = (unsigned)items;
    r->threads_used = threads;
    slots = threads * SP_RUN_DEPTH;

    sp_meter_start(&m);
    s.lanes = calloc(slots, sizeof *s.lanes);
    s.spans = calloc(items, sizeof *s.spans);
    if (s.lanes == NULL || s.spans == NULL)
        st = ENOMEM;
    else if (fmt != SP_OUT_PNM)
        st = sp_image_alloc(&s.whole, r->out_width, oh, src->channels,
                            src->bytes, src->maxval);
    if (st == SP_OK)
        st = map_lanes(&s, slots, s.rows / s.times,
                       sp_source_scratch(in, band_rows(job, s.rows,
                                                       src->height)),
                       fmt == SP_OUT_PNM);
    sp_meter_stop(&m, &r->phase[SP_SCALE]);

    if (st == SP_OK) {
        st = sp_run_ordered(threads, items, scale_item, write_item, &s,
                            &r->threads_used);
        if (st == SP_OK)
            gather(&s, slots, items, r);
    }
    if (st == SP_OK && s.whole.pixels != NULL) {
        sp_meter_start(&m);
        st = sp_output_put(out, &s.whole, r->why);
        sp_meter_stop(&m, &r->phase[SP_WRITE]);
        if (st != SP_OK)
            r->failed_path = job->out;
    }
    if (s.mem != NULL)
        (void)munmap(s.mem, s.mem_len);
    free(s.lanes);
    free(s.spans);
    sp_image_release(&s.whole);
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
    struct policy policy = {
        job, r, job->max_pixels ? job->max_pixels : SP_MAX_PIXELS};

    memset(r, 0, sizeof *r);
    if (job->threads < 1 || job->threads > SP_THREADS_MAX)
        return fail(r, job->in, SP_E_USAGE);
    st = sp_outfmt_for(job->out, &fmt);
    if (st != SP_OK)
        return fail(r, job->out, st);

    sp_meter_start(&m);
    st = sp_load_checked(job->in, job->io, accept_header, &policy, &src,
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
