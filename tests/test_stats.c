/* The statistics: a sample's summary against answers worked out by hand;
 * the bootstrap ratio: exact ratio, degenerate and deterministic cases,
 * agreement with the delta-method interval on large samples, and its
 * usage errors. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fixtures.h"
#include "stats.h"

#define ITERS 10000

/* near: |GOT - WANT| within TOL, with the numbers in the message. */
#define ck_near(got, want, tol)                                              \
    ck_assert_msg(fabs((got) - (want)) <= (tol), "%s = %.17g, want %.17g",   \
                  #got, (double)(got), (double)(want))

/* {2,4,4,4,5,5,7,9}: sum 40, mean 5; squared deviations 9+1+1+1+0+0+4+16
 * = 32, so the sample sd is sqrt(32/7); sorted the middle two are 4 and 5,
 * median 4.5.  Given out of order, to see the input is left alone. */
START_TEST(test_summary_known)
{
    double x[] = {5, 2, 9, 4, 7, 4, 5, 4};
    const double copy[] = {5, 2, 9, 4, 7, 4, 5, 4};
    struct sp_summary s;

    ck_assert_int_eq(sp_summarize(x, 8, &s), SP_OK);
    ck_assert_uint_eq(s.n, 8);
    ck_assert_double_eq(s.mean, 5);
    ck_near(s.sd, sqrt(32.0 / 7.0), 1e-12);
    ck_assert_double_eq(s.median, 4.5);
    ck_assert_double_eq(s.min, 2);
    ck_assert_double_eq(s.max, 9);
    ck_assert_mem_eq(x, copy, sizeof x);
}
END_TEST

/* One value: sd 0 (not NaN from 0/0), and it is mean, median, min, max. */
START_TEST(test_summary_one)
{
    double x[] = {42.5};
    struct sp_summary s;

    ck_assert_int_eq(sp_summarize(x, 1, &s), SP_OK);
    ck_assert_uint_eq(s.n, 1);
    ck_assert_double_eq(s.mean, 42.5);
    ck_assert_double_eq(s.sd, 0);
    ck_assert_double_eq(s.median, 42.5);
    ck_assert_double_eq(s.min, 42.5);
    ck_assert_double_eq(s.max, 42.5);
}
END_TEST

/* Odd n: the median is the middle value, not an average.  {3,-1,10,2,7}
 * sorts to {-1,2,3,7,10}: median 3, mean 21/5; deviations -5.2, -2.2,
 * -1.2, 2.8, 5.8 square to 27.04+4.84+1.44+7.84+33.64 = 74.8, sd
 * sqrt(74.8/4) = sqrt(18.7). */
START_TEST(test_summary_odd)
{
    double x[] = {3, -1, 10, 2, 7};
    const double copy[] = {3, -1, 10, 2, 7};
    struct sp_summary s;

    ck_assert_int_eq(sp_summarize(x, 5, &s), SP_OK);
    ck_assert_double_eq(s.median, 3);
    ck_near(s.mean, 4.2, 1e-12);
    ck_near(s.sd, sqrt(18.7), 1e-12);
    ck_assert_double_eq(s.min, -1);
    ck_assert_double_eq(s.max, 10);
    ck_assert_mem_eq(x, copy, sizeof x);
}
END_TEST

/* Two values: the median is their mean; sd of {1, 3} is sqrt(2). */
START_TEST(test_summary_two)
{
    double x[] = {3, 1};
    struct sp_summary s;

    ck_assert_int_eq(sp_summarize(x, 2, &s), SP_OK);
    ck_assert_double_eq(s.median, 2);
    ck_assert_double_eq(s.mean, 2);
    ck_near(s.sd, sqrt(2.0), 1e-15);
}
END_TEST

/* Timings are nanoseconds around 1e9: a one-pass sum of squares would
 * lose the spread entirely.  {1e9+1, 1e9+2, 1e9+3}: mean 1e9+2, sd 1. */
START_TEST(test_summary_large_offset)
{
    double x[] = {1e9 + 3, 1e9 + 1, 1e9 + 2};
    struct sp_summary s;

    ck_assert_int_eq(sp_summarize(x, 3, &s), SP_OK);
    ck_assert_double_eq(s.mean, 1e9 + 2);
    ck_near(s.sd, 1.0, 1e-9);
    ck_assert_double_eq(s.median, 1e9 + 2);
}
END_TEST

/* All equal: sd exactly 0. */
START_TEST(test_summary_constant)
{
    double x[] = {7, 7, 7, 7};
    struct sp_summary s;

    ck_assert_int_eq(sp_summarize(x, 4, &s), SP_OK);
    ck_assert_double_eq(s.sd, 0);
    ck_assert_double_eq(s.median, 7);
}
END_TEST

/* n = 0 is a usage error, and *S is not needed to say so. */
START_TEST(test_summary_empty)
{
    double x[] = {1};
    struct sp_summary s;

    memset(&s, 0x5a, sizeof s);
    ck_assert_int_eq(sp_summarize(x, 0, &s), SP_E_USAGE);
    ck_assert_int_eq(sp_summarize(NULL, 0, &s), SP_E_USAGE);
}
END_TEST

/* The ratio is mean(a)/mean(b) exactly, whatever the resampling: mean(a)
 * = 12, mean(b) = 10. */
START_TEST(test_ratio_exact)
{
    const double a[] = {10, 12, 14};
    const double b[] = {8, 8, 10, 14};
    struct sp_ratio r;

    ck_assert_int_eq(sp_ratio_bootstrap(a, 3, b, 4, ITERS, 1, &r), SP_OK);
    ck_assert_double_eq(r.ratio, 1.2);
    ck_assert_double_le(r.lo, r.ratio);
    ck_assert_double_ge(r.hi, r.ratio);
    /* The resampled means of a lie in [10, 14], of b in [8, 14]. */
    ck_assert_double_ge(r.lo, 10.0 / 14.0);
    ck_assert_double_le(r.hi, 14.0 / 8.0);
}
END_TEST

/* Constant samples: every resample has the same means, so the interval
 * collapses onto the ratio. */
START_TEST(test_ratio_constant)
{
    const double a[] = {6, 6, 6, 6, 6};
    const double b[] = {3, 3, 3};
    struct sp_ratio r;

    ck_assert_int_eq(sp_ratio_bootstrap(a, 5, b, 3, ITERS, 7, &r), SP_OK);
    ck_assert_double_eq(r.ratio, 2);
    ck_assert_double_eq(r.lo, 2);
    ck_assert_double_eq(r.hi, 2);

    /* One value each, and a single iteration: the same. */
    ck_assert_int_eq(sp_ratio_bootstrap(a, 1, b, 1, 1, 7, &r), SP_OK);
    ck_assert_double_eq(r.ratio, 2);
    ck_assert_double_eq(r.lo, 2);
    ck_assert_double_eq(r.hi, 2);
}
END_TEST

/* lcg: a fixed 64-bit LCG (Knuth's MMIX constants), the top 53 bits as a
 * uniform in [0, 1). */
static double lcg(uint64_t *state)
{
    *state = *state * 6364136223846793005u + 1442695040888963407u;
    return (double)(*state >> 11) / 9007199254740992.0;
}

/* normalish: MEAN + SD * (the sum of 12 uniforms - 6), which has mean 0
 * and variance 1 (Irwin-Hall), close enough to normal here. */
static double normalish(uint64_t *state, double mean, double sd)
{
    double sum = 0;

    for (int i = 0; i < 12; i++)
        sum += lcg(state);
    return mean + sd * (sum - 6);
}

#define NBIG 200

static void make_samples(double *a, double *b)
{
    uint64_t state = 20020901;

    for (size_t i = 0; i < NBIG; i++) {
        a[i] = normalish(&state, 100, 10);
        b[i] = normalish(&state, 80, 8);
    }
}

/* The same inputs and seed give the same interval, bit for bit; another
 * seed gives another interval (but the same ratio). */
START_TEST(test_ratio_deterministic)
{
    double a[NBIG], b[NBIG];
    struct sp_ratio r1, r2, r3;

    make_samples(a, b);
    ck_assert_int_eq(sp_ratio_bootstrap(a, NBIG, b, NBIG, 2000, 42, &r1),
                     SP_OK);
    ck_assert_int_eq(sp_ratio_bootstrap(a, NBIG, b, NBIG, 2000, 42, &r2),
                     SP_OK);
    ck_assert_double_eq(r1.ratio, r2.ratio);
    ck_assert_double_eq(r1.lo, r2.lo);
    ck_assert_double_eq(r1.hi, r2.hi);
    ck_assert_int_eq(sp_ratio_bootstrap(a, NBIG, b, NBIG, 2000, 43, &r3),
                     SP_OK);
    ck_assert_double_eq(r3.ratio, r1.ratio);
    ck_assert_msg(r3.lo != r1.lo || r3.hi != r1.hi,
                  "seeds 42 and 43 gave the same interval [%.17g, %.17g]",
                  r1.lo, r1.hi);
}
END_TEST

/* lo <= ratio <= hi on small, typical timing samples, for many seeds. */
START_TEST(test_ratio_brackets)
{
    const double a[] = {5.48e9, 5.51e9, 5.39e9, 5.62e9, 5.45e9};
    const double b[] = {4.79e9, 4.70e9, 4.88e9, 4.81e9, 4.75e9, 4.90e9};
    struct sp_ratio r;

    for (uint64_t seed = 0; seed < 20; seed++) {
        ck_assert_int_eq(sp_ratio_bootstrap(a, 5, b, 6, 2000, seed, &r),
                         SP_OK);
        ck_assert_double_lt(r.lo, r.ratio);
        ck_assert_double_gt(r.hi, r.ratio);
        ck_assert_double_lt(r.hi - r.lo, 0.2);
    }
}
END_TEST

/* Large, normal-ish samples: the percentile-bootstrap interval is close to
 * the delta-method one, ratio * (1 +- 1.96 * sqrt(sa^2 / (na ma^2) +
 * sb^2 / (nb mb^2))).  Here about 1.24 * (1 +- 0.0196).  Over seeds the
 * two agree to about 2% of the half-width; the bound is 8%, tight enough
 * that a 90% interval (16% narrower) or a resampling of only one of the
 * samples would fail. */
START_TEST(test_ratio_delta_method)
{
    double a[NBIG], b[NBIG];
    struct sp_summary sa, sb;
    struct sp_ratio r;
    double cv, half, dlo, dhi;

    make_samples(a, b);
    ck_assert_int_eq(sp_summarize(a, NBIG, &sa), SP_OK);
    ck_assert_int_eq(sp_summarize(b, NBIG, &sb), SP_OK);
    ck_assert_int_eq(sp_ratio_bootstrap(a, NBIG, b, NBIG, ITERS, 2002, &r),
                     SP_OK);
    ck_near(r.ratio, sa.mean / sb.mean, 1e-12);
    cv = sqrt(sa.sd * sa.sd / (NBIG * sa.mean * sa.mean) +
              sb.sd * sb.sd / (NBIG * sb.mean * sb.mean));
    half = 1.96 * cv * r.ratio;
    dlo = r.ratio - half;
    dhi = r.ratio + half;
    ck_assert_msg(fabs(r.lo - dlo) <= 0.08 * half &&
                      fabs(r.hi - dhi) <= 0.08 * half,
                  "bootstrap [%.6f, %.6f], delta method [%.6f, %.6f]", r.lo,
                  r.hi, dlo, dhi);
    ck_assert_msg(fabs((r.hi - r.lo) / (dhi - dlo) - 1) <= 0.08,
                  "bootstrap width %.6f, delta method %.6f", r.hi - r.lo,
                  dhi - dlo);
}
END_TEST

/* A resample of b whose mean is not positive has no ratio: it is left
 * out, and the interval is still finite and ordered. */
START_TEST(test_ratio_b_resample_nonpositive)
{
    const double a[] = {1, 2, 3};
    const double b[] = {-1, 3};
    struct sp_ratio r;

    ck_assert_int_eq(sp_ratio_bootstrap(a, 3, b, 2, 1000, 5, &r), SP_OK);
    ck_assert_double_eq(r.ratio, 2);
    ck_assert(isfinite(r.lo) && isfinite(r.hi));
    ck_assert_double_le(r.lo, r.hi);
    ck_assert_double_gt(r.lo, 0);
}
END_TEST

START_TEST(test_ratio_errors)
{
    const double a[] = {1, 2, 3};
    const double b[] = {2, 4};
    const double zero[] = {0, 0};
    const double negative[] = {-1, -2};
    const double cancels[] = {-3, 3};
    const double nan_b[] = {NAN};
    struct sp_ratio r;

    ck_assert_int_eq(sp_ratio_bootstrap(a, 0, b, 2, ITERS, 1, &r),
                     SP_E_USAGE);
    ck_assert_int_eq(sp_ratio_bootstrap(a, 3, b, 0, ITERS, 1, &r),
                     SP_E_USAGE);
    ck_assert_int_eq(sp_ratio_bootstrap(NULL, 0, NULL, 0, ITERS, 1, &r),
                     SP_E_USAGE);
    ck_assert_int_eq(sp_ratio_bootstrap(a, 3, b, 2, 0, 1, &r), SP_E_USAGE);
    ck_assert_int_eq(sp_ratio_bootstrap(a, 3, zero, 2, ITERS, 1, &r),
                     SP_E_USAGE);
    ck_assert_int_eq(sp_ratio_bootstrap(a, 3, negative, 2, ITERS, 1, &r),
                     SP_E_USAGE);
    ck_assert_int_eq(sp_ratio_bootstrap(a, 3, cancels, 2, ITERS, 1, &r),
                     SP_E_USAGE);
    ck_assert_int_eq(sp_ratio_bootstrap(a, 3, nan_b, 1, ITERS, 1, &r),
                     SP_E_USAGE);
}
END_TEST

static Suite *stats_suite(void)
{
    Suite *s = suite_create("stats");
    TCase *tc = tcase_create("summary");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_summary_known);
    tcase_add_test(tc, test_summary_one);
    tcase_add_test(tc, test_summary_odd);
    tcase_add_test(tc, test_summary_two);
    tcase_add_test(tc, test_summary_large_offset);
    tcase_add_test(tc, test_summary_constant);
    tcase_add_test(tc, test_summary_empty);
    suite_add_tcase(s, tc);

    tc = tcase_create("ratio");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_ratio_exact);
    tcase_add_test(tc, test_ratio_constant);
    tcase_add_test(tc, test_ratio_deterministic);
    tcase_add_test(tc, test_ratio_brackets);
    tcase_add_test(tc, test_ratio_delta_method);
    tcase_add_test(tc, test_ratio_b_resample_nonpositive);
    tcase_add_test(tc, test_ratio_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fx_run(stats_suite());
}
