// FrequencySketch: a count-min sketch with periodic halving (TinyLFU,
// Einziger et al. 2017; as in Caffeine): estimates how often each key was
// seen recently, in fixed memory whatever the number of distinct keys.
//
// Add(key, n) adds n to the key's count; Estimate(key) is never below the
// true recent count and rarely far above it (depth 4). After `sample_size`
// units have been added, every counter is halved, so old popularity fades
// and a key must keep being asked for to stay "frequent".
//
// Thread-compatible (the cache calls it under its lock).
#ifndef POSENC_CORE_CACHE_FREQUENCY_SKETCH_H_
#define POSENC_CORE_CACHE_FREQUENCY_SKETCH_H_

#include <array>
#include <cstdint>
#include <vector>

namespace posenc {

class FrequencySketch {
 public:
  // width: counters per row, rounded up to a power of two (>= 64).
  // sample_size: units added between two halvings (>= 1).
  FrequencySketch(uint32_t width, uint64_t sample_size);

  void Add(uint64_t key_hash, uint32_t amount = 1);
  uint32_t Estimate(uint64_t key_hash) const;
  // Halvings so far.
  uint64_t resets() const { return resets_; }

 private:
  static constexpr int kDepth = 4;
  // Index of key_hash in row r.
  uint32_t Slot(uint64_t key_hash, int r) const;
  void Halve();

  uint32_t mask_;
  uint64_t sample_size_;
  uint64_t added_ = 0;
  uint64_t resets_ = 0;
  std::array<std::vector<uint32_t>, kDepth> rows_;
};

}  // namespace posenc

#endif  // POSENC_CORE_CACHE_FREQUENCY_SKETCH_H_
