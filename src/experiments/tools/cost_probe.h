/* cost_probe.h: what cost.c, cost_map.c and cost_run.c share: a whole
 * read, and the probes the other two define for cost.c's table.  Each
 * probe is as struct sp_cost_probe's FN (cost.h, which each includes).
 * Their clock and fault count are scaleppm's own (timing.h), included
 * here for all three. */
#ifndef SP_COST_PROBE_H
#define SP_COST_PROBE_H

#include <stdint.h>

#include "status.h"
#include "timing.h"

struct sp_cost_env;  /* cost.h */

/* sp_cost_read_all: LEN bytes of FD from its start into BUF by read().
 * Returns 0, an errno value, or EIO for a file shorter than LEN. */
sp_status sp_cost_read_all(int fd, unsigned char *buf, size_t len);

sp_status sp_cost_file_fault_large(const struct sp_cost_env *env,
                                   double *out);
sp_status sp_cost_file_fault_small(const struct sp_cost_env *env,
                                   double *out);
sp_status sp_cost_madvise_file(const struct sp_cost_env *env, double *out);
sp_status sp_cost_madvise_call(const struct sp_cost_env *env, double *out);
sp_status sp_cost_calls(const struct sp_cost_env *env, double *out);
sp_status sp_cost_thread(const struct sp_cost_env *env, double *out);
sp_status sp_cost_process(const struct sp_cost_env *env, double *out);
sp_status sp_cost_cpus(const struct sp_cost_env *env, double *out);
sp_status sp_cost_wake(const struct sp_cost_env *env, double *out);
sp_status sp_cost_reduce(const struct sp_cost_env *env, double *out);
sp_status sp_cost_enlarge(const struct sp_cost_env *env, double *out);

#endif
