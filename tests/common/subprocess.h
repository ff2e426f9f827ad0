// Subprocess: runs a program with its stdout and stderr captured to files,
// for tests that drive the real posenc binaries. Every wait is bounded.
#ifndef POSENC_TESTS_COMMON_SUBPROCESS_H_
#define POSENC_TESTS_COMMON_SUBPROCESS_H_

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace posenc::testing {

// A path for `name` in a directory of this test process's own, so tests run
// in parallel by ctest never share files.
inline std::string TestTempPath(const std::string& name) {
  static const std::string* dir = [] {
    std::string tmpl = ::testing::TempDir() + "posenc-test-XXXXXX";
    return new std::string(mkdtemp(tmpl.data()));
  }();
  return *dir + "/" + name;
}

class Subprocess {
 public:
  // Starts argv[0] with `argv`; output goes to `out_path` and `err_path`.
  Subprocess(const std::vector<std::string>& argv, std::string out_path,
             std::string err_path)
      : out_path_(std::move(out_path)), err_path_(std::move(err_path)) {
    // Everything that allocates happens before fork: the child of a
    // multithreaded process (gRPC's threads) may only make async-signal-safe
    // calls, or it can block forever on an allocator lock another thread
    // held at the fork (seen once under ASan: a CLI that never started,
    // PlotTest.NoOutput_UsageErrorExitTwo at afc37b3).
    std::vector<char*> args;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      int out = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(out, 1);
      dup2(err, 2);
      execv(args[0], args.data());
      _exit(127);
    }
  }
  ~Subprocess() {
    if (pid_ > 0 && !exit_code_.has_value()) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  void Signal(int sig) { kill(pid_, sig); }

  // The exit code (128 + signal if killed), or nullopt after `timeout`.
  std::optional<int> Wait(absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (!exit_code_.has_value() && absl::Now() < deadline) {
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_code_ =
            WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      } else {
        absl::SleepFor(absl::Milliseconds(10));
      }
    }
    return exit_code_;
  }

  std::string Stdout() const { return Read(out_path_); }
  std::string Stderr() const { return Read(err_path_); }

 private:
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }

  std::string out_path_, err_path_;
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

// What a program run to its end printed, and how it ended.
struct ProgramResult {
  int exit_code = -1;  // -1: still running after the timeout (then killed)
  std::string out, err;
};

// Runs argv to its end (at most `timeout`), stdout and stderr captured to
// this test's temp files (not terminals).
inline ProgramResult RunProgram(const std::vector<std::string>& argv,
                                absl::Duration timeout = absl::Seconds(60)) {
  Subprocess program(argv, TestTempPath("program.out"),
                     TestTempPath("program.err"));
  std::optional<int> code = program.Wait(timeout);
  return {code.value_or(-1), program.Stdout(), program.Stderr()};
}

}  // namespace posenc::testing

#endif  // POSENC_TESTS_COMMON_SUBPROCESS_H_
