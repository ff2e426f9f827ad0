#!/usr/bin/env python3
"""Compares two builds of a Google Benchmark binary, interleaved.

    bench/interleaved_ab.py --base OLD/encoding_bench --head NEW/encoding_bench \
        --filter 'BM_ExactSingleThread/' --rounds 15

Why interleaved: on a shared 2-core VM the same binary's time drifts by
30-50 % over minutes (neighbours, frequency), more than the differences a
refactoring could make. Two report.sh runs one after the other compare the
minutes, not the builds. Here each round runs both binaries back to back, in
a random order, and the unit of comparison is the round's ratio head/base:
drift slower than a round cancels. The verdict per benchmark is the median
ratio with the 95 % confidence interval of that median (bench/noise.py,
the rule of every tool here): "within noise" when the interval contains
1.0.

Writes on stdout the command line, both binaries' build ids and the load
average before and after, then a Markdown table; exits 0 whatever the
verdict: a comparison is a measurement, not a test.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import noise  # noqa: E402  (bench/noise.py: the one median-CI rule)


def run(binary, bench_filter, min_time):
    # JSON through --benchmark_out: a binary may keep its own console
    # reporter (encoding_bench does) and its own repetitions; their
    # iterations' times are averaged.
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run(
            [binary, f"--benchmark_filter={bench_filter}",
             f"--benchmark_min_time={min_time}", f"--benchmark_out={f.name}",
             "--benchmark_out_format=json"],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        doc = json.load(f)
    runs = {}
    for b in doc["benchmarks"]:
        if b.get("run_type", "iteration") == "iteration":
            runs.setdefault(b["run_name"], []).append(b["real_time"])
    return {name: sum(ts) / len(ts) for name, ts in runs.items()}


def build_id(binary):
    try:
        out = subprocess.run(["readelf", "-n", binary], capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            if "Build ID" in line:
                return line.split(":")[1].strip()[:12]
    except OSError:
        pass
    return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True)
    ap.add_argument("--head", required=True)
    ap.add_argument("--filter", required=True)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if not 6 <= args.rounds <= 200:  # 6: the fewest with a 95 % interval
        sys.exit("interleaved_ab: --rounds must be in [6, 200]")
    rng = random.Random(args.seed)
    ratios = {}
    load_before = os.getloadavg()[0]
    for r in range(args.rounds):
        order = ["base", "head"]
        rng.shuffle(order)
        times = {}
        for side in order:
            times[side] = run(getattr(args, side), args.filter, args.min_time)
        for name, t in times["head"].items():
            if name in times["base"]:
                ratios.setdefault(name, []).append(t / times["base"][name])
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    load_after = os.getloadavg()[0]
    print(f"`{' '.join(sys.argv)}`\n")
    print(f"base {args.base} (build id {build_id(args.base)}), head "
          f"{args.head} (build id {build_id(args.head)}); {args.rounds} "
          f"rounds, each both binaries in random order; load average "
          f"{load_before:.2f} before, {load_after:.2f} after.\n")
    print("| benchmark | head / base time, median | 95% CI of the median "
          "| verdict |")
    print("|---|---|---|---|")
    for name, rs in ratios.items():
        med = noise.median(rs)
        lo, hi = noise.median_ci(rs)
        verdict = ("within noise" if lo <= 1.0 <= hi else
                   "head slower" if lo > 1.0 else "head faster")
        print(f"| {name} | {med:.3f} | {lo:.3f} .. {hi:.3f} | {verdict} |")


if __name__ == "__main__":
    main()
