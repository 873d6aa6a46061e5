/* write_whole.h: for the tests and the fuzz harnesses, an image written
 * whole through the sp_output API in one call, and outputs opened and
 * jobs run with the format their names ask for, as the command line
 * runs them. */
#ifndef SP_WRITE_WHOLE_H
#define SP_WRITE_WHOLE_H

#include "job.h"
#include "write.h"

/* sp_open_named: sp_output_open() of the path target PATH as FMT, a PNM
 * of the type PATH's name asks for (sp_outfmt_for), as the command line
 * opens its output. */
sp_status sp_open_named(struct sp_output *o, const char *path,
                        enum sp_outfmt fmt, const struct sp_image *layout,
                        int nowait, char *why);

/* sp_write: IMG written whole to PATH as FMT: sp_output_open, one
 * sp_output_put, sp_output_close; their status. */
sp_status sp_write(const struct sp_image *img, const char *path,
                   enum sp_outfmt fmt, char *why);

/* fx_job_run: sp_job_exec() of JOB, its format and a PNM's type first
 * taken from its path target's name as the command line takes them
 * (SP_E_OUTFORMAT, REPORT saying so, for a name that asks for none). */
sp_status fx_job_run(struct sp_job *job, struct sp_report *report);

#endif
