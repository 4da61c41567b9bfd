"""Interleaved runs and their spread, for make bench.

On these shared 2-core machines a run's speed drifts from one second to the next with what the
other processes do, so a figure is never one run, nor the best of several: a short run's best
lands in a quiet moment far more often than a long one's does, which makes a best against a best
flatter the faster side. Instead every round runs each contender once, in the same order
(A B C A B C ...), each round's ratio compares runs that were seconds apart, and the figures are
the medians over the rounds with the spread of the per-round ratios."""
import statistics


def rounds(contenders, n):
    """contenders: {name: function returning one measurement}; run each once per round, in the
    dict's order, for n rounds. Returns {name: [measurement of each round]}."""
    runs = {name: [] for name in contenders}
    for _ in range(n):
        for name, fn in contenders.items():
            runs[name].append(fn())
    return runs


def ratios(num, den):
    """The per-round ratios num[i] / den[i] (two lists from the same rounds)."""
    return [a / b for a, b in zip(num, den)]


def quartiles(v):
    """(first quartile, median, third quartile), interpolated between the sorted values."""
    if len(v) < 2:
        return (v[0], v[0], v[0])
    return tuple(statistics.quantiles(v, n=4, method="inclusive"))


def median(v):
    return statistics.median(v)


def spread(v, fmt="%.2f", unit=""):
    """'MEDIAN UNIT (IQR A..B, range C..D)' of a list of per-round values."""
    q1, med, q3 = quartiles(v)
    f = lambda x: fmt % x  # noqa: E731
    return "%s%s (IQR %s..%s, range %s..%s)" % (f(med), unit, f(q1), f(q3), f(min(v)), f(max(v)))
