#!/usr/bin/python3
"""bench/noise.py, the one "met / within noise / MISSED" rule of every
benchmark: known samples give known intervals and verdicts; the CLI prints
them and exits 1 on MISSED; bench/median_ci.h (through median_ci_dump) gives
the same interval and verdict as noise.py on the same samples; and no tool in
bench/ decides "within noise" by a rule of its own.

Usage: noise_test.py --median-ci-dump BUILD/.../median_ci_dump --bench-dir
       REPO/bench [unittest options]
"""

import argparse
import fractions
import math
import os
import random
import re
import subprocess
import sys
import unittest

ARGS = None
noise = None  # bench/noise.py, imported in main()


def exact_rank(n):
    """ci_rank computed independently, in exact rational arithmetic."""
    k, below = 1, fractions.Fraction(0)
    for j in range(n - 1):
        below += fractions.Fraction(math.comb(n, j), 2 ** n)
        if below > fractions.Fraction(25, 1000):
            break
        k = j + 1
    return k


class KnownIntervals(unittest.TestCase):
    def test_rank(self):
        # x(k)..x(n+1-k): the whole range up to 8 rounds, x(2)..x(8) of 9,
        # x(4)..x(12) of 15, x(8)..x(18) of 25 (docs/load-testing.md).
        expected = {1: 1, 2: 1, 3: 1, 5: 1, 6: 1, 8: 1, 9: 2, 11: 2, 12: 3,
                    15: 4, 25: 8, 100: 40}
        for n, k in expected.items():
            self.assertEqual(noise.ci_rank(n), k, n)
        for n in range(1, 301):
            self.assertEqual(noise.ci_rank(n), exact_rank(n), n)

    def test_coverage(self):
        self.assertAlmostEqual(noise.coverage(3), 0.75)
        self.assertAlmostEqual(noise.coverage(5), 1 - 2 / 32)
        self.assertAlmostEqual(noise.coverage(6), 1 - 2 / 64)
        self.assertAlmostEqual(noise.coverage(9), 1 - 2 * 10 / 512)
        for n in range(6, 200):
            self.assertGreaterEqual(noise.coverage(n), 0.95, n)
        self.assertEqual(noise.ROUNDS_FOR_95,
                         min(n for n in range(1, 50) if noise.coverage(n) >= 0.95))
        self.assertEqual(noise.ROUNDS_FOR_NARROWER_THAN_RANGE,
                         min(n for n in range(1, 50) if noise.ci_rank(n) > 1))

    def test_median_and_interval(self):
        self.assertEqual(noise.median([3, 1, 2]), 2)
        self.assertEqual(noise.median([4, 1, 2, 3]), 2.5)
        self.assertEqual(noise.median_ci([0.9, 0.7, 0.72]), (0.7, 0.9))
        nine = [0.77, 0.70, 0.90, 0.71, 0.72, 0.73, 0.74, 0.75, 0.76]
        self.assertEqual(noise.median_ci(nine), (0.71, 0.77))
        fifteen = list(range(15, 0, -1))
        self.assertEqual(noise.median_ci(fifteen), (4, 12))
        with self.assertRaises(ValueError):
            noise.median_ci([])


class Verdicts(unittest.TestCase):
    def test_issue_23_example(self):
        # Three rounds: one lucky round stretches the interval (the range)
        # over 0.85, so 0.70 is only "within noise"; that is why the tools
        # run 9 rounds: one lucky round in nine no longer reaches it.
        r = noise.verdict([0.70, 0.72, 0.90], 0.85)
        self.assertEqual((r.median, r.lo, r.hi, r.verdict),
                         (0.72, 0.70, 0.90, noise.WITHIN))
        self.assertIn("only 75% coverage with 3 rounds", r.line("x"))
        r = noise.verdict([0.70, 0.71, 0.72, 0.73, 0.74, 0.75, 0.76, 0.77,
                           0.90], 0.85)
        self.assertEqual((r.median, r.lo, r.hi, r.verdict),
                         (0.74, 0.71, 0.77, noise.MISSED))
        self.assertTrue(r.missed)

    def test_higher_is_better(self):
        v = [0.86, 0.88, 0.90, 0.91, 0.92, 0.93, 0.95, 0.97, 0.99]
        self.assertEqual(noise.verdict(v, 0.85).verdict, noise.MET)
        self.assertEqual(noise.verdict(v, 0.88).verdict, noise.MET)  # lo == t
        self.assertEqual(noise.verdict(v, 0.89).verdict, noise.WITHIN)
        self.assertEqual(noise.verdict(v, 0.97).verdict, noise.WITHIN)  # hi == t
        self.assertEqual(noise.verdict(v, 0.975).verdict, noise.MISSED)

    def test_lower_is_better(self):
        v = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 2.5]
        self.assertEqual(noise.verdict(v, 1.7, False).verdict, noise.MET)
        self.assertEqual(noise.verdict(v, 1.5, False).verdict, noise.WITHIN)
        self.assertEqual(noise.verdict(v, 1.1, False).verdict, noise.WITHIN)
        self.assertEqual(noise.verdict(v, 1.05, False).verdict, noise.MISSED)

    def test_line(self):
        v = [0.86, 0.88, 0.90, 0.91, 0.92, 0.93, 0.95, 0.97, 0.99]
        self.assertEqual(
            noise.describe("proxy/direct", v, 0.85),
            "proxy/direct: 0.920 (95% CI of the median 0.880..0.970, "
            "9 rounds; target >= 0.85: met)")
        self.assertEqual(
            noise.ci_line("relay/direct", v, digits=2),
            "relay/direct: 0.92 (95% CI of the median 0.88..0.97, 9 rounds; "
            "no target)")


