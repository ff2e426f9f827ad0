#include "server/log_rate_limiter.h"

#include <algorithm>

namespace posenc {

LogRateLimiter::LogRateLimiter(uint32_t max_lines, absl::Duration window,
                               absl::Time start)
    : start_(start),
      window_ns_(std::max<int64_t>(1000000, absl::ToInt64Nanoseconds(window))),
      max_lines_(std::min(max_lines, kMaxLinesLimit)) {}

void LogRateLimiter::set_max_lines(uint32_t max_lines) {
  max_lines_.store(std::min(max_lines, kMaxLinesLimit),
                   std::memory_order_relaxed);
}

uint64_t LogRateLimiter::WindowOf(absl::Time now) const {
  const int64_t ns = absl::ToInt64Nanoseconds(now - start_);
  // Window 0 is "none yet": the first window counted is 1.
  return ns < 0 ? 1 : static_cast<uint64_t>(ns / window_ns_) + 1;
}

bool LogRateLimiter::Admit(absl::Time now) {
  const uint64_t window = WindowOf(now);
  const uint64_t max = max_lines_.load(std::memory_order_relaxed);
  uint64_t state = state_.load(std::memory_order_relaxed);
  while (true) {
    const uint64_t current = state >> kCountBits;
    const uint64_t lines = state & kCountMask;
    if (window > current && max > 0) {
      // The first line of a new window.
      if (state_.compare_exchange_weak(state, (window << kCountBits) | 1,
                                       std::memory_order_relaxed)) {
        return true;
      }
      continue;  // `state` was reloaded
    }
    // (A thread whose clock reading is older than the current window counts
    // against the current window.)
    if (lines >= max) {
      if (suppressed_.fetch_add(1, std::memory_order_relaxed) == 0) {
        first_suppressed_ns_.store(absl::ToInt64Nanoseconds(now - start_),
                                   std::memory_order_relaxed);
      }
      return false;
    }
    if (state_.compare_exchange_weak(state, state + 1,
                                     std::memory_order_relaxed)) {
      return true;
    }
  }
}

LogRateLimiter::Suppressed LogRateLimiter::TakeSuppressed(absl::Time now) {
  Suppressed taken;
  // Read the time of the first line before taking the count: a line held
  // back after the exchange starts the next batch and sets its own time.
  const int64_t first_ns = first_suppressed_ns_.load(std::memory_order_relaxed);
  taken.lines = suppressed_.exchange(0, std::memory_order_relaxed);
  if (taken.lines > 0) {
    taken.over = std::max(absl::ZeroDuration(),
                          (now - start_) - absl::Nanoseconds(first_ns));
  }
  return taken;
}

}  // namespace posenc
