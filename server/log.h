// Minimal structured logging to stderr: one line per event, with a UTC
// timestamp and a level. (Abseil 20220623 in Debian 12 has no absl/log.)
// Thread-safe: each line is written with a single fwrite.
#ifndef POSENC_SERVER_LOG_H_
#define POSENC_SERVER_LOG_H_

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace posenc {

template <typename... Args>
void Log(const char* level, const absl::FormatSpec<Args...>& format,
         const Args&... args) {
  std::string line =
      absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(),
                                    absl::UTCTimeZone()),
                   " ", level, " ", absl::StrFormat(format, args...), "\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace posenc

#endif  // POSENC_SERVER_LOG_H_
