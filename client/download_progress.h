// DownloadProgress: the `posenc` CLI's progress line for a streamed
// download, e.g.
//
//   posenc: 412160/1048576 rows, 805.0/2048.0 MiB (39%)
//
// redrawn in place (carriage return, then erase to the end of the line) at
// most every 100 ms, drawn once more when the download ends or fails, and
// ended with a newline, so an error message that follows starts on its own
// line. Enabled only when its stream is a terminal (the CLI passes
// IsTerminal(stderr)): in a pipe, a file or a test's captured stderr it
// writes nothing at all.
//
// Not thread-safe: one download, one thread.
#ifndef POSENC_CLIENT_DOWNLOAD_PROGRESS_H_
#define POSENC_CLIENT_DOWNLOAD_PROGRESS_H_

#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/time/time.h"

namespace posenc {

class DownloadProgress {
 public:
  // Whether `stream` is a terminal (isatty of its descriptor).
  static bool IsTerminal(std::FILE* stream);

  // A download of `total_rows` rows of `row_bytes` bytes each, shown on
  // `out` only when `enabled`.
  DownloadProgress(std::FILE* out, bool enabled, uint64_t total_rows,
                   uint64_t row_bytes);
  // Finish(), if not done yet.
  ~DownloadProgress();
  DownloadProgress(const DownloadProgress&) = delete;
  DownloadProgress& operator=(const DownloadProgress&) = delete;

  // `rows` more rows arrived.
  void Add(uint64_t rows);

  // Draws the last state and ends the line (once; later calls do nothing).
  void Finish();

  // The text of the line for `rows` of `total_rows` rows of `row_bytes`
  // bytes: "posenc: R/T rows, B/TB MiB (P%)", P rounded down. Pure.
  static std::string Line(uint64_t rows, uint64_t total_rows,
                          uint64_t row_bytes);

 private:
  void Draw();

  std::FILE* const out_;
  const bool enabled_;
  const uint64_t total_rows_, row_bytes_;
  uint64_t rows_ = 0;
  absl::Time last_draw_ = absl::InfinitePast();
  bool finished_ = false;
};

}  // namespace posenc

#endif  // POSENC_CLIENT_DOWNLOAD_PROGRESS_H_
