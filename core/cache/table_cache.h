// TableCache: computed tables under a byte budget, with an admission rule
// that keeps tables in steady use resident through floods of one-off specs,
// and single-flight computation (as in groupcache).
//
// A lookup is served by a resident table of the same family (every spec field
// but max_len) whose max_len is at least the requested one: rows do not depend
// on max_len.
//
// What a miss costs follows what the call asks for (Find decides), by ski
// rental: computing rows one by one costs about kRentRatio times a row of a
// whole-table computation, so a miss computes the whole table once the rows
// its family needs one by one -- those computed so far outside the cache
// (RecordRowsComputed, decaying) plus this call's -- reach
// max_len / kRentRatio. A GetTable or a stream over most of the table buys at
// once; a few rows of a large table never do until the family has paid about
// the table's cost in rented rows. The total work is then at most about twice
// what the best choice in hindsight would have cost.
//
// Admission (TinyLFU, Einziger et al.): a table computed whole enters the
// cache if it fits in free space, or if its family has been asked for more
// often recently than every resident table it would evict (a count-min
// sketch of every lookup, halved periodically). Otherwise it is not computed
// for the cache at all (ComputeWhole returns nullptr) and the caller computes
// just its answer. So one-off specs never displace tables in steady use, and
// a new family that keeps being asked for wins its place.
//
// Memory: resident + in-flight bytes never exceed the budget. An evicted table
// that calls still hold stays alive and is charged to Options::pinned until
// the last holder lets go.
//
// Thread-safe. ComputeWhole blocks its caller (a compute-pool thread) while it
// computes, or while another caller computes the same table.
#ifndef POSENC_CORE_CACHE_TABLE_CACHE_H_
#define POSENC_CORE_CACHE_TABLE_CACHE_H_

#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "core/cache/frequency_sketch.h"
#include "core/cache/table.h"
#include "core/runtime/byte_budget.h"
#include "core/runtime/compute_pool.h"
#include "core/runtime/shared_memory_directory.h"
#include "core/spec/table_spec.h"

namespace posenc {

class TableCache {
 public:
  // Rows computed one by one for a family, as a fraction of its max_len,
  // after which its next miss computes the table whole (see above).
  static constexpr uint32_t kRentRatio = 8;

  struct Options {
    uint64_t budget_bytes = uint64_t{512} << 20;
    // Splits one table's computation across its idle threads; null: the
    // computing thread alone. Not owned.
    ComputePool* pool = nullptr;
    // Charged with evicted tables that calls still hold; null: not counted.
    // Not owned.
    ByteBudget* pinned = nullptr;
    // Where tables computed whole live as files that same-host clients map
    // (Table::Compute); eviction unlinks them. Null: ordinary memory. Not
    // owned.
    SharedMemoryDirectory* shm = nullptr;
  };

  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t evictions = 0;
    uint64_t resident_bytes = 0;
    uint64_t entries = 0;
    uint64_t budget_bytes = 0;
    uint64_t computations = 0;
    // Whole-table computations admitted into the cache, and refused (the
    // table did not fit, or was asked for less often than what it would
    // evict).
    uint64_t admissions = 0;
    uint64_t rejections = 0;
    // Rows computed for calls outside the cache (RecordRowsComputed).
    uint64_t rows_computed_outside = 0;
    // Resident tables held in Options::shm's files, and whole tables
    // computed in ordinary memory because the directory refused a file.
    uint64_t shm_files = 0;
    uint64_t shm_fallbacks = 0;
  };

  // What Find says about one call.
  struct Lookup {
    // The resident table covering the spec (a hit), else null.
    std::shared_ptr<const Table> table;
    // On a miss: compute the table whole with ComputeWhole; else compute
    // just the rows the call needs.
    bool compute_whole = false;
    // With compute_whole: an earlier call is already computing (or queued
    // to compute) this table; ComputeWhole will wait for its result rather
    // than add work.
    bool joins_flight = false;
  };

  explicit TableCache(Options options);
  TableCache(const TableCache&) = delete;
  TableCache& operator=(const TableCache&) = delete;

  // Counts one call that needs `rows_wanted` rows of `spec` (spec.max_len for
  // the whole table) as a hit or a miss, records it in the frequency sketch,
  // and on a miss decides how to compute. Never computes or waits.
  // A lookup with compute_whole must be followed by exactly one
  // ComputeWhole(spec) or CancelWhole(spec).
  // Precondition: ValidateSpec(spec) is OK.
  Lookup Find(const TableSpec& spec, uint64_t rows_wanted);

  // The table covering `spec`: resident, or computed whole (once, whatever
  // the number of concurrent callers) if the admission rule lets it in;
  // nullptr when it is not admitted (the caller computes what it needs).
  // Does not count hits or misses (Find did).
  std::shared_ptr<const Table> ComputeWhole(const TableSpec& spec);

  // A call that Find told to compute whole will not (it was refused).
  void CancelWhole(const TableSpec& spec);

  // The resident table covering `spec`, counted as a hit; nullptr (and no
  // count) when none is resident. Never computes or waits, and unlike Find
  // leaves the frequency sketch alone: an observer (tests of admission and
  // eviction) sees what is resident without changing what gets admitted.
  std::shared_ptr<const Table> GetIfResident(const TableSpec& spec);

  // Reports `rows` rows of `spec` computed for a call outside the cache.
  void RecordRowsComputed(const TableSpec& spec, uint64_t rows);

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
  static uint64_t FamilyHash(const TableSpec& spec);
  std::shared_ptr<const Table> FindLocked(const TableSpec& spec)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes room for `spec`'s table if the admission rule lets it in, evicting
  // least recently used tables; false (evicting nothing) if not.
  bool AdmitLocked(const TableSpec& spec) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes `spec` by value: callers pass references into lru_, whose node
  // this frees.
  void EraseLocked(TableSpec spec) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void InsertLocked(std::shared_ptr<const Table> table)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UnqueueWholeLocked(const TableSpec& spec)
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
  // Calls told to compute a table whole that have not yet called
  // ComputeWhole (queued for a compute thread), per spec.
  absl::flat_hash_map<TableSpec, uint32_t> queued_whole_ ABSL_GUARDED_BY(mu_);
  // Recent lookups per family (admission), and recent rows computed outside
  // the cache per family (rent).
  FrequencySketch frequency_ ABSL_GUARDED_BY(mu_);
  FrequencySketch rent_ ABSL_GUARDED_BY(mu_);
  uint64_t resident_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t inflight_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  Stats counters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace posenc

#endif  // POSENC_CORE_CACHE_TABLE_CACHE_H_
