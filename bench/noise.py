#!/usr/bin/env python3
"""bench/noise.py: the one rule for "within noise" in posenc's benchmarks.

A benchmark repeats a measurement in rounds (a ratio posenc / floor, proxy /
direct, flooded / alone, ...) and reports the median of the rounds with a
distribution-free 95% confidence interval of that median, from order
statistics: x(k)..x(n+1-k) with the largest k such that
P(Binomial(n, 1/2) < k) <= 2.5%. The verdict against a target is on that
interval:

  met            the whole interval meets the target;
  within noise   the target lies inside the interval;
  MISSED         none of the interval meets the target.

This is bench/median_ci.h's MedianCi and IntervalVerdict (used by cold_path
and encoding_bench) in Python, computed with the same double operations, so
both give the same interval on the same samples
(tests/bench_configs/noise_test.py checks it).

How many rounds. Below 6 rounds the interval is the whole range of the
rounds and covers the median with less than 95% (3 rounds: 75%; 5: 94%), so
one lucky round stretches it over any target. From 6 rounds the range is a
95% interval; from 9 rounds the interval is x(2)..x(8), the first that
leaves out the best and the worst round, so one preempted or lucky round no
longer decides a verdict. The shell tools therefore default to 9 rounds
(bench/load.sh, bench/noisy_neighbor.sh), as bench/affinity_bench.py does.

Python tools import it (sys.path: bench/); shell tools run the CLI:

  bench/noise.py verdict --target 0.85 --higher-is-better [--name NAME] X...
      prints "NAME: MEDIAN (95% CI of the median LO..HI, N rounds;
      target >= 0.85: VERDICT)"; exit 0 for met or within noise, 1 for
      MISSED, 2 for bad arguments.
  bench/noise.py ci X...
      prints "MEDIAN LO HI" (for tables; no target).

Samples are numbers, as separate arguments or separated by spaces or commas
within one.
"""

import argparse
import math
import sys

MET = "met"
WITHIN = "within noise"
MISSED = "MISSED"

# Rounds from which the interval is a true 95% interval (the range of 6),
# and from which it is narrower than the range (x(2)..x(8) of 9).
ROUNDS_FOR_95 = 6
ROUNDS_FOR_NARROWER_THAN_RANGE = 9


def median(values):
    """The median (the mean of the two middle values for an even count)."""
    v = sorted(values)
    n = len(v)
    if n == 0:
        raise ValueError("no samples")
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def ci_rank(n):
    """k of the interval x(k)..x(n+1-k): the largest k with
    P(Binomial(n, 1/2) < k) <= 2.5%, at least 1. The same double arithmetic,
    in the same order, as MedianCi in bench/median_ci.h."""
    if n < 1:
        raise ValueError("no samples")
    k = 1
    below = 0.0
    term = math.ldexp(1.0, -n)  # C(n, 0) / 2^n
    for j in range(n - 1):
        below += term  # P(B <= j)
        if below > 0.025:
            break
        k = j + 1
        term = term * float(n - j) / float(j + 1)
    return k


def coverage(n):
    """The probability that x(k)..x(n+1-k) covers the true median:
    1 - 2 P(B < k) (>= 0.95 from 6 rounds; 0.75 for 3)."""
    k = ci_rank(n)
    return 1 - 2 * sum(math.comb(n, j) for j in range(k)) / 2 ** n


def median_ci(values):
    """(lo, hi): the distribution-free ~95% confidence interval of the
    median, x(k) and x(n+1-k) (see ci_rank)."""
    v = sorted(values)
    k = ci_rank(len(v))
    return v[k - 1], v[len(v) - k]


def interval_verdict(lo, hi, target, higher_is_better=True):
    """met / within noise / MISSED of an interval against a target (the
    rule of IntervalVerdict in bench/median_ci.h)."""
    if higher_is_better:
        if lo >= target:
            return MET
        return MISSED if hi < target else WITHIN
    if hi <= target:
        return MET
    return MISSED if lo > target else WITHIN


class Result:
    """The median of samples, its 95% CI and the verdict against a target."""

    def __init__(self, values, target, higher_is_better=True):
        self.values = list(values)
        self.n = len(self.values)
        self.median = median(self.values)
        self.lo, self.hi = median_ci(self.values)
        self.coverage = coverage(self.n)
        self.target = target
        self.higher_is_better = higher_is_better
        self.verdict = interval_verdict(self.lo, self.hi, target,
                                        higher_is_better)

    @property
    def missed(self):
        return self.verdict == MISSED

    def line(self, name, digits=3):
        """'NAME: MEDIAN (95% CI of the median LO..HI, N rounds;
        target >= T: VERDICT)', with a warning when N rounds give no 95%
        interval."""
        f = f"{{:.{digits}f}}"
        op = ">=" if self.higher_is_better else "<="
        few = ""
        if self.n < ROUNDS_FOR_95:
            few = (f"; only {self.coverage:.0%} coverage with {self.n} "
                   f"rounds, {ROUNDS_FOR_95}+ for 95%")
        return (f"{name}: {f.format(self.median)} (95% CI of the median "
                f"{f.format(self.lo)}..{f.format(self.hi)}, {self.n} rounds"
                f"{few}; target {op} {self.target:g}: {self.verdict})")


def verdict(values, target, higher_is_better=True):
    """Result (median, lo, hi, verdict, ...) of samples against a target."""
    return Result(values, target, higher_is_better)


def describe(name, values, target, higher_is_better=True, digits=3):
    """verdict(...).line(name): one line for a tool's output."""
    return verdict(values, target, higher_is_better).line(name, digits)


def ci_line(name, values, digits=3):
    """'NAME: MEDIAN (95% CI of the median LO..HI, N rounds; no target)'."""
    lo, hi = median_ci(values)
    f = f"{{:.{digits}f}}"
    return (f"{name}: {f.format(median(values))} (95% CI of the median "
            f"{f.format(lo)}..{f.format(hi)}, {len(values)} rounds; no "
            "target)")


def _samples(args):
    out = []
    for a in args:
        for s in a.replace(",", " ").split():
            x = float(s)
            if not math.isfinite(x):
                raise ValueError(f"not a finite number: {s}")
            out.append(x)
    if not out:
        raise ValueError("no samples")
    return out


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="noise.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("verdict", help="median, 95%% CI and verdict; "
                       "exit 1 when MISSED")
    v.add_argument("--target", type=float, required=True)
    d = v.add_mutually_exclusive_group(required=True)
    d.add_argument("--higher-is-better", dest="higher", action="store_true")
    d.add_argument("--lower-is-better", dest="higher", action="store_false")
    v.add_argument("--name", default="ratio")
    v.add_argument("--digits", type=int, default=3)
    v.add_argument("samples", nargs="+")
    c = sub.add_parser("ci", help="print MEDIAN LO HI")
    c.add_argument("samples", nargs="+")
    a = p.parse_args(argv)
    try:
        values = _samples(a.samples)
    except ValueError as e:
        p.error(str(e))
    if a.cmd == "ci":
        lo, hi = median_ci(values)
        print(f"{median(values):.6g} {lo:.6g} {hi:.6g}")
        return 0
    r = verdict(values, a.target, a.higher)
    print(r.line(a.name, a.digits))
    return 1 if r.missed else 0


if __name__ == "__main__":
    sys.exit(main())
