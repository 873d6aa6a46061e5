/* stats.h: the statistics of the experiment driver: a sample's summary,
 * and the ratio of two means with a bootstrap confidence interval. */
#ifndef SP_STATS_H
#define SP_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

struct sp_summary {
    size_t n;
    double mean;
    double sd;      /* sample standard deviation (n - 1); 0 when n < 2 */
    double median;  /* the mean of the middle two when n is even */
    double min;
    double max;
};

/* sp_summarize: the summary of the N values X into *S (X is not changed).
 * Returns 0, SP_E_USAGE when N is 0, or ENOMEM. */
sp_status sp_summarize(const double *x, size_t n, struct sp_summary *s);

struct sp_ratio {
    double ratio;  /* mean(a) / mean(b) */
    double lo;     /* 95% percentile-bootstrap interval */
    double hi;
};

/* sp_ratio_bootstrap: mean(A)/mean(B) and its 95% confidence interval by
 * the percentile bootstrap: ITERS times, resample A and B (each with
 * replacement, its own size), and take the 2.5th and 97.5th percentiles of
 * the resampled ratios.  The generator is seeded with SEED, so the result
 * is a pure function of the inputs.  Returns 0, SP_E_USAGE (an empty
 * sample, ITERS 0, or a mean of B that is not positive), or ENOMEM. */
sp_status sp_ratio_bootstrap(const double *a, size_t na, const double *b,
                             size_t nb, unsigned iters, uint64_t seed,
                             struct sp_ratio *r);

#endif
