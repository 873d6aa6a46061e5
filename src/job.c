#include "job.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "guard.h"
#include "image.h"
#include "parallel.h"

/* One window's work: output rows from row0 into buf, ORow bytes each. */
struct window {
    const struct sp_image *src;
    int factor;
    enum sp_filter filter;
    unsigned char *buf;
    size_t row0, orow;
};

struct band {
    const struct window *w;
    size_t y0, y1;
};

static sp_status run_band(void *arg)
{
    const struct band *b = arg;
    const struct window *w = b->w;

    sp_scale_rows(w->src, w->factor, w->filter, b->y0, b->y1,
                  w->buf + (b->y0 - w->row0) * w->orow);
    return SP_OK;
}

/* scale_band: one thread's rows of a window; reading a mapping, under the
 * SIGBUS guard. */
static sp_status scale_band(void *arg, unsigned band, size_t y0, size_t y1)
{
    struct band b = {arg, y0, y1};

    (void)band;
    if (b.w->src->backing == SP_BACKING_MMAP)
        return sp_guard_run(run_band, &b);
    return run_band(&b);
}

/* advise_huge: ask for the window in 2 MiB pages where it spans them, so
 * that filling a fresh 16 MiB window costs 8 page faults, not 4096. */
static void advise_huge(const struct sp_image *img)
{
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)img->base + huge - 1) & ~(huge - 1);
    uintptr_t hi = ((uintptr_t)img->base + img->base_len) & ~(huge - 1);

    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

/* window_budget: the default window for an output of OUT_BYTES: a 64th
 * of it, so that the threads meet 64 times or so whatever the size (each
 * meeting costs tens of microseconds) and the window is small beside the
 * output, but no less than SP_WINDOW_MIN a thread and no more than
 * SP_WINDOW_MAX (the memory stays small). */
static size_t window_budget(size_t out_bytes, unsigned threads)
{
    size_t least = SP_WINDOW_MIN * threads, budget = out_bytes / 64;

    if (budget > SP_WINDOW_MAX)
        budget = SP_WINDOW_MAX;
    return budget > least ? budget : least;
}

/* window_rows: how many output rows of ORow bytes make a window: about
 * BUDGET bytes, at least one row per thread, and for an enlarge by N a
 * multiple of N rows per thread, so that each band starts on a new source
 * row and expands every source row once. */
static size_t window_rows(size_t budget, size_t orow, size_t oh,
                          unsigned threads, int factor)
{
    size_t unit = (factor > 1 ? (size_t)factor : 1) * threads;
    size_t rows = budget / orow;

    /* A large factor on many threads: whole source rows a band would
     * overrun the budget, so give that up and expand some rows twice. */
    if (unit / threads * orow > budget / threads)
        unit = threads;

    rows = rows < unit ? unit : (rows + unit - 1) / unit * unit;
    return rows < oh ? rows : oh;
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

/* scale_and_write: the output of SRC, window by window, into OUT. */
static sp_status scale_and_write(const struct sp_job *job,
                                 struct sp_image *src, struct sp_output *out,
                                 enum sp_outfmt fmt, struct sp_report *r)
{
    struct sp_image win;
    struct sp_pool *pool = NULL;
    struct window w = {src, job->factor, job->filter, NULL, 0, 0};
    struct sp_meter m;
    size_t oh = r->out_height, rows;
    sp_status st;

    sp_meter_start(&m);
    r->threads_used = job->threads < oh ? job->threads : (unsigned)oh;
    w.orow = r->out_width * sp_image_pixel_size(src);
    /* The stb encoders take the whole image at once. */
    rows = fmt != SP_OUT_PNM ? oh
           : window_rows(job->window_bytes ? job->window_bytes
                         : window_budget(w.orow * oh, r->threads_used),
                         w.orow, oh, r->threads_used, job->factor);
    st = sp_image_alloc(&win, r->out_width, rows, src->channels, src->bytes,
                        src->maxval);
    if (st == SP_OK) {
        advise_huge(&win);
        st = sp_pool_start(r->threads_used, &pool);
    }
    w.buf = win.pixels;
    sp_meter_stop(&m, &r->phase[SP_SCALE]);

    for (size_t y = 0; st == SP_OK && y < oh; y += rows) {
        size_t y1 = oh - y < rows ? oh : y + rows;

        sp_meter_start(&m);
        w.row0 = y;
        st = sp_pool_bands(pool, y, y1, scale_band, &w, NULL);
        sp_meter_stop(&m, &r->phase[SP_SCALE]);
        if (st != SP_OK)
            break;

        if (y1 < oh) {
            sp_meter_start(&m);
            sp_image_drop_rows(src, first_source_row(y1, job->factor));
            sp_meter_stop(&m, &r->phase[SP_RELEASE]);
        }

        sp_meter_start(&m);
        win.height = y1 - y;
        st = sp_output_put(out, &win, r->why);
        sp_meter_stop(&m, &r->phase[SP_WRITE]);
        if (st != SP_OK)
            r->failed_path = job->out;
    }
    sp_pool_stop(pool);
    sp_image_release(&win);
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
