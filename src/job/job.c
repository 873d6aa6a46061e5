#include "job.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "plan.h"
#include "policy.h"
#include "source.h"
#include "work.h"

static sp_status fail(struct sp_report *r, const char *path, sp_status st)
{
    r->failed_path = path;
    return st;
}

/* begin_output: OUT opened for JOB's first image (*OPENED then set), or
 * its next image begun, laid out as LAYOUT, with a copy of the image's
 * metadata META to carry; the time and faults are the write phase's.
 * With no output (JOB->out NONE) nothing is opened and the write phase
 * stays empty. */
static sp_status begin_output(const struct sp_job *job,
                              const struct sp_image *layout,
                              const struct sp_meta *meta,
                              struct sp_output *out, int *opened,
                              struct sp_report *r)
{
    struct sp_meter m;
    sp_status st;

    if (job->out.kind == SP_TARGET_NONE || job->out.kind == SP_TARGET_IMAGE)
        return SP_OK;
    sp_meter_start(&m);
    if (!*opened) {
        st = sp_output_open(out, &job->out, job->fmt, job->pnm_type, layout,
                            job->open_nowait, r->why);
        *opened = st == SP_OK;
        out->quality = job->quality;
        out->compression = job->compression_set ? job->compression : -1;
        out->subsample = job->subsample;
        out->background = job->background_set
                              ? (unsigned long)job->background
                              : SP_BACKGROUND;
        if (st == SP_OK)
            st = sp_meta_copy(&out->meta, meta);
    } else {
        st = sp_output_next(out, layout, r->why);
    }
    sp_meter_stop(&m, &r->phase[SP_WRITE]);
    return st;
}

/* run_image: the next image of IN, loaded (its geometry decided from its
 * header: policy.h), scaled into OUT (opened for the first image, *OPENED
 * then set; the next image's header after it), or into an image target's
 * image, and released.  Every image of a regular file is checked against the
 * stamp IN took at open, so that an output never mixes two versions of
 * the file.  The phases add up over the images in R. */
static sp_status run_image(const struct sp_job *job, struct sp_input *input,
                           struct sp_output *out, int *opened,
                           struct sp_report *r)
{
    struct sp_job image = *job;  /* with this image's geometry */
    struct sp_image layout, kept = {0};
    int keep = job->out.kind == SP_TARGET_IMAGE;
    struct sp_source in;
    struct sp_meter m;
    sp_status st, rel;
    struct sp_policy policy = {
        job, job->max_pixels ? job->max_pixels : SP_MAX_PIXELS,
        &image.geom};

    if (sp_cancelled(job->cancel))
        return fail(r, r->input, EINTR);
    sp_meter_start(&m);
    st = sp_input_next(input, job->io, sp_policy_accept, &policy, &r->load);
    sp_meter_stop(&m, &r->phase[SP_LOAD]);
    if (st != SP_OK && r->images > 0)  /* say which image failed */
        snprintf(r->why, sizeof r->why, "image %u, at byte %lld: %.200s",
                 r->images + 1, (long long)input->pos, r->load.why);
    else if (st != SP_OK)
        memcpy(r->why, r->load.why, sizeof r->why);
    if (st != SP_OK)
        return fail(r, r->input, st);
    if (job->decode_only) {  /* the shrink-on-load alone */
        image.geom.factor = 1;
        image.geom.resample = 0;
        image.geom.cover_width = image.geom.cover_height = 0;
        image.geom.crop_x = image.geom.crop_y = 0;
        image.geom.out_width = image.geom.in_width;
        image.geom.out_height = image.geom.in_height;
    }
    r->images++;
    r->out_width = image.geom.out_width;
    r->out_height = image.geom.out_height;
    r->shrink = image.geom.shrink;
    sp_source_open(&in, input, job->drop_grain);
    r->in_width = in.img.width;
    r->in_height = in.img.height;
    r->channels = in.img.channels;
    r->sample_size = in.img.sample_size;
    r->maxval = in.img.maxval;
    if (job->after_load != NULL)
        job->after_load(job->after_load_arg);

