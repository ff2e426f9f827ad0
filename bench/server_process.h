// ServerProcess: one posenc_server started by a benchmark (fork + exec on
// 127.0.0.1, port 0, its output in a temp file), and the server process's
// CPU time read when it is idle. Shared by bench/cold_rows_cpu and
// bench/encode_bench.
#ifndef POSENC_BENCH_SERVER_PROCESS_H_
#define POSENC_BENCH_SERVER_PROCESS_H_

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace posenc::bench {

// One posenc_server process, its stderr in a file.
class ServerProcess {
 public:
  explicit ServerProcess(const std::string& binary, const std::string& flags) {
    char tmpl[] = "/tmp/posenc-bench-server-XXXXXX";
    const int fd = mkstemp(tmpl);
    log_ = tmpl;
    std::vector<std::string> argv = {binary, "--listen=127.0.0.1:0"};
    for (absl::string_view f : absl::StrSplit(flags, ',', absl::SkipEmpty())) {
      argv.emplace_back(f);
    }
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> args;
      for (std::string& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(fd);
    if (pid_ < 0 || clock_getcpuclockid(pid_, &cpu_clock_) != 0) {
      std::perror("the server's CPU clock");
      return;  // port 0: "did not start"
    }
    const std::regex re(R"(\(port (\d+)\))");
    for (int i = 0; i < 1000 && port_ == 0; ++i) {  // at most 10 s
      std::ifstream in(log_);
      const std::string text((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
      std::smatch m;
      if (std::regex_search(text, m, re)) port_ = std::stoi(m[1]);
      if (port_ == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ~ServerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    unlink(log_.c_str());
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }

  // On-CPU nanoseconds of the server process so far: its process CPU-time
  // clock (clock_getcpuclockid), every thread, exited ones included. A
  // thread that is running right now is counted only up to its last
  // scheduler update (a tick: 4 ms at HZ=250), so read it when idle.
  uint64_t CpuNs() const {
    timespec t;
    if (clock_gettime(cpu_clock_, &t) != 0) return 0;
    return uint64_t(t.tv_sec) * 1000000000u + uint64_t(t.tv_nsec);
  }
  // Whether no thread of the server is running or runnable (state R; or
  // in uninterruptible sleep, D): then every thread's CPU time is
  // accounted to the clock above.
  bool Quiet() const {
    const std::string dir = absl::StrCat("/proc/", pid_, "/task");
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return true;
    bool quiet = true;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      const std::string path = absl::StrCat(dir, "/", e->d_name, "/stat");
      const int fd = open(path.c_str(), O_RDONLY);
      if (fd < 0) continue;  // the thread has just gone
      char buf[512];
      const ssize_t n = read(fd, buf, sizeof buf - 1);
      close(fd);
      if (n <= 0) continue;
      buf[n] = 0;
      // "tid (comm) S ...": the state follows the last ')'.
      const char* paren = std::strrchr(buf, ')');
      if (paren != nullptr && paren[1] == ' ' &&
          (paren[2] == 'R' || paren[2] == 'D')) {
        quiet = false;
        break;
      }
    }
    closedir(d);
    return quiet;
  }
  // CpuNs once the server is idle: every thread asleep at two looks 200 us
  // apart, and the clock unchanged between them (at most ~50 ms; *settled
  // false if it never was).
  uint64_t IdleCpuNs(bool* settled) const {
    uint64_t last = CpuNs();
    bool quiet_before = Quiet();
    for (int i = 0; i < 250; ++i) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      const bool quiet = Quiet();
      const uint64_t now = CpuNs();
      if (quiet_before && quiet && now == last) {
        *settled = true;
        return now;
      }
      last = now;
      quiet_before = quiet;
    }
    *settled = false;
    return last;
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
  clockid_t cpu_clock_ = 0;
  int port_ = 0;
};

}  // namespace posenc::bench

#endif  // POSENC_BENCH_SERVER_PROCESS_H_
