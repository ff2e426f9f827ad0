#include "core/cache/frequency_sketch.h"

#include <algorithm>
#include <limits>

namespace posenc {
namespace {

// Odd 64-bit multipliers (from SplitMix64 / Murmur3 finalisers): one
// independent-enough hash per row by multiply-shift.
constexpr uint64_t kSeeds[4] = {0x9E3779B97F4A7C15ull, 0xBF58476D1CE4E5B9ull,
                                0x94D049BB133111EBull, 0xFF51AFD7ED558CCDull};

}  // namespace

FrequencySketch::FrequencySketch(uint32_t width, uint64_t sample_size)
    : sample_size_(std::max<uint64_t>(sample_size, 1)) {
  uint32_t w = 64;
  while (w < width && w < (1u << 30)) w <<= 1;
  mask_ = w - 1;
  for (auto& row : rows_) row.assign(w, 0);
}

uint32_t FrequencySketch::Slot(uint64_t key_hash, int r) const {
  const uint64_t h = (key_hash ^ (key_hash >> 29)) * kSeeds[r];
  return static_cast<uint32_t>(h >> 32) & mask_;
}

void FrequencySketch::Add(uint64_t key_hash, uint32_t amount) {
  for (int r = 0; r < kDepth; ++r) {
    uint32_t& c = rows_[r][Slot(key_hash, r)];
    c = static_cast<uint32_t>(std::min<uint64_t>(
        uint64_t{c} + amount, std::numeric_limits<uint32_t>::max()));
  }
  added_ += amount;
  if (added_ >= sample_size_) Halve();
}

uint32_t FrequencySketch::Estimate(uint64_t key_hash) const {
  uint32_t least = std::numeric_limits<uint32_t>::max();
  for (int r = 0; r < kDepth; ++r) {
    least = std::min(least, rows_[r][Slot(key_hash, r)]);
  }
  return least;
}

void FrequencySketch::Halve() {
  for (auto& row : rows_) {
    for (uint32_t& c : row) c >>= 1;
  }
  added_ = 0;
  ++resets_;
}

}  // namespace posenc
