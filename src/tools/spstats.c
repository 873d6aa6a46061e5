/* spstats: the statistics of an experiment run.  Reads runs.csv (one row a
 * run, as run_experiments.sh writes it) and writes summary.csv (one row a
 * scale factor: both methods' summaries, the read/mmap ratio with its 95%
 * bootstrap interval, the mean page faults of each phase) and table1.md
 * (the Sun study's Table 1 layout, the 2002 figures beside ours). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

#define MAX_SCALES 64
#define MAX_COLS 32
#define BOOT_ITERS 10000
#define BOOT_SEED 20020901u  /* fixed: the same runs give the same table */

enum { M_READ, M_MMAP, NMETHODS };
static const char *method_name[NMETHODS] = {"read", "mmap"};

/* The per-run fields kept, by column name. */
enum { F_LOAD, F_SCALE, F_RELEASE, F_WRITE,
       F_LOAD_MIN, F_LOAD_MAJ, F_SCALE_MIN, F_SCALE_MAJ,
       F_REL_MIN, F_REL_MAJ, F_WRITE_MIN, F_WRITE_MAJ, NFIELDS };
static const char *field_name[NFIELDS] = {
    "load_ns", "scale_ns", "release_ns", "write_ns",
    "load_minflt", "load_majflt", "scale_minflt", "scale_majflt",
    "release_minflt", "release_majflt", "write_minflt", "write_majflt"};

/* Their names in summary.csv: times in ms there. */
static const char *field_label[NFIELDS] = {
    "load_ms", "scale_ms", "release_ms", "write_ms",
    "load_minflt", "load_majflt", "scale_minflt", "scale_majflt",
    "release_minflt", "release_majflt", "write_minflt", "write_majflt"};

struct sample {
    double *v[NFIELDS];
    double *total;  /* load + scale + release, the study's metric */
    size_t n, cap;
};

struct scale_case {
    int scale;
    struct sample m[NMETHODS];
};

static struct scale_case cases[MAX_SCALES];
static size_t ncases;
static char context[256];  /* image, cache, page cache, threads */

/* The 2002 study, Table 1: reduce factors 2, 3, 4, 8; seconds. */
static const struct { int scale; double read_s, mmap_s, ratio; } sun2002[] = {
    {-2, 5.48, 4.79, 1.14}, {-3, 3.11, 2.44, 1.28},
    {-4, 2.25, 1.52, 1.48}, {-8, 1.26, 0.62, 2.03},
};

static int die(const char *what, const char *why)
{
    fprintf(stderr, "spstats: %s: %s\n", what, why);
    return 1;
}

static int push(struct sample *s, const double *row)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        for (int f = 0; f <= NFIELDS; f++) {
            double **p = f < NFIELDS ? &s->v[f] : &s->total;
            double *q = realloc(*p, cap * sizeof **p);
            if (q == NULL)
                return -1;
            *p = q;
        }
        s->cap = cap;
    }
    for (int f = 0; f < NFIELDS; f++)
        s->v[f][s->n] = row[f];
    s->total[s->n] = row[F_LOAD] + row[F_SCALE] + row[F_RELEASE];
    s->n++;
    return 0;
}

static struct scale_case *case_for(int scale)
{
    for (size_t i = 0; i < ncases; i++)
        if (cases[i].scale == scale)
            return &cases[i];
    if (ncases == MAX_SCALES)
        return NULL;
    cases[ncases].scale = scale;
    return &cases[ncases++];
}

static int split(char *line, char **cols)
{
    int n = 0;

    line[strcspn(line, "\r\n")] = '\0';
    for (char *tok = line; n < MAX_COLS; n++) {
        cols[n] = tok;
        tok = strchr(tok, ',');
        if (tok == NULL)
            return n + 1;
        *tok++ = '\0';
    }
    return -1;
}

static int find_col(char **names, int ncols, const char *want)
{
    for (int i = 0; i < ncols; i++)
        if (strcmp(names[i], want) == 0)
            return i;
    return -1;
}

/* number: all of S as a finite number. */
static int number(const char *s, double *v)
{
    char *end;

    *v = strtod(s, &end);
    return end == s || *end != '\0' || !isfinite(*v) ? -1 : 0;
}

