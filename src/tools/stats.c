#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;

    return (a > b) - (a < b);
}

static double mean_of(const double *x, size_t n)
{
    double sum = 0;

    for (size_t i = 0; i < n; i++)
        sum += x[i];
    return sum / (double)n;
}

sp_status sp_summarize(const double *x, size_t n, struct sp_summary *s)
{
    double *sorted, ss = 0;

    if (n == 0)
        return SP_E_USAGE;
    sorted = malloc(n * sizeof *sorted);
    if (sorted == NULL)
        return ENOMEM;
    memcpy(sorted, x, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    s->n = n;
    s->mean = mean_of(x, n);
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - s->mean) * (x[i] - s->mean);
    s->sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
    s->median = n % 2 ? sorted[n / 2]
                      : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    s->min = sorted[0];
    s->max = sorted[n - 1];
    free(sorted);
    return SP_OK;
}

/* splitmix64: a small, well-mixed generator; enough for resampling. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static double resampled_mean(const double *x, size_t n, uint64_t *state)
{
    double sum = 0;

    for (size_t i = 0; i < n; i++)
        sum += x[next_random(state) % n];
    return sum / (double)n;
}

/* percentile: the P-th quantile of the N sorted values, interpolated. */
static double percentile(const double *sorted, size_t n, double p)
{
    double pos = p * (double)(n - 1);
    size_t i = (size_t)pos;
    double frac = pos - (double)i;

    return i + 1 < n ? sorted[i] + frac * (sorted[i + 1] - sorted[i])
                     : sorted[n - 1];
}

sp_status sp_ratio_bootstrap(const double *a, size_t na, const double *b,
                             size_t nb, unsigned iters, uint64_t seed,
                             struct sp_ratio *r)
{
    uint64_t state = seed;
    double *ratios;
    size_t kept = 0;

    if (na == 0 || nb == 0 || iters == 0 || !(mean_of(b, nb) > 0))
        return SP_E_USAGE;
    ratios = malloc(iters * sizeof *ratios);
    if (ratios == NULL)
        return ENOMEM;
    r->ratio = mean_of(a, na) / mean_of(b, nb);
    for (unsigned i = 0; i < iters; i++) {
        double ma = resampled_mean(a, na, &state);
        double mb = resampled_mean(b, nb, &state);
        if (mb > 0)
            ratios[kept++] = ma / mb;
    }
    qsort(ratios, kept, sizeof *ratios, cmp_double);
    r->lo = kept ? percentile(ratios, kept, 0.025) : r->ratio;
    r->hi = kept ? percentile(ratios, kept, 0.975) : r->ratio;
    free(ratios);
    return SP_OK;
}
