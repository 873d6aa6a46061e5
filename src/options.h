/* options.h: scaleppm's command line (options.c): what it asks for, read
 * into a job, and the threads it runs by default. */
#ifndef SP_OPTIONS_H
#define SP_OPTIONS_H

#include "job.h"

/* The exit status of a usage error. */
#define EXIT_USAGE 2

/* What the command line asks for. */
struct options {
    struct sp_job job;
    int have_scale, timings, json, verbose;
    int timings_bare;  /* --timings without =FORMAT */
};

/* sp_default_threads: one thread per CPU this process may run on
 * (sched_getaffinity) that no other runnable task is using at the moment
 * of asking: at least 1, at most SP_THREADS_MAX.  On a loaded machine
 * more threads than idle CPUs queue behind one another in the ordered
 * write (results/threads). */
unsigned sp_default_threads(void);

/* sp_parse_options: ARGV into O (whose job holds the defaults): -1 to
 * run, or the exit status to end with (help, version, a usage error, its
 * one line printed). */
int sp_parse_options(int argc, char **argv, struct options *o);

#endif
