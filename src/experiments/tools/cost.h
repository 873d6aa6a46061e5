/* cost.h: the unit costs the cost model (scripts/spreport/model.py)
 * predicts the Sun study's phases from, each measured by a probe of its
 * own, apart from the study's runs.
 *
 * A probe measures once and writes one value for each of its units; the
 * caller (spcost.c) repeats it and takes the median.  Every probe works
 * on the files and buffers of a struct sp_cost_env, made once. */
#ifndef SP_COST_H
#define SP_COST_H

#include <stddef.h>

#include "status.h"

/* The threads of the Sun study's runs (its 10), which the probes of
 * cost_par.c run at once. */
#define SP_COST_THREADS 10

/* The most units one probe writes. */
#define SP_COST_UNITS_MAX 8

struct sp_cost_env {
    size_t size;        /* bytes of each file and buffer */
    size_t page;        /* the base page size */
    int fd_large;       /* SIZE bytes written in large writes: the page
                           cache holds them in large folios, where the
                           kernel makes them */
    int fd_small;       /* the same bytes written 4 KiB at a time: held
                           in base pages */
    int fd_out;         /* an empty file to write into */
    const char *dir;    /* the folder the files are in (unlinked) */
    unsigned char *buf, *buf2;  /* SIZE bytes each, touched */
};

struct sp_cost_probe {
    const char *name[SP_COST_UNITS_MAX];  /* NULL past the last */
    const char *uom[SP_COST_UNITS_MAX];   /* what a value counts */
    /* one measurement into OUT[0..]; returns 0 or an errno value */
    sp_status (*fn)(const struct sp_cost_env *env, double *out);
};

extern const struct sp_cost_probe sp_cost_probes[];
extern const size_t sp_cost_probe_count;

/* sp_cost_env_open: two unlinked files of SIZE bytes in DIR, cached, an
 * empty one, and the two buffers.  Returns 0 or an errno value (nothing
 * left open). */
sp_status sp_cost_env_open(struct sp_cost_env *env, const char *dir,
                           size_t size);

/* sp_cost_child: spcost's side of a probe in a process of its own
 * (spcost --child FD SIZE PIPE DIR): time a new thread's first malloc,
 * then on another new thread the load's and the release's system calls
 * once each (DIR opened by its path, FD mapped), then a read of SIZE
 * bytes of FD into a fresh block, the faults of another and the first's
 * free(), and write them to PIPE.
 * Returns 0 or an errno value. */
sp_status sp_cost_child(int fd, size_t size, int pipe, const char *dir);

/* sp_cost_env_close: close and free what sp_cost_env_open made. */
void sp_cost_env_close(struct sp_cost_env *env);

#endif
