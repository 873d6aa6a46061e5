#include "job.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "parallel.h"

struct scale_task {
    const struct sp_image *src;
    struct sp_image *dst;
    int factor;
    enum sp_filter filter;
};

struct band {
    const struct scale_task *task;
    size_t y0, y1;
    void *scratch;
};

static sp_status run_band(void *arg)
{
    const struct band *b = arg;
    const struct scale_task *t = b->task;

    return sp_scale_rows(t->src, t->dst, t->factor, t->filter, b->y0, b->y1,
                         b->scratch);
}

/* scale_band: one thread's rows; reading a mapping, under the SIGBUS
 * guard, with the scratch memory allocated outside it so that a jump out
 * of the kernel leaks nothing. */
static sp_status scale_band(void *arg, size_t y0, size_t y1)
{
    const struct scale_task *t = arg;
    size_t len = sp_scale_scratch_size(t->dst, t->factor, t->filter);
    struct band b = {t, y0, y1, NULL};
    sp_status st;

    if (len > 0 && (b.scratch = malloc(len)) == NULL)
        return ENOMEM;
    if (t->src->backing == SP_BACKING_MMAP)
        st = sp_guard_run(run_band, &b);
    else
        st = run_band(&b);
    free(b.scratch);
    return st;
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

sp_status sp_job_run(const struct sp_job *job, struct sp_report *r)
{
    struct sp_image src, dst;
    struct scale_task task;
    struct sp_meter m;
    enum sp_outfmt fmt;
    sp_status st, rel;
    uint64_t limit = job->max_pixels ? job->max_pixels : SP_MAX_PIXELS;

    memset(r, 0, sizeof *r);
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

    sp_meter_start(&m);
    st = sp_scale_size(src.width, src.height, job->factor, &r->out_width,
                       &r->out_height);
    if (st == SP_OK &&
        (over_limit(r, "the input", src.width, src.height, limit) ||
         over_limit(r, "the output", r->out_width, r->out_height, limit)))
        st = SP_E_LIMIT;
    if (st == SP_OK)
        st = sp_image_alloc(&dst, r->out_width, r->out_height, src.channels,
                            src.bytes, src.maxval);
    if (st == SP_OK) {
        task = (struct scale_task){&src, &dst, job->factor, job->filter};
        st = sp_parallel_bands(dst.height, job->threads, scale_band, &task,
                               &r->threads_used);
        if (st != SP_OK)
            sp_image_release(&dst);
    }
    sp_meter_stop(&m, &r->phase[SP_SCALE]);

    sp_meter_start(&m);
    rel = sp_image_release(&src);
    sp_meter_stop(&m, &r->phase[SP_RELEASE]);
    if (st == SP_OK && rel != SP_OK) {
        sp_image_release(&dst);
        st = rel;
    }
    if (st != SP_OK) {
        if (st == SP_E_TOOBIG)
            snprintf(r->why, sizeof r->why, "scaled by %d it would be larger "
                     "than memory can address", job->factor);
        return fail(r, job->in, st);
    }

    sp_meter_start(&m);
    st = sp_write(&dst, job->out, fmt, r->why);
    sp_meter_stop(&m, &r->phase[SP_WRITE]);
    sp_image_release(&dst);
    if (st != SP_OK)
        return fail(r, job->out, st);
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