    sp_plan_type(&image.geom, job->filter, &in.img, &layout);
    layout.width = r->out_width;
    layout.height = r->out_height;
    st = begin_output(job, &layout, &input->meta, out, opened, r);
    if (st != SP_OK)
        r->failed_path = r->output;
    else if (keep)
        st = sp_work_run(&image, &in, NULL, SP_OUT_PNM, &kept, r);
    else
        st = sp_work_run(&image, &in,
                         job->out.kind != SP_TARGET_NONE ? out : NULL,
                         job->out.kind != SP_TARGET_NONE ? job->fmt
                                                         : SP_OUT_PNM,
                         NULL, r);
    /* The runner's SP_E_THREAD is a malloc of its bookkeeping that failed
     * (parallel.h): for the job, memory like any other allocation. */
    if (st == SP_E_THREAD)
        st = ENOMEM;
    /* A mapped or pread input is read until the last item is scaled: it
     * must still be the file the load saw, or the output is not
     * committed. */
    if (st == SP_OK)
        st = sp_source_check(&in);

    /* An image target's image and metadata, whole, on success alone. */
    if (st == SP_OK && keep)
        st = sp_meta_copy(job->out.meta, &input->meta);

    sp_meter_start(&m);
    rel = sp_source_release(&in);
    sp_meter_stop(&m, &r->phase[SP_RELEASE]);
    if (st == SP_OK && rel != SP_OK)
        st = rel;
    if (st == SP_OK && keep)
        *job->out.image = kept;
    else
        sp_image_release(&kept);
    return st;
}

sp_status sp_job_exec(const struct sp_job *job, struct sp_report *r)
{
    struct sp_input input;
    struct sp_output out;
    int opened = 0, more = 0;
    struct sp_meter m;
    sp_status st;

    memset(r, 0, sizeof *r);
    r->input = sp_src_name(&job->in);
    r->output = sp_target_name(&job->out);
    r->factor = job->factor;
    /* A fit is an area average, whatever --filter says, and has no
     * factor (0). */
    r->filter = job->fit.width != 0 || job->fit.height != 0
                    ? sp_filter_area.name
                    : sp_filter_of(job->filter)->name;
    if (job->threads < 1 || job->threads > SP_THREADS_MAX ||
        !sp_filter_of(job->filter)->by_factor)
        return fail(r, r->input, SP_E_USAGE);

    /* One descriptor for every image of the input, as pamscale reads them,
     * whatever names it. */
    sp_meter_start(&m);
    st = sp_input_open(&input, &job->in, job->open_nowait, job->reuse);
    sp_meter_stop(&m, &r->phase[SP_LOAD]);
    if (st != SP_OK)
        return fail(r, r->input, st);
    do {
        st = run_image(job, &input, &out, &opened, r);
        /* An image target takes the first image: what follows is not
         * read. */
        if (st == SP_OK && job->out.kind != SP_TARGET_IMAGE) {
            sp_meter_start(&m);
            st = sp_input_more(&input, &more);
            sp_meter_stop(&m, &r->phase[SP_LOAD]);
            if (st != SP_OK)
                r->failed_path = r->input;
        }
    } while (st == SP_OK && more);
    /* Only whitespace can follow the last image: what it was. */
    r->load.trailing_bytes = input.skipped;
    r->load.trailing_image = 0;
    sp_input_close(&input);
    if (opened) {
        sp_status closed;

        sp_meter_start(&m);
        closed = sp_output_close(&out, st);
        sp_meter_stop(&m, &r->phase[SP_WRITE]);
        if (closed != st) {  /* it failed, or says what failed (target.h) */
            st = closed;
            r->failed_path = r->output;
        }
    }
    if (st != SP_OK)
        return fail(r, r->failed_path != NULL ? r->failed_path : r->input,
                    st);
    return SP_OK;
}
