#include "job.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "policy.h"
#include "source.h"
#include "work.h"

atomic_int sp_job_cancel;

static sp_status fail(struct sp_report *r, const char *path, sp_status st)
{
    r->failed_path = path;
    return st;
}

/* same_stamp: whether A and B are the stamps of one unchanged file (or
 * both of none: a stream's). */
static int same_stamp(const struct sp_stamp *a, const struct sp_stamp *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

/* run_image: the image of JOB's input that starts at START (a regular
 * file's offset; a stream's next), loaded, scaled into OUT (opened for
 * the first image, *OPENED then set; the next image's header after it)
 * and released.  The first image's load sets *STAMP; a later one's file
 * must still have it, so that an output never mixes two versions of the
 * file.  The phases add up over the images in R. */
static sp_status run_image(const struct sp_job *job, enum sp_outfmt fmt,
                           off_t start, struct sp_output *out, int *opened,
                           struct sp_stamp *stamp, struct sp_report *r)
{
    struct sp_image src, layout;
    struct sp_source in;
    struct sp_meter m;
    sp_status st, rel;
    struct sp_policy policy = {
        job->factor, job->max_pixels ? job->max_pixels : SP_MAX_PIXELS,
        &r->out_width, &r->out_height};

    if (atomic_load_explicit(&sp_job_cancel, memory_order_relaxed))
        return fail(r, job->in, EINTR);
    sp_meter_start(&m);
    st = sp_load_at(job->in, start, job->io, sp_policy_accept, &policy,
                    &src, &r->load);
    sp_meter_stop(&m, &r->phase[SP_LOAD]);
    if (st != SP_OK) {
        memcpy(r->why, r->load.why, sizeof r->why);
        return fail(r, job->in, st);
    }
    if (r->images == 0) {
        *stamp = src.stamp;
    } else if (!same_stamp(stamp, &src.stamp)) {
        sp_image_release(&src);
        return fail(r, job->in, SP_E_CHANGED);
    }
    r->images++;
    r->in_width = src.width;
    r->in_height = src.height;
    r->channels = src.channels;
    r->sample_size = src.sample_size;
    r->maxval = src.maxval;
    sp_source_open(&in, &src, job->drop_grain);
    if (job->after_load != NULL)
        job->after_load(job->after_load_arg);

    sp_scale_type(&in.img, job->factor, job->filter, &layout);
    layout.width = r->out_width;
    layout.height = r->out_height;
    sp_meter_start(&m);
    if (!*opened) {
        st = sp_output_open(out, job->out, fmt, &layout, r->why);
        *opened = st == SP_OK;
        out->quality = job->quality;
        out->compression = job->compression_set ? job->compression : -1;
    } else {
        st = sp_output_next(out, &layout, r->why);
    }
    sp_meter_stop(&m, &r->phase[SP_WRITE]);
    if (st != SP_OK)
        r->failed_path = job->out;
    else
        st = sp_work_run(job, &in, out, fmt, r);
    /* A mapped or pread input is read until the last item is scaled: it
     * must still be the file the load saw, or the output is not
     * committed. */
    if (st == SP_OK)
        st = sp_source_check(&in);

    sp_meter_start(&m);
    rel = sp_source_release(&in);
    sp_meter_stop(&m, &r->phase[SP_RELEASE]);
    if (st == SP_OK && rel != SP_OK)
        st = rel;
    return st;
}

sp_status sp_job_run(const struct sp_job *job, struct sp_report *r)
{
    struct sp_output out;
    struct sp_stamp stamp = {0};
    int opened = 0;
    struct sp_meter m;
    enum sp_outfmt fmt;
    off_t start = 0;
    sp_status st;

    memset(r, 0, sizeof *r);
    r->input = job->in;
    r->output = job->out;
    r->factor = job->factor;
    r->filter = sp_filter_name(job->filter);
    if (job->threads < 1 || job->threads > SP_THREADS_MAX)
        return fail(r, job->in, SP_E_USAGE);
    st = sp_outfmt_for(job->out, &fmt);
    if (st != SP_OK)
        return fail(r, job->out, st);

    /* Every image of a multi-image input, as pamscale does. */
    do {
        st = run_image(job, fmt, start, &out, &opened, &stamp, r);
        start = r->load.next;
    } while (st == SP_OK && r->load.trailing_image);
    sp_load_done();
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
