#include "client/download_progress.h"

#include <unistd.h>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace posenc {

bool DownloadProgress::IsTerminal(std::FILE* stream) {
  return isatty(fileno(stream)) == 1;
}

DownloadProgress::DownloadProgress(std::FILE* out, bool enabled,
                                   uint64_t total_rows, uint64_t row_bytes)
    : out_(out),
      enabled_(enabled),
      total_rows_(total_rows),
      row_bytes_(row_bytes) {}

DownloadProgress::~DownloadProgress() { Finish(); }

std::string DownloadProgress::Line(uint64_t rows, uint64_t total_rows,
                                   uint64_t row_bytes) {
  constexpr double kMiB = 1024.0 * 1024.0;
  const uint64_t percent = total_rows == 0 ? 100 : rows * 100 / total_rows;
  return absl::StrFormat(
      "posenc: %d/%d rows, %.1f/%.1f MiB (%d%%)", rows, total_rows,
      static_cast<double>(rows) * static_cast<double>(row_bytes) / kMiB,
      static_cast<double>(total_rows) * static_cast<double>(row_bytes) / kMiB,
      percent);
}

void DownloadProgress::Add(uint64_t rows) {
  rows_ += rows;
  if (!enabled_ || finished_) return;
  const absl::Time now = absl::Now();
  if (now - last_draw_ < absl::Milliseconds(100)) return;
  last_draw_ = now;
  Draw();
}

void DownloadProgress::Finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  Draw();
  std::fputc('\n', out_);
  std::fflush(out_);
}

void DownloadProgress::Draw() {
  // \r to the line's start, the text, then ESC[K to erase what a longer
  // earlier line left behind.
  std::fprintf(out_, "\r%s\x1b[K",
               Line(rows_, total_rows_, row_bytes_).c_str());
  std::fflush(out_);
}

}  // namespace posenc
