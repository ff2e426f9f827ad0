// Helpers for the hardening tests: a posenc_server subprocess whose memory
// can be read from /proc, a Prometheus page parser, and the check every test
// ends with: the server still serves the README's worked example and
// reports SERVING.
#ifndef POSENC_TESTS_HARDENING_HARDENING_UTIL_H_
#define POSENC_TESTS_HARDENING_HARDENING_UTIL_H_

#include <cstdio>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/posenc_client.h"
#include "gtest/gtest.h"
#include "tests/common/subprocess.h"
#include "tests/common/table_specs.h"

namespace posenc::testing {

inline constexpr uint64_t kMiB = uint64_t{1} << 20;

inline TableSpec MakeSpec(uint32_t d, uint32_t max_len) {
  return PlainSpec(d, max_len);
}

// Asserts the server answers GetTable(d=4, max_len=4) with the README's
// worked example and health SERVING.
inline void ExpectStillServing(PosencClient& client) {
  absl::StatusOr<Tensor> table = client.GetTable(MakeSpec(4, 4));
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->shape, (std::vector<uint32_t>{4, 4}));
  const double want[4][4] = {{0, 1, 0, 1},
                             {0.8415, 0.5403, 0.0100, 0.99995},
                             {0.9093, -0.4161, 0.0200, 0.9998},
                             {0.1411, -0.9900, 0.0300, 0.9996}};
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 4; ++c) {
      EXPECT_NEAR(table->ValueAt(r * 4 + c), want[r][c], 1e-4)
          << "row " << r << " column " << c;
    }
  }
  absl::StatusOr<bool> serving = client.CheckHealth();
  ASSERT_TRUE(serving.ok()) << serving.status();
  EXPECT_TRUE(*serving);
}

// The value of the sample `series` (name plus labels, exactly as
// rendered) on a Prometheus text page; -1 when absent.
inline double MetricValue(const std::string& page, const std::string& series) {
  std::istringstream in(page);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > series.size() &&
        line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::stod(line.substr(series.size() + 1));
    }
  }
  return -1;
}

// A posenc_server process on a free loopback port.
class ServerProcess {
 public:
  explicit ServerProcess(std::vector<std::string> flags,
                         const std::string& name = "server") {
    std::vector<std::string> argv = {POSENC_SERVER_PATH,
                                     "--listen=127.0.0.1:0"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    // A fresh file per process: reading a previous server's log would give
    // its port.
    static int instances = 0;
    const std::string base = absl::StrCat(name, "-", ++instances);
    process_ = std::make_unique<Subprocess>(argv, TestTempPath(base + ".out"),
                                            TestTempPath(base + ".err"));
    // The start-up log line: "... (port 12345) pid=678 ...".
    const std::regex re(R"(\(port (\d+)\) pid=(\d+))");
    const std::regex metrics_re(R"(\(metrics_port (\d+)\))");
    const bool want_metrics = [&] {
      for (const std::string& f : flags) {
        if (f.rfind("--metrics_listen=", 0) == 0 && f != "--metrics_listen=") {
          return true;
        }
      }
      return false;
    }();
    for (int i = 0; i < 1000; ++i) {
      std::smatch m;
      const std::string err = process_->Stderr();
      if (port_ == 0 && std::regex_search(err, m, re)) {
        port_ = std::stoi(m[1]);
        pid_ = std::stoi(m[2]);
      }
      if (want_metrics && metrics_port_ == 0 &&
          std::regex_search(err, m, metrics_re)) {
        metrics_port_ = std::stoi(m[1]);
      }
      if (port_ != 0 && (!want_metrics || metrics_port_ != 0)) break;
      if (process_->Wait(absl::Milliseconds(10)).has_value()) break;
    }
  }
  int port() const { return port_; }
  int metrics_port() const { return metrics_port_; }
  std::string target() const { return absl::StrCat("127.0.0.1:", port_); }
  Subprocess& process() { return *process_; }

  // VmRSS (current) or VmHWM (peak) of the process, in bytes; 0 if gone.
  uint64_t MemoryBytes(const char* field = "VmRSS") const {
    std::ifstream in(absl::StrCat("/proc/", pid_, "/status"));
    std::string line;
    const std::string prefix = absl::StrCat(field, ":");
    while (std::getline(in, line)) {
      unsigned long long kb = 0;
      if (line.compare(0, prefix.size(), prefix) == 0 &&
          std::sscanf(line.c_str() + prefix.size(), "%llu", &kb) == 1) {
        return kb * 1024;
      }
    }
    return 0;
  }

 private:
  std::unique_ptr<Subprocess> process_;
  int port_ = 0;
  int pid_ = 0;
  int metrics_port_ = 0;
};

inline PosencClient::Options ClientTo(
    const std::string& target, absl::Duration timeout = absl::Seconds(30)) {
  PosencClient::Options options;
  options.target = target;
  options.timeout = timeout;
  return options;
}

}  // namespace posenc::testing

#endif  // POSENC_TESTS_HARDENING_HARDENING_UTIL_H_
