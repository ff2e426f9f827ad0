// Minimal structured logging to stderr, one line per event. (Abseil
// 20220623 in Debian 12 has no absl/log.)
//
// A line has a UTC time, a level, the event (the formatted message) and its
// fields: the message's key=value words. Two formats, process-wide
// (SetLogFormat; ServerOptions::log_format):
//   text (default): 2026-12-04T16:20:00.123Z INFO posenc_server ... pid=7
//   json:           {"time":"2026-12-04T16:20:00.123Z","level":"INFO",
//                    "event":"posenc_server ... pid=7","fields":{"pid":"7"}}
// on one line, for log collectors. Thread-safe: each line is written with a
// single fwrite.
#ifndef POSENC_SERVER_LOG_H_
#define POSENC_SERVER_LOG_H_

#include <string>

// str_cat.h and time: users of Log have long received them from here.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace posenc {

enum class LogFormat { kText, kJson };

// Sets the format of every later line. Thread-safe.
void SetLogFormat(LogFormat format);

// The line `Log` writes for `event` at `level`, now, in the current format,
// ending in '\n'.
std::string FormatLogLine(absl::string_view level, absl::string_view event);

// Writes FormatLogLine(level, event) to stderr.
void WriteLogLine(absl::string_view level, absl::string_view event);

template <typename... Args>
void Log(const char* level, const absl::FormatSpec<Args...>& format,
         const Args&... args) {
  WriteLogLine(level, absl::StrFormat(format, args...));
}

}  // namespace posenc

#endif  // POSENC_SERVER_LOG_H_
