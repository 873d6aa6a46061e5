/* spcost: the unit costs of the Sun study's code paths on this machine,
 * for the cost model (scripts/spreport/model.py), measured apart from
 * the study's runs.
 *   spcost [--quick] [--reps N] [--size BYTES]... [--dir DIR]
 * prints CSV, a row a measurement:
 *   unit,value,unit_of_measure,rep,bytes
 * each unit measured REPS times (REP 1..REPS) with files and buffers of
 * each SIZE in turn (BYTES; a cost a page or a byte depends on the
 * file's size, through the folios the page cache makes of it); the
 * statistics over them are spreport's (model.py takes a unit's median at
 * the size nearest a run's file).  The files (SIZE bytes, the study's
 * raster by default; up to SIZES_MAX sizes) are made in DIR (default
 * $TMPDIR or /tmp), unlinked at once.  --quick: 3 repeats of 1 MiB, for
 * the tests.  Exits 1, with a line on stderr, when a probe fails.
 *   spcost --child FD SIZE PIPE DIR
 * is spcost's own: the side of a probe that runs in a process just
 * exec'd (sp_cost_child). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"

#define RAW_BYTES ((size_t)1280 * 1024 * 3)
#define QUICK_BYTES ((size_t)1 << 20)
#define REPS 9
#define QUICK_REPS 3
#define REPS_MAX 101
#define SIZES_MAX 4

static int usage(void)
{
    fprintf(stderr, "usage: spcost [--quick] [--reps N] [--size BYTES]... "
            "[--dir DIR]\n");
    return 2;
}

/* run_probe: probe P REPS times; a row for each of its units. */
static int run_probe(const struct sp_cost_probe *p,
                     const struct sp_cost_env *env, unsigned reps)
{
    double v[SP_COST_UNITS_MAX][REPS_MAX];

    for (unsigned r = 0; r < reps; r++) {
        double out[SP_COST_UNITS_MAX] = {0};
        sp_status st = p->fn(env, out);

        if (st != SP_OK) {
            fprintf(stderr, "spcost: %s: %s\n", p->name[0], sp_strerror(st));
            return 1;
        }
        for (int u = 0; u < SP_COST_UNITS_MAX; u++)
            v[u][r] = out[u];
    }
    for (int u = 0; u < SP_COST_UNITS_MAX && p->name[u] != NULL; u++)
        for (unsigned r = 0; r < reps; r++)
            printf("%s,%.6g,%s,%u,%zu\n", p->name[u], v[u][r], p->uom[u],
                   r + 1, env->size);
    fflush(stdout);
    return 0;
}

/* run_size: every probe REPS times on files and buffers of SIZE bytes
 * in DIR. */
static int run_size(const char *dir, size_t size, unsigned reps)
{
    struct sp_cost_env env;
    sp_status st;
    int rc = 0;

    st = sp_cost_env_open(&env, dir, size);
    if (st != SP_OK) {
        fprintf(stderr, "spcost: %s: %s\n", dir, sp_strerror(st));
        return 1;
    }
    for (size_t i = 0; rc == 0 && i < sp_cost_probe_count; i++)
        rc = run_probe(&sp_cost_probes[i], &env, reps);
    sp_cost_env_close(&env);
    return rc;
}

int main(int argc, char **argv)
{
    const char *dir = getenv("TMPDIR");
    size_t sizes[SIZES_MAX] = {RAW_BYTES};
    unsigned long reps = REPS;
    int n = 0, quick = 0, rc = 0;

    if (argc == 6 && strcmp(argv[1], "--child") == 0)
        return sp_cost_child(atoi(argv[2]), strtoul(argv[3], NULL, 10),
                             atoi(argv[4]), argv[5]) == SP_OK ? 0 : 1;
    for (int i = 1; i < argc; i++) {
        char *end = "";

        if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
            reps = QUICK_REPS;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = strtoul(argv[++i], &end, 10);
        } else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc &&
                   n < SIZES_MAX) {
            sizes[n++] = strtoul(argv[++i], &end, 10);
        } else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else {
            return usage();
        }
        if (*end != '\0')
            return usage();
    }
    /* The kernels' probes read a band of the study's rows from the file's
     * bytes. */
    /* --quick: the one small size, whatever --size says. */
    if (quick) {
        sizes[0] = QUICK_BYTES;
        n = 1;
    }
    if (n == 0)
        n = 1;
    for (int k = 0; k < n; k++)
        if (sizes[k] < QUICK_BYTES)
            return usage();
    if (reps < 1 || reps > REPS_MAX)
        return usage();
    printf("unit,value,unit_of_measure,rep,bytes\n");
    for (int k = 0; rc == 0 && k < n; k++)
        rc = run_size(dir != NULL && *dir ? dir : "/tmp", sizes[k],
                      (unsigned)reps);
    return rc;
}
