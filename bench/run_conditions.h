// What a benchmark reports about the conditions it ran under, and the clock
// it times one thread's own work with.
#ifndef POSENC_BENCH_RUN_CONDITIONS_H_
#define POSENC_BENCH_RUN_CONDITIONS_H_

#include <time.h>

#include <fstream>
#include <string>

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

}  // namespace posenc::bench

#endif  // POSENC_BENCH_RUN_CONDITIONS_H_
