/* options.h: scaleppm's command line (options.c): what it asks for, read
 * into a job, and the threads it runs by default. */
#ifndef SP_OPTIONS_H
#define SP_OPTIONS_H

#include "job.h"
#include "params.h"

/* The exit status of a usage error. */
#define EXIT_USAGE 2

/* What the command line asks for. */
struct options {
    struct sp_job job;
    struct sp_params params;  /* the job's keys given (params.h) */
    int timings, json, verbose;
    int timings_bare;  /* --timings without =FORMAT */
    int no_output;     /* --no-output: scale, and write nothing */
    /* A batch (-o or --files-from): */
    const char *target;       /* -o: a directory or a %s pattern */
    int target_dir;           /* TARGET is a directory */
    const char *format;       /* --format: the outputs' extension, as
                                 given (the key's check is params') */
    const char *relative_to;  /* --relative-to: the tree mirrored */
    const char *files_from;   /* --files-from: a list of inputs */
    int nul;                  /* -0: the list's names end in NUL */
    int fail_fast, skip_existing, quiet;
    enum sp_buffer_policy buffers;  /* --read-buffer */
    char **files;             /* the file arguments: a batch's inputs */
    int nfiles;
};

/* sp_default_threads: one thread per CPU this process may run on
 * (sched_getaffinity: taskset, cpusets), at most SP_THREADS_MAX.  Not
 * fewer on a busy machine: the scheduler shares a CPU among threads, so
 * there more threads get more of it (results/threads). */
unsigned sp_default_threads(void);

/* sp_parse_options: ARGV into O (whose job holds the defaults): -1 to
 * run, or the exit status to end with (help, version, a usage error, its
 * one line printed). */
int sp_parse_options(int argc, char **argv, struct options *o);

/* sp_options_suit: whether the encoder options O asks for apply to the
 * output OUT ("-": standard output, PNM): --quality to JPEG, --compression
 * to PNG.  -1 if they do (or OUT names no format: its own error), else
 * the exit status of a usage error, its one line printed.  A batch asks
 * for each output before any is written. */
int sp_options_suit(const struct options *o, const char *out);

#endif
