#include "job.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "policy.h"
#include "source.h"
#include "work.h"

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
    r->sample_size = src.sample_size;
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
        st = sp_work_run(job, &in, &out, fmt, r);
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

