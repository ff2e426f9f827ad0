#include "server/log.h"

#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace posenc {
namespace {

std::atomic<LogFormat> log_format{LogFormat::kText};

// `text` as a JSON string, quotes included. Bytes >= 0x80 pass through (the
// messages are UTF-8 or ASCII); control characters are escaped.
void AppendJsonString(std::string* out, absl::string_view text) {
  out->push_back('"');
  for (const char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (c == '\n') {
      out->append("\\n");
    } else if (u < 0x20 || u == 0x7f) {
      absl::StrAppend(out, absl::StrFormat("\\u%04x", u));
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

// The key=value words of `event`, in order: keys of [a-z0-9_-], values
// without a trailing ',', ';' or ')'; a repeated key keeps its first value.
std::vector<std::pair<absl::string_view, absl::string_view>> Fields(
    absl::string_view event) {
  std::vector<std::pair<absl::string_view, absl::string_view>> fields;
  for (absl::string_view word : absl::StrSplit(event, ' ', absl::SkipEmpty())) {
    const size_t eq = word.find('=');
    if (eq == 0 || eq == absl::string_view::npos) continue;
    absl::string_view key = word.substr(0, eq);
    if (key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") !=
        absl::string_view::npos) {
      continue;
    }
    absl::string_view value = word.substr(eq + 1);
    while (!value.empty() && (value.back() == ',' || value.back() == ';' ||
                              value.back() == ')')) {
      value.remove_suffix(1);
    }
    bool seen = false;  // a key repeated keeps its first value
    for (const auto& field : fields) seen = seen || field.first == key;
    if (!seen) fields.emplace_back(key, value);
  }
  return fields;
}

}  // namespace

void SetLogFormat(LogFormat format) {
  log_format.store(format, std::memory_order_relaxed);
}

std::string FormatLogLine(absl::string_view level, absl::string_view event) {
  const std::string time = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(),
                                            absl::UTCTimeZone());
  if (log_format.load(std::memory_order_relaxed) == LogFormat::kText) {
    return absl::StrCat(time, " ", level, " ", event, "\n");
  }
  std::string line = "{\"time\":";
  AppendJsonString(&line, time);
  line.append(",\"level\":");
  AppendJsonString(&line, level);
  line.append(",\"event\":");
  AppendJsonString(&line, event);
  line.append(",\"fields\":{");
  bool first = true;
  for (const auto& [key, value] : Fields(event)) {
    if (!first) line.push_back(',');
    first = false;
    AppendJsonString(&line, key);
    line.push_back(':');
    AppendJsonString(&line, value);
  }
  line.append("}}\n");
  return line;
}

void WriteLogLine(absl::string_view level, absl::string_view event) {
  const std::string line = FormatLogLine(level, event);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace posenc
