// bench/median_ci.h on samples from stdin, for noise_test.py, which checks
// that bench/noise.py (the Python twin) gives the same intervals and
// verdicts. One case per line: "TARGET HIGHER_IS_BETTER(0|1) X1 X2 ...";
// prints "LO HI VERDICT" (%.17g: the interval's ends are samples, so they
// must match exactly).
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/median_ci.h"

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    double target;
    int higher;
    if (!(in >> target >> higher)) {
      std::fprintf(stderr, "median_ci_dump: bad line: %s\n", line.c_str());
      return 2;
    }
    std::vector<double> v;
    for (double x; in >> x;) v.push_back(x);
    if (v.empty()) {
      std::fprintf(stderr, "median_ci_dump: no samples: %s\n", line.c_str());
      return 2;
    }
    const auto ci = posenc::bench::MedianCi(v);
    std::printf("%.17g %.17g %s\n", ci.first, ci.second,
                posenc::bench::IntervalVerdict(ci, target, higher != 0));
  }
  return 0;
}
