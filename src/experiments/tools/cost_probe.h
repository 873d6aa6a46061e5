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
sp_status sp_cost_gate(const struct sp_cost_env *env, double *out);
sp_status sp_cost_reduce_par(const struct sp_cost_env *env, double *out);
sp_status sp_cost_enlarge_par(const struct sp_cost_env *env, double *out);
sp_status sp_cost_file_fault_par(const struct sp_cost_env *env,
                                 double *out);
sp_status sp_cost_anon_par(const struct sp_cost_env *env, double *out);
sp_status sp_cost_anon_4k_par(const struct sp_cost_env *env, double *out);
sp_status sp_cost_enlarge_writing(const struct sp_cost_env *env,
                                  double *out);
sp_status sp_cost_madvise_busy(const struct sp_cost_env *env, double *out);
sp_status sp_cost_cold(const struct sp_cost_env *env, double *out);

/* sp_cost_first_malloc: a new thread's first malloc() of the header's
 * block, written: glibc makes the thread an arena of its own (a reserved
 * mapping trimmed to an aligned 64 MiB, its first pages made writable and
 * faulted in), as the job's thread does in the load of every run (the
 * CLI runs the job on a thread of its own); the ns in *NS and the faults
 * in *FAULTS.  Once a process: a later thread reuses the arena. */
sp_status sp_cost_first_malloc(uint64_t *ns, long *faults);

/* sp_cost_flush_caches: write more bytes than a last-level cache holds,
 * so that a kernel probe finds its input in memory, as a run that reads
 * it once does.  Returns 0 or ENOMEM. */
sp_status sp_cost_flush_caches(void);

/* sp_cost_spin_start: a thread of this process busy on a CPU other than
 * the caller's until sp_cost_spin_stop (cost_map.c); 0 when there is no
 * other CPU or no thread, and then no stop to call. */
int sp_cost_spin_start(void);
void sp_cost_spin_stop(void);

#endif