static int read_runs(const char *path)
{
    char header[4096], line[4096], *names[MAX_COLS], *cols[MAX_COLS];
    int idx[NFIELDS], c_scale, c_method, c_ctx[4], ncols;
    static const char *ctx_cols[4] = {"image", "cache", "page_cache",
                                      "threads"};
    FILE *f = fopen(path, "r");
    size_t lineno = 1;

    if (f == NULL)
        return die(path, strerror(errno));
    if (fgets(header, sizeof header, f) == NULL ||
        (ncols = split(header, names)) < 0) {
        fclose(f);
        return die(path, "no header line");
    }
    c_scale = find_col(names, ncols, "scale");
    c_method = find_col(names, ncols, "method");
    for (int f2 = 0; f2 < NFIELDS; f2++)
        idx[f2] = find_col(names, ncols, field_name[f2]);
    for (int i = 0; i < 4; i++)
        c_ctx[i] = find_col(names, ncols, ctx_cols[i]);
    if (c_scale < 0 || c_method < 0 || idx[F_LOAD] < 0 ||
        idx[F_SCALE] < 0 || idx[F_RELEASE] < 0) {
        fclose(f);
        return die(path, "needs columns scale, method, load_ns, scale_ns, "
                   "release_ns");
    }
    while (fgets(line, sizeof line, f) != NULL) {
        double row[NFIELDS], scale;
        struct scale_case *sc;
        int m, n = split(line, cols);

        lineno++;
        if (n == 1 && cols[0][0] == '\0')
            continue;
        if (n != ncols) {
            fclose(f);
            fprintf(stderr, "spstats: %s:%zu: %d fields, header has %d\n",
                    path, lineno, n, ncols);
            return 1;
        }
        m = strcmp(cols[c_method], "read") == 0   ? M_READ
            : strcmp(cols[c_method], "mmap") == 0 ? M_MMAP
                                                  : -1;
        sc = number(cols[c_scale], &scale) == 0 ? case_for((int)scale) : NULL;
        for (int f2 = 0; f2 < NFIELDS && m >= 0; f2++)
            if (idx[f2] >= 0 && number(cols[idx[f2]], &row[f2]) != 0)
                m = -1;
            else if (idx[f2] < 0)
                row[f2] = 0;
        if (m < 0 || sc == NULL) {
            fclose(f);
            fprintf(stderr, "spstats: %s:%zu: bad method, number or too many "
                    "scales\n", path, lineno);
            return 1;
        }
        if (push(&sc->m[m], row) != 0) {
            fclose(f);
            return die(path, "out of memory");
        }
        if (context[0] == '\0') {
            size_t len = 0;
            for (int i = 0; i < 4; i++)
                if (c_ctx[i] >= 0)
                    len += (size_t)snprintf(context + len,
                                            sizeof context - len, "%s%s=%s",
                                            len ? ", " : "", ctx_cols[i],
                                            cols[c_ctx[i]]);
        }
    }
    fclose(f);
    return ncases == 0 ? die(path, "no runs") : 0;
}

static double mean(const double *x, size_t n)
{
    double s = 0;

    for (size_t i = 0; i < n; i++)
        s += x[i];
    return n ? s / (double)n : 0;
}

static int sun_index(int scale)
{
    for (size_t i = 0; i < sizeof sun2002 / sizeof sun2002[0]; i++)
        if (sun2002[i].scale == scale)
            return (int)i;
    return -1;
}

struct result {
    struct sp_summary s[NMETHODS];
    struct sp_ratio r;
    int has_both;
};

/* One a case, computed once and shared by both outputs. */
static struct result results[MAX_SCALES];

static int compute(const struct scale_case *sc, struct result *res)
{
    memset(res, 0, sizeof *res);
    for (int m = 0; m < NMETHODS; m++)
        if (sc->m[m].n > 0 &&
            sp_summarize(sc->m[m].total, sc->m[m].n, &res->s[m]) != SP_OK)
            return -1;
    /* No ratio when a method has no runs or mmap's mean is 0: the row
     * stays, with the ratio left empty. */
    res->has_both = sc->m[M_READ].n > 0 && sc->m[M_MMAP].n > 0 &&
                    sp_ratio_bootstrap(sc->m[M_READ].total, sc->m[M_READ].n,
                                       sc->m[M_MMAP].total, sc->m[M_MMAP].n,
                                       BOOT_ITERS, BOOT_SEED,
                                       &res->r) == SP_OK;
    return 0;
}

static void write_summary(FILE *f)
{
    fprintf(f, "scale");
    for (int m = 0; m < NMETHODS; m++) {
        const char *n = method_name[m];
        fprintf(f, ",%s_n,%s_mean_ms,%s_sd_ms,%s_median_ms,%s_min_ms,"
                "%s_max_ms", n, n, n, n, n, n);
        for (int fld = 0; fld < NFIELDS; fld++)
            fprintf(f, ",%s_%s_mean", n, field_label[fld]);
    }
    fprintf(f, ",ratio,ratio_lo,ratio_hi,ratio_2002\n");
    for (size_t i = 0; i < ncases; i++) {
        const struct scale_case *sc = &cases[i];
        const struct result *res = &results[i];
        int k = sun_index(sc->scale);

        fprintf(f, "%d", sc->scale);
        for (int m = 0; m < NMETHODS; m++) {
            const struct sp_summary *s = &res->s[m];
            if (s->n == 0) {
                fprintf(f, ",0,,,,,");
                for (int fld = 0; fld < NFIELDS; fld++)
                    fputc(',', f);
                continue;
            }
            fprintf(f, ",%zu,%.4f,%.4f,%.4f,%.4f,%.4f", s->n, s->mean / 1e6,
                    s->sd / 1e6, s->median / 1e6, s->min / 1e6, s->max / 1e6);
            for (int fld = 0; fld < NFIELDS; fld++) {
                double v = mean(sc->m[m].v[fld], sc->m[m].n);
                fprintf(f, fld < F_LOAD_MIN ? ",%.4f" : ",%.1f",
                        fld < F_LOAD_MIN ? v / 1e6 : v);
            }
        }
        if (res->has_both)
            fprintf(f, ",%.4f,%.4f,%.4f", res->r.ratio, res->r.lo, res->r.hi);
        else
            fprintf(f, ",,,");
        if (k >= 0)
            fprintf(f, ",%.2f\n", sun2002[k].ratio);
        else
            fprintf(f, ",\n");
    }
}

