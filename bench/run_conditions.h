// What a benchmark reports about the conditions it ran under, the clock it
// times one thread's own work with, and the interleaved rounds it times
// cases in.
#ifndef POSENC_BENCH_RUN_CONDITIONS_H_
#define POSENC_BENCH_RUN_CONDITIONS_H_

#include <time.h>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace posenc::bench {

// The calling thread's CPU time in nanoseconds (CLOCK_THREAD_CPUTIME_ID):
// what it computed, not what other processes of a shared machine took.
inline double ThreadCpuNs() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

// The 1, 5 and 15 minute load averages, "0.56 1.64 2.26" (/proc/loadavg).
inline std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return absl::StrCat(a, " ", b, " ", c);
}

// Runs each case once (code, pages and MPFR's caches warm), then `rounds`
// rounds of every case in a new random order (seed 7: runs compare), and
// calls record(case, ns) with the thread CPU time of each timed run.
// Interleaving spreads a shared machine's noise over the cases alike.
// Case has a `run` member callable with no arguments.
template <typename Case, typename Record>
void RunInterleavedRounds(std::vector<Case>& cases, int rounds, Record record) {
  for (Case& c : cases) c.run();
  std::mt19937 rng(7);
  std::vector<size_t> order(cases.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  for (int r = 0; r < rounds; ++r) {
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t k : order) {
      const double t0 = ThreadCpuNs();
      cases[k].run();
      record(cases[k], ThreadCpuNs() - t0);
    }
  }
}

}  // namespace posenc::bench

#endif  // POSENC_BENCH_RUN_CONDITIONS_H_
