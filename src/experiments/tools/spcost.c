/* spcost: the unit costs of the Sun study's code paths on this machine,
 * for the cost model (scripts/spreport/model.py), measured apart from
 * the study's runs.
 *   spcost [--quick] [--reps N] [--size BYTES] [--dir DIR]
 * prints CSV, a row a measurement:
 *   unit,value,unit_of_measure,rep
 * each unit measured REPS times (REP 1..REPS); the statistics over them
 * are spreport's (model.py takes a unit's median).  The files
 * (SIZE bytes, the study's raster by default) are made in DIR (default
 * $TMPDIR or /tmp), unlinked at once.  --quick: 3 repeats of 1 MiB, for
 * the tests.  Exits 1, with a line on stderr, when a probe fails.
 *   spcost --child FD SIZE PIPE
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

static int usage(void)
{
    fprintf(stderr, "usage: spcost [--quick] [--reps N] [--size BYTES] "
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
            printf("%s,%.6g,%s,%u\n", p->name[u], v[u][r], p->uom[u],
                   r + 1);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = getenv("TMPDIR");
    size_t size = RAW_BYTES;
    unsigned long reps = REPS;
    struct sp_cost_env env;
    sp_status st;
    int rc = 0;

    if (argc == 5 && strcmp(argv[1], "--child") == 0)
        return sp_cost_child(atoi(argv[2]), strtoul(argv[3], NULL, 10),
                             atoi(argv[4])) == SP_OK ? 0 : 1;
    for (int i = 1; i < argc; i++) {
        char *end = "";

        if (strcmp(argv[i], "--quick") == 0) {
            size = QUICK_BYTES;
            reps = QUICK_REPS;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = strtoul(argv[++i], &end, 10);
        } else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
            size = strtoul(argv[++i], &end, 10);
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
    if (reps < 1 || reps > REPS_MAX || size < QUICK_BYTES)
        return usage();
    st = sp_cost_env_open(&env, dir != NULL && *dir ? dir : "/tmp", size);
    if (st != SP_OK) {
        fprintf(stderr, "spcost: %s: %s\n", dir, sp_strerror(st));
        return 1;
    }
    printf("unit,value,unit_of_measure,rep\n");
    for (size_t i = 0; rc == 0 && i < sp_cost_probe_count; i++)
        rc = run_probe(&sp_cost_probes[i], &env, (unsigned)reps);
    sp_cost_env_close(&env);
    return rc;
}
