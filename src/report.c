#include "report.h"

#include <inttypes.h>

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
