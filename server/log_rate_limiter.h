// LogRateLimiter: lets at most `max_lines` log lines through per window of
// time (one second by default) and counts the lines it holds back, so that
// one summary line ("suppressed K ... in the last S s") can stand for them.
//
// It exists because a client can make every call fail: a flood of bad
// requests must not become a flood of log lines (disk, log shipping, and the
// stderr lock every logging thread would queue on).
//
// Cost: Admit() is lock-free and allocation-free. A line let through costs
// one compare-and-swap on the window's state; a line held back (the case
// that repeats under a flood) costs one load and one fetch_add. No syscall,
// no mutex, whatever the number of threads.
//
// Reporting: the owner calls TakeSuppressed() periodically (PosencServer:
// once a second) and logs one summary line when it is not zero. Counting is
// exact: every line held back is counted in exactly one TakeSuppressed()
// result. The window boundary is approximate under races: a thread that
// read the clock just before a new window started may still count against
// the old one.
//
// Thread-safe: every member may be called concurrently from any thread.
#ifndef POSENC_SERVER_LOG_RATE_LIMITER_H_
#define POSENC_SERVER_LOG_RATE_LIMITER_H_

#include <atomic>
#include <cstdint>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace posenc {

class LogRateLimiter {
 public:
  // Most lines per window that set_max_lines accepts (the count has 24 bits).
  static constexpr uint32_t kMaxLinesLimit = (1u << 24) - 1;

  // `max_lines` per `window` (at least 1 ms); max_lines 0 lets no line
  // through (every line is counted as suppressed). Windows are counted from
  // `start`.
  explicit LogRateLimiter(uint32_t max_lines,
                          absl::Duration window = absl::Seconds(1),
                          absl::Time start = absl::Now());

  // Lines held back and not yet reported.
  struct Suppressed {
    uint64_t lines = 0;
    // From the first of those lines to the time of the report.
    absl::Duration over = absl::ZeroDuration();
  };

  // Asks to write one line at `now`: true to write it, false if it is held
  // back (and counted).
  bool Admit(absl::Time now = absl::Now());

  // Takes the count of lines held back since the last call (0 if none).
  Suppressed TakeSuppressed(absl::Time now = absl::Now());

  // Changes the limit; values above kMaxLinesLimit are clamped.
  void set_max_lines(uint32_t max_lines);
  uint32_t max_lines() const {
    return max_lines_.load(std::memory_order_relaxed);
  }

 private:
  static constexpr int kCountBits = 24;
  static constexpr uint64_t kCountMask = (uint64_t{1} << kCountBits) - 1;

  uint64_t WindowOf(absl::Time now) const;

  const absl::Time start_;
  const int64_t window_ns_;
  std::atomic<uint32_t> max_lines_;
  // (window index << kCountBits) | lines let through in that window.
  std::atomic<uint64_t> state_{0};
  // Lines held back since the last report, and when the first of them was
  // (nanoseconds since start_).
  std::atomic<uint64_t> suppressed_{0};
  std::atomic<int64_t> first_suppressed_ns_{0};
};

}  // namespace posenc

#endif  // POSENC_SERVER_LOG_RATE_LIMITER_H_
