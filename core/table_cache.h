// TableCache: computed tables under a byte budget, least recently used
// evicted first, with single-flight computation (as in groupcache).
//
// A lookup is served by a resident table of the same family (every spec field
// but max_len) whose max_len is at least the requested one: rows do not depend
// on max_len. Concurrent lookups of the same missing spec compute it once;
// the others wait for that result. A table larger than the budget, or one that
// cannot be reserved because in-flight computations already hold the budget,
// is not cached: GetOrCompute returns nullptr and the caller computes the rows
// it needs itself, chunk by chunk.
//
// Memory: resident + in-flight bytes never exceed the budget. Evicted tables
// stay alive while a caller still holds their shared_ptr.
//
// Thread-safe.
#ifndef POSENC_CORE_TABLE_CACHE_H_
#define POSENC_CORE_TABLE_CACHE_H_

#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "core/table.h"
#include "core/table_spec.h"

namespace posenc {

class TableCache {
 public:
  struct Options {
    uint64_t budget_bytes = uint64_t{512} << 20;
    // Threads used to compute one table.
    int compute_threads = 1;
  };

  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t evictions = 0;
    uint64_t resident_bytes = 0;
    uint64_t entries = 0;
    uint64_t budget_bytes = 0;
    uint64_t computations = 0;
  };

  explicit TableCache(Options options);
  TableCache(const TableCache&) = delete;
  TableCache& operator=(const TableCache&) = delete;

  // A table covering rows [0, spec.max_len) of `spec` (its max_len may be
  // larger), computed once if missing; nullptr when it cannot be cached (see
  // above). Precondition: ValidateSpec(spec) is OK.
  std::shared_ptr<const Table> GetOrCompute(const TableSpec& spec);

  // The resident table covering `spec`, counted as a hit; nullptr (and no
  // count) when none is resident. Never computes or waits.
  std::shared_ptr<const Table> GetIfResident(const TableSpec& spec);

  // Whether a table of this size may ever be cached.
  bool Admits(const TableSpec& spec) const {
    return spec.table_bytes() <= options_.budget_bytes;
  }

  Stats GetStats() const;

 private:
  struct Entry {
    std::shared_ptr<const Table> table;
    std::list<TableSpec>::iterator lru_pos;
  };
  struct Flight {
    bool done = false;
    std::shared_ptr<const Table> table;
  };

  // Family key: the spec with max_len = 0.
  static TableSpec FamilyOf(TableSpec spec) {
    spec.max_len = 0;
    return spec;
  }
  std::shared_ptr<const Table> FindLocked(const TableSpec& spec)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Evicts LRU entries until `bytes` more fit; false if they cannot.
  bool ReserveLocked(uint64_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes `spec` by value: callers pass references into lru_, whose node
  // this frees.
  void EraseLocked(TableSpec spec) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void InsertLocked(std::shared_ptr<const Table> table)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  // std::mutex rather than absl::Mutex: ThreadSanitizer sees through it
  // (Debian's Abseil is not built with TSan annotations).
  mutable std::mutex mu_;
  std::condition_variable flight_done_;  // a Flight became done
  absl::flat_hash_map<TableSpec, Entry> entries_ ABSL_GUARDED_BY(mu_);
  // Resident max_lens of each family, for serving shorter tables.
  absl::flat_hash_map<TableSpec, std::set<uint32_t>> families_
      ABSL_GUARDED_BY(mu_);
  std::list<TableSpec> lru_ ABSL_GUARDED_BY(mu_);  // front = most recent
  absl::flat_hash_map<TableSpec, std::shared_ptr<Flight>> flights_
      ABSL_GUARDED_BY(mu_);
  uint64_t resident_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t inflight_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  Stats counters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace posenc

#endif  // POSENC_CORE_TABLE_CACHE_H_