class Cli(unittest.TestCase):
    def run_cli(self, *args):
        return subprocess.run(
            [sys.executable, os.path.join(ARGS.bench_dir, "noise.py"), *args],
            capture_output=True, text=True, timeout=30)

    def test_verdict_exit_status(self):
        r = self.run_cli("verdict", "--target", "0.85", "--higher-is-better",
                         "--name", "GetRows", "0.70", "0.71,0.72", "0.73 0.74",
                         "0.75", "0.76", "0.77", "0.90")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout, "GetRows: 0.740 (95% CI of the median "
                         "0.710..0.770, 9 rounds; target >= 0.85: MISSED)\n")
        r = self.run_cli("verdict", "--target", "0.5", "--higher-is-better",
                         "0.4", "0.6", "0.7")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("within noise", r.stdout)
        r = self.run_cli("verdict", "--target", "1.5", "--lower-is-better",
                         "--digits", "2", *"1.1 1.2 1.0 1.3 1.2 1.1 1.4 1.2 1.3".split())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "ratio: 1.20 (95% CI of the median "
                         "1.10..1.30, 9 rounds; target <= 1.5: met)\n")

    def test_ci(self):
        r = self.run_cli("ci", "5", "1", "4", "2", "3")
        self.assertEqual((r.returncode, r.stdout), (0, "3 1 5\n"))

    def test_bad_arguments(self):
        for args in (["verdict", "--target", "1", "1", "2"],  # no direction
                     ["verdict", "--target", "1", "--higher-is-better"],
                     ["verdict", "--target", "1", "--higher-is-better", "x"],
                     ["ci", "nan"], ["ci", ""]):
            r = self.run_cli(*args)
            self.assertEqual(r.returncode, 2, (args, r.stdout, r.stderr))


class SameInCpp(unittest.TestCase):
    """bench/median_ci.h (MedianCi, IntervalVerdict) against noise.py."""

    def test_same_interval_and_verdict(self):
        rng = random.Random(23)
        cases = []
        for n in list(range(1, 41)) + [49, 64, 99, 100, 101, 250]:
            for _ in range(20):
                kind = rng.randrange(3)
                if kind == 0:  # continuous
                    v = [rng.lognormvariate(0, 0.3) for _ in range(n)]
                elif kind == 1:  # many ties
                    v = [float(rng.randrange(5)) for _ in range(n)]
                else:  # a few wild rounds
                    v = [rng.gauss(1, 0.05) * (5 if rng.random() < 0.1 else 1)
                         for _ in range(n)]
                s = sorted(v)
                targets = [rng.choice(v), s[0] - 1, s[-1] + 1,
                           rng.uniform(s[0], s[-1])]
                for t in targets:
                    cases.append((t, rng.randrange(2), v))
        lines = "".join(f"{t!r} {h} {' '.join(map(repr, v))}\n"
                        for t, h, v in cases)
        out = subprocess.run([ARGS.median_ci_dump], input=lines,
                             capture_output=True, text=True, timeout=60,
                             check=True).stdout.splitlines()
        self.assertEqual(len(out), len(cases))
        for (t, h, v), got in zip(cases, out):
            lo, hi, verdict = got.split(" ", 2)
            r = noise.verdict(v, t, bool(h))
            self.assertEqual((float(lo), float(hi), verdict),
                             (r.lo, r.hi, r.verdict), (t, h, v))


class OneRule(unittest.TestCase):
    """No benchmark decides "within noise" by a rule of its own: the
    verdict words appear only in noise.py and median_ci.h, and the tools
    that report verdicts use them."""

    def test_no_private_rule(self):
        own = {"noise.py", "median_ci.h"}
        offenders = []
        for dirpath, _, files in os.walk(ARGS.bench_dir):
            if "__pycache__" in dirpath:
                continue
            for f in files:
                if f in own or not f.endswith((".py", ".sh", ".cc", ".h")):
                    continue
                path = os.path.join(dirpath, f)
                text = open(path, encoding="utf-8").read()
                # A verdict word assigned, returned or chosen in code (not
                # quoted in a comment): a rule of its own.
                if re.search(r'''(=|return|\?)\s*["'](within[ -_]?noise|'''
                             r'''missed|MISSED|met)["']''', text):
                    offenders.append(os.path.relpath(path, ARGS.bench_dir))
        self.assertEqual(offenders, [])

    def test_tools_use_it(self):
        uses = {"load.sh": "noise.py", "noisy_neighbor.sh": "noise.py",
                "affinity_bench.py": "import noise",
                "proxy_ab.py": "import noise",
                "cold_path.cc": "IntervalVerdict",
                "encoding_bench.cc": "IntervalVerdict",
                "shm_read_cpp.cc": "IntervalVerdict"}
        for f, needle in uses.items():
            with open(os.path.join(ARGS.bench_dir, f), encoding="utf-8") as fh:
                self.assertTrue(needle in fh.read(), f"{f}: no {needle}")


def main():
    global ARGS, noise
    p = argparse.ArgumentParser()
    p.add_argument("--median-ci-dump", required=True)
    p.add_argument("--bench-dir", required=True)
    ARGS, rest = p.parse_known_args()
    sys.path.insert(0, ARGS.bench_dir)
    import noise as module
    noise = module
    unittest.main(argv=[sys.argv[0], *rest])


if __name__ == "__main__":
    main()
