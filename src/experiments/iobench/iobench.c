/* iobench: the four other published mmap experiments and seed 003's
 * database lookups, side by side, one table entry each; every experiment
 * prints CSV rows under one header (see bench.h), one row for each repeat
 * of a measurement (--reps).  run_experiments.sh --suite NAME runs it and
 * reports. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static const struct experiment {
    const char *name;
    int (*run)(const struct bench_opts *o, FILE *out);
    const char *what;
} experiments[] = {
    {"syscall-vs-mmap", exp_syscall_vs_mmap,
     "read(), fread() vs memcpy from a mapping, sequential and random "
     "blocks, warm and cold; copy bandwidths (seed 000)"},
    {"zero-page", exp_zero_page,
     "a fresh zero page: mmap(MAP_FIXED) vs memset vs madvise(DONTNEED) "
     "(seed 001)"},
    {"random-access", exp_random_access,
     "8-byte pread/pwrite, stdio vs loads and stores in a mapping "
     "(seed 003)"},
    {"copy", exp_copy,
     "copying a file: cp, read/write, mmap variants, copy_file_range "
     "(seed 004)"},
    {"cdb", exp_cdb,
     "constant-database lookups: tinycdb through a mapping vs lseek+read "
     "(seed 003)"},
};
#define NEXP (sizeof experiments / sizeof experiments[0])

/* Messages name the program as it was run (program_invocation_short_name):
 * iobench in the build tree, scaleppm-iobench where it is installed
 * (CMakeLists.txt renames it), whatever a link calls it. */

static void usage(FILE *f)
{
    fprintf(f, "usage: %s [--dir DIR] [--size BYTES] [--blocks N] "
            "[--buf BYTES] [--seed N] [--reps N] [--fsync yes|no|both] "
            "[--quick] [--keep] EXPERIMENT|all|list\n"
            "  --reps N   runs of each measured cell, one row each\n"
            "  --fsync    copy: with fsync, without, or both (default)\n"
            "  --keep     leave the files read in DIR (iobench-*), "
            "for the caller to record and delete\n",
            program_invocation_short_name);
    for (size_t i = 0; i < NEXP; i++)
        fprintf(f, "  %-16s %s\n", experiments[i].name, experiments[i].what);
}

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;

    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    *v = strtoull(s, &end, 10);
    return errno != 0 || *end != '\0' ? -1 : 0;
}

static int parse_fsync(const char *s)
{
    return strcmp(s, "yes") == 0    ? BENCH_FSYNC_YES
           : strcmp(s, "no") == 0   ? BENCH_FSYNC_NO
           : strcmp(s, "both") == 0 ? BENCH_FSYNC_YES | BENCH_FSYNC_NO
                                    : 0;
}

int main(int argc, char **argv)
{
    enum { OPT_DIR = 256, OPT_SIZE, OPT_BLOCKS, OPT_BUF, OPT_SEED, OPT_QUICK,
           OPT_REPS, OPT_FSYNC, OPT_KEEP };
    static const struct option longopts[] = {
        {"dir", required_argument, NULL, OPT_DIR},
        {"size", required_argument, NULL, OPT_SIZE},
        {"blocks", required_argument, NULL, OPT_BLOCKS},
        {"buf", required_argument, NULL, OPT_BUF},
        {"seed", required_argument, NULL, OPT_SEED},
        {"quick", no_argument, NULL, OPT_QUICK},
        {"reps", required_argument, NULL, OPT_REPS},
        {"fsync", required_argument, NULL, OPT_FSYNC},
        {"keep", no_argument, NULL, OPT_KEEP},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct bench_opts o = {.seed = 2026,
                           .fsync = BENCH_FSYNC_YES | BENCH_FSYNC_NO};
    uint64_t reps = 0;
    const char *tmp = getenv("TMPDIR");
    int c, rc = 0, ran = 0;

    o.dir = tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp";
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        uint64_t *num = c == OPT_SIZE ? &o.size : c == OPT_BLOCKS ? &o.blocks
                      : c == OPT_BUF  ? &o.buf  : c == OPT_SEED   ? &o.seed
                      : c == OPT_REPS ? &reps   : NULL;
        if (num != NULL) {
            if (parse_u64(optarg, num) != 0) {
                bench_warn("bad number '%s'\n", optarg);
                return 2;
            }
        } else if (c == OPT_DIR) {
            o.dir = optarg;
        } else if (c == OPT_FSYNC) {
            if ((o.fsync = parse_fsync(optarg)) == 0) {
                bench_warn("--fsync yes, no or both\n");
                return 2;
            }
        } else if (c == OPT_QUICK) {
            o.quick = 1;
        } else if (c == OPT_KEEP) {
            o.keep = 1;
        } else if (c == 'h') {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (reps > 1000) {
        bench_warn("--reps: at most 1000\n");
        return 2;
    }
    o.reps = (int)reps;
    if (argc - optind != 1) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[optind], "list") == 0) {
        for (size_t i = 0; i < NEXP; i++)
            printf("%s\n", experiments[i].name);
        return 0;
    }
    printf("%s\n", BENCH_HEADER);
    for (size_t i = 0; i < NEXP; i++) {
        if (strcmp(argv[optind], "all") != 0 &&
            strcmp(argv[optind], experiments[i].name) != 0)
            continue;
        ran = 1;
        if (experiments[i].run(&o, stdout) != 0)
            rc = 1;
    }
    if (!ran) {
        bench_warn("no experiment '%s'\n", argv[optind]);
        return 2;
    }
    return rc;
}
