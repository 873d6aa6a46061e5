#include "write_whole.h"

#include <string.h>

sp_status sp_open_named(struct sp_output *o, const char *path,
                        enum sp_outfmt fmt, const struct sp_image *layout,
                        int nowait, char *why)
{
    struct sp_target t = sp_target_path(path);
    enum sp_outfmt named;
    enum sp_want want = SP_WANT_KEEP;

    if (sp_outfmt_for(path, &named, &want) != SP_OK || named != fmt)
        want = SP_WANT_KEEP;
    return sp_output_open(o, &t, fmt, want, layout, nowait, why);
}

sp_status sp_write(const struct sp_image *img, const char *path,
                   enum sp_outfmt fmt, char *why)
{
    struct sp_output o;
    sp_status st = sp_open_named(&o, path, fmt, img, 0, why);

    if (st != SP_OK)
        return st;
    return sp_output_close(&o, sp_output_put(&o, img, why));
}

sp_status fx_job_run(struct sp_job *job, struct sp_report *r)
{
    sp_status st;

    if (job->out.kind == SP_TARGET_PATH && job->out.path != NULL) {
        st = sp_outfmt_for(job->out.path, &job->fmt, &job->pnm_type);
        if (st != SP_OK) {
            memset(r, 0, sizeof *r);
            r->input = sp_src_name(&job->in);
            r->output = sp_target_name(&job->out);
            r->failed_path = r->output;
            sp_outfmt_known(r->why);
            return st;
        }
    }
    return sp_job_exec(job, r);
}