static void write_table(FILE *f)
{
    fprintf(f, "# Table 1: read/scale/free vs mmap/scale/free\n\n");
    fprintf(f, "%s. Times are load + scale + release, in ms: mean ± sample "
            "standard deviation (median) over n runs. The ratio's interval "
            "is a 95%% percentile bootstrap (%d resamples). Negative scales "
            "reduce, positive enlarge; * marks the study's factors. The "
            "2002 columns are the Sun study's, in seconds, on a 296 MHz "
            "Ultra 30.\n\n", context, BOOT_ITERS);
    fprintf(f, "| scale | n read/mmap | read (ms) | mmap (ms) | read/mmap | 95%% CI "
            "| 2002 read (s) | 2002 mmap (s) | 2002 read/mmap |\n");
    fprintf(f, "|---:|---:|---:|---:|---:|---|---:|---:|---:|\n");
    for (size_t i = 0; i < ncases; i++) {
        const struct scale_case *sc = &cases[i];
        const struct result *res = &results[i];
        int k = sun_index(sc->scale);

        fprintf(f, "| %d%s | %zu/%zu", sc->scale, k >= 0 ? "*" : "",
                res->s[M_READ].n, res->s[M_MMAP].n);
        for (int m = 0; m < NMETHODS; m++) {
            if (res->s[m].n == 0)
                fprintf(f, " | ");
            else
                fprintf(f, " | %.3f ± %.3f (%.3f)", res->s[m].mean / 1e6,
                        res->s[m].sd / 1e6, res->s[m].median / 1e6);
        }
        if (res->has_both)
            fprintf(f, " | %.2f | %.2f–%.2f", res->r.ratio, res->r.lo,
                    res->r.hi);
        else
            fprintf(f, " | | ");
        if (k >= 0)
            fprintf(f, " | %.2f | %.2f | %.2f |\n", sun2002[k].read_s,
                    sun2002[k].mmap_s, sun2002[k].ratio);
        else
            fprintf(f, " | | | |\n");
    }
    fprintf(f, "\n## Page faults per run (mean), by phase\n\n");
    fprintf(f, "| scale | method | load minor | load major | scale minor "
            "| scale major | release minor | load ms | scale ms "
            "| release ms | write ms |\n");
    fprintf(f, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < ncases; i++) {
        for (int m = 0; m < NMETHODS; m++) {
            const struct sample *s = &cases[i].m[m];
            if (s->n == 0)
                continue;
            fprintf(f, "| %d | %s | %.1f | %.1f | %.1f | %.1f | %.1f "
                    "| %.3f | %.3f | %.3f | %.3f |\n", cases[i].scale,
                    method_name[m], mean(s->v[F_LOAD_MIN], s->n),
                    mean(s->v[F_LOAD_MAJ], s->n),
                    mean(s->v[F_SCALE_MIN], s->n),
                    mean(s->v[F_SCALE_MAJ], s->n),
                    mean(s->v[F_REL_MIN], s->n),
                    mean(s->v[F_LOAD], s->n) / 1e6,
                    mean(s->v[F_SCALE], s->n) / 1e6,
                    mean(s->v[F_RELEASE], s->n) / 1e6,
                    mean(s->v[F_WRITE], s->n) / 1e6);
        }
    }
}

static int write_file(const char *path, void (*fn)(FILE *))
{
    FILE *f = fopen(path, "w");

    if (f == NULL)
        return die(path, strerror(errno));
    fn(f);
    if (fflush(f) != 0 || ferror(f)) {
        fclose(f);
        return die(path, strerror(errno ? errno : EIO));
    }
    if (fclose(f) != 0)
        return die(path, strerror(errno));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: spstats RUNS.CSV SUMMARY.CSV TABLE.MD\n");
        return 2;
    }
    if (read_runs(argv[1]) != 0)
        return 1;
    for (size_t i = 0; i < ncases; i++)
        if (compute(&cases[i], &results[i]) != 0)
            return die(argv[1], "out of memory");
    if (write_file(argv[2], write_summary) != 0 ||
        write_file(argv[3], write_table) != 0)
        return 1;
    return 0;
}
