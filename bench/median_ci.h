// A distribution-free ~95% confidence interval of a median, and the verdict
// of an interval against a target: the one rule of every benchmark
// (bench/cold_path, bench/encoding_bench here; bench/noise.py, its Python
// twin, for the shell and Python tools; tests/bench_configs/noise_test.py
// checks that both give the same intervals and verdicts).
#ifndef POSENC_BENCH_MEDIAN_CI_H_
#define POSENC_BENCH_MEDIAN_CI_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <tuple>
#include <utility>
#include <vector>

namespace posenc::bench {

// The order statistics x(k) and x(n+1-k) of `v` with the largest k for which
// P(Binomial(n, 1/2) < k) <= 2.5% (x(2)..x(8) of 9 samples, x(4)..x(12) of
// 15); the whole range below 9 (a 95% interval from 6 samples; 75% for 3).
// Unlike the range, it narrows as samples are added, and from 9 samples one
// preempted sample does not move it. `v` must not be empty.
inline std::pair<double, double> MedianCi(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  size_t k = 1;
  double below = 0, term = std::ldexp(1.0, -static_cast<int>(n));  // C(n,0)
  for (size_t j = 0; j + 1 < n; ++j) {
    below += term;  // P(B <= j)
    if (below > 0.025) break;
    k = j + 1;
    term = term * static_cast<double>(n - j) / static_cast<double>(j + 1);
  }
  return {v[k - 1], v[n - k]};
}

// A median, its 95% interval (MedianCi), and the interval's half-width
// relative to the median.
struct Summary {
  double median = 0, lo = 0, hi = 0;
  double spread() const { return median > 0 ? (hi - lo) / 2 / median : 0; }
};

// The Summary of `v`; all zeros when `v` is empty.
inline Summary Summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  std::tie(s.lo, s.hi) = MedianCi(v);
  return s;
}

// "met" when the whole interval meets the target, "MISSED" when none of it
// does, "within noise" when the target lies inside it. A benchmark exits
// non-zero when a verdict is "MISSED".
inline const char* IntervalVerdict(std::pair<double, double> ci, double target,
                                   bool higher_is_better) {
  const auto [lo, hi] = ci;
  if (higher_is_better ? lo >= target : hi <= target) return "met";
  if (higher_is_better ? hi < target : lo > target) return "MISSED";
  return "within noise";
}

// Whether a verdict of IntervalVerdict is "MISSED".
inline bool Missed(const char* verdict) {
  return std::strcmp(verdict, "MISSED") == 0;
}

}  // namespace posenc::bench

#endif  // POSENC_BENCH_MEDIAN_CI_H_
