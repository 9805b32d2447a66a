"""Paired measurements as the overhead tools in tools/ judge them: the median of the pairs' own
differences with a distribution-free confidence interval, and whether a target is met."""

import math
import statistics


def median_ci(values, level=0.95):
    """(median, low, high): the median of `values` and a distribution-free confidence interval
    for it - the order statistics k and n-1-k, with k the largest index whose binomial(n, 1/2)
    tail P(X <= k) stays within (1 - level) / 2. Needs 6 values or more for 95%; None bounds
    below. The binomial terms are summed in logs: 2^n overflows a float from n = 1024."""
    v = sorted(values)
    n = len(v)
    tail, k, cum = (1.0 - level) / 2.0, -1, 0.0
    log_all = n * math.log(2.0)
    for i in range((n + 1) // 2):  # k is below the median
        cum += math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - log_all)
        if cum > tail:
            break
        k = i
    if k < 0:
        return statistics.median(v), None, None
    return statistics.median(v), v[k], v[n - 1 - k]


def verdict(low, high, target):
    """Whether a cost's confidence interval [low, high] (percent) is under `target` percent."""
    if low is None:
        return "too few pairs for a confidence interval"
    if high < target:
        return "target met: the whole interval is under %g%%" % target
    if low >= target:
        return "target missed: the whole interval is at or over %g%%" % target
    return "cannot tell: the interval straddles %g%%" % target
