// A distribution-free ~95% confidence interval of a median, for the
// benchmarks' verdicts (bench/cold_path, bench/encoding_bench).
#ifndef POSENC_BENCH_MEDIAN_CI_H_
#define POSENC_BENCH_MEDIAN_CI_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace posenc::bench {

// The order statistics x(k) and x(n+1-k) of `v` with the largest k for which
// P(Binomial(n, 1/2) < k) <= 2.5% (x(2)..x(8) of 9 samples, x(4)..x(12) of
// 15); the whole range below 6. Unlike the range, it narrows as samples are
// added, and one preempted sample does not move it. `v` must not be empty.
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

}  // namespace posenc::bench

#endif  // POSENC_BENCH_MEDIAN_CI_H_
