"""The statistics every report uses: a sample's summary, the ratio of two
means with a percentile-bootstrap interval, the spread between sessions,
and whether the sessions' intervals separate two contenders.  Pure
functions of their inputs: the bootstrap's generator is seeded, so the
same runs give the same tables."""
import math
from dataclasses import dataclass

import numpy as np

BOOT_ITERS = 10000
BOOT_SEED = 20020901  # fixed: the same runs give the same table


@dataclass
class Summary:
    n: int
    mean: float
    sd: float       # sample standard deviation (n - 1); 0 when n < 2
    median: float   # the mean of the middle two when n is even
    min: float
    max: float


def summarize(xs):
    """The summary of the values XS; ValueError when XS is empty."""
    a = np.asarray(list(xs), dtype=float)
    if a.size == 0:
        raise ValueError("summary of no values")
    sd = float(a.std(ddof=1)) if a.size > 1 else 0.0
    return Summary(int(a.size), float(a.mean()), sd, float(np.median(a)),
                   float(a.min()), float(a.max()))


def median(xs):
    """The median of XS (the mean of the middle two when their number is
    even); ValueError when XS is empty."""
    return summarize(xs).median


@dataclass
class Ratio:
    ratio: float  # mean(a) / mean(b)
    lo: float     # 95% percentile-bootstrap interval
    hi: float


def ratio_bootstrap(a, b, iters=BOOT_ITERS, seed=BOOT_SEED):
    """mean(A)/mean(B) and its 95% interval by the percentile bootstrap:
    ITERS times, resample A and B (each with replacement, its own size)
    and take the 2.5th and 97.5th percentiles of the resampled ratios.
    A resample of B whose mean is not positive has no ratio and is left
    out.  ValueError when A or B is empty, ITERS < 1 or mean(B) is not a
    positive number."""
    a = np.asarray(list(a), dtype=float)
    b = np.asarray(list(b), dtype=float)
    if a.size == 0 or b.size == 0 or iters < 1 or not b.mean() > 0:
        raise ValueError("ratio of an empty or non-positive sample")
    rng = np.random.Generator(np.random.PCG64(seed))
    ra = a[rng.integers(0, a.size, (iters, a.size))].mean(axis=1)
    rb = b[rng.integers(0, b.size, (iters, b.size))].mean(axis=1)
    keep = rb > 0
    ratio = float(a.mean() / b.mean())
    if not keep.any():
        return Ratio(ratio, ratio, ratio)
    boot = ra[keep] / rb[keep]
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return Ratio(ratio, float(lo), float(hi))


@dataclass
class Spread:
    sessions: int
    lo: float      # the smallest of the sessions' values
    hi: float      # the largest
    agree: int     # +1 every session above THRESHOLD, -1 every one
                   # below, 0 they disagree (or one sits on it)


def between_sessions(values, threshold=1.0):
    """The spread of one figure (a ratio, a median) measured once in each
    of several independent sessions, and whether every session puts it on
    the same side of THRESHOLD.  A verdict such as "read faster" needs
    more: every session's interval on one side (separated)."""
    v = [float(x) for x in values if x is not None and not math.isnan(x)]
    if not v:
        raise ValueError("spread of no sessions")
    if all(x > threshold for x in v):
        agree = 1
    elif all(x < threshold for x in v):
        agree = -1
    else:
        agree = 0
    return Spread(len(v), min(v), max(v), agree)


def separated(intervals, threshold=1.0):
    """Whether every session's 95% interval (lo, hi) of a figure excludes
    THRESHOLD on the same side: +1 every interval lies wholly above it, -1
    every one wholly below, 0 otherwise (an interval contains it or the
    sessions fall on opposite sides), and then the data cannot separate
    the two contenders.  ValueError when INTERVALS is empty."""
    v = [(float(lo), float(hi)) for lo, hi in intervals]
    if not v:
        raise ValueError("verdict of no sessions")
    if all(lo > threshold for lo, _ in v):
        return 1
    if all(hi < threshold for _, hi in v):
        return -1
    return 0
