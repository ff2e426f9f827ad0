#include "core/cache/table_cache.h"

#include <utility>
#include <vector>

#include "absl/hash/hash.h"

namespace posenc {
namespace {

// Sketch sizes: 4 x 4096 counters each (64 KiB). The frequency sketch halves
// after 10 lookups per counter (Caffeine's sample size); the rent sketch
// after 2^28 rows, minutes of per-row work on this machine.
constexpr uint32_t kSketchWidth = 4096;
constexpr uint64_t kFrequencySample = 10 * uint64_t{kSketchWidth};
constexpr uint64_t kRentSample = uint64_t{1} << 28;

}  // namespace

TableCache::TableCache(Options options)
    : options_(options),
      frequency_(kSketchWidth, kFrequencySample),
      rent_(kSketchWidth, kRentSample) {}

uint64_t TableCache::FamilyHash(const TableSpec& spec) {
  return absl::Hash<TableSpec>()(FamilyOf(spec));
}

std::shared_ptr<const Table> TableCache::FindLocked(const TableSpec& spec) {
  auto family = families_.find(FamilyOf(spec));
  if (family == families_.end()) return nullptr;
  auto it = family->second.lower_bound(spec.max_len);
  if (it == family->second.end()) return nullptr;
  TableSpec key = spec;
  key.max_len = *it;
  Entry& entry = entries_.at(key);
  lru_.splice(lru_.begin(), lru_, entry.lru_pos);
  return entry.table;
}

bool TableCache::AdmitLocked(const TableSpec& spec) {
  const uint64_t bytes = spec.table_bytes();
  if (!Admits(spec) || bytes + inflight_bytes_ > options_.budget_bytes) {
    return false;
  }
  // Shorter tables of this family go anyway (InsertLocked drops them); then
  // the least recently used tables that would have to go.
  uint64_t freed = 0;
  if (auto family = families_.find(FamilyOf(spec)); family != families_.end()) {
    for (uint32_t max_len : family->second) {
      TableSpec shorter = spec;
      shorter.max_len = max_len;
      freed += shorter.table_bytes();
    }
  }
  const uint32_t frequency = frequency_.Estimate(FamilyHash(spec));
  std::vector<TableSpec> victims;
  for (auto it = lru_.rbegin();
       resident_bytes_ - freed + inflight_bytes_ + bytes >
       options_.budget_bytes;
       ++it) {
    if (it->SameFamily(spec)) continue;  // counted above
    if (frequency_.Estimate(FamilyHash(*it)) >= frequency) {
      return false;  // asked for at least as often as the newcomer: it stays
    }
    victims.push_back(*it);
    freed += it->table_bytes();
  }
  for (const TableSpec& victim : victims) {
    EraseLocked(victim);
    ++counters_.evictions;
  }
  return true;
}

void TableCache::EraseLocked(TableSpec spec) {
  auto it = entries_.find(spec);
  const std::shared_ptr<const Table>& table = it->second.table;
  resident_bytes_ -= table->size_bytes();
  // Evicted: its file goes from the directory now, while holders (calls
  // sending from it, clients that mapped it) keep the bytes.
  if (table->shared_memory() != nullptr) --counters_.shm_files;
  table->Unpublish();
  // A call still sends from it: its memory now lives outside the budget.
  if (options_.pinned != nullptr && table.use_count() > 1) {
    table->ChargeUntilReleased(options_.pinned);
  }
  lru_.erase(it->second.lru_pos);
  entries_.erase(it);
  auto family = families_.find(FamilyOf(spec));
  family->second.erase(spec.max_len);
  if (family->second.empty()) families_.erase(family);
}

void TableCache::InsertLocked(std::shared_ptr<const Table> table) {
  const TableSpec& spec = table->spec();
  // Shorter tables of the same family are now redundant: drop them.
  auto family = families_.find(FamilyOf(spec));
  while (family != families_.end() && !family->second.empty() &&
         *family->second.begin() < spec.max_len) {
    TableSpec shorter = spec;
    shorter.max_len = *family->second.begin();
    EraseLocked(shorter);
    ++counters_.evictions;
    family = families_.find(FamilyOf(spec));
  }
  resident_bytes_ += table->size_bytes();
  if (table->shared_memory() != nullptr) ++counters_.shm_files;
  lru_.push_front(spec);
  families_[FamilyOf(spec)].insert(spec.max_len);
  entries_.emplace(spec, Entry{std::move(table), lru_.begin()});
}

TableCache::Lookup TableCache::Find(const TableSpec& spec,
                                    uint64_t rows_wanted) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t family = FamilyHash(spec);
  frequency_.Add(family);
  Lookup lookup;
  lookup.table = FindLocked(spec);
  if (lookup.table != nullptr) {
    ++counters_.hits;
    return lookup;
  }
  ++counters_.misses;
  const uint64_t rent = uint64_t{rent_.Estimate(family)} + rows_wanted;
  lookup.compute_whole = Admits(spec) && kRentRatio * rent >= spec.max_len;
  if (lookup.compute_whole) {
    uint32_t& queued = queued_whole_[spec];
    lookup.joins_flight = queued > 0 || flights_.contains(spec);
    ++queued;
  }
  return lookup;
}

void TableCache::UnqueueWholeLocked(const TableSpec& spec) {
  auto it = queued_whole_.find(spec);
  if (it == queued_whole_.end()) return;  // a ComputeWhole without a Find
  if (--it->second == 0) queued_whole_.erase(it);
}

void TableCache::CancelWhole(const TableSpec& spec) {
  std::unique_lock<std::mutex> lock(mu_);
  UnqueueWholeLocked(spec);
}

std::shared_ptr<const Table> TableCache::ComputeWhole(const TableSpec& spec) {
  std::shared_ptr<Flight> flight;
  {
    std::unique_lock<std::mutex> lock(mu_);
    UnqueueWholeLocked(spec);
    if (auto table = FindLocked(spec)) return table;
    auto it = flights_.find(spec);
    if (it != flights_.end()) {
      // Another caller is computing this table: wait for its result.
      std::shared_ptr<Flight> theirs = it->second;
      flight_done_.wait(lock, [&theirs] { return theirs->done; });
      return theirs->table;
    }
    if (!AdmitLocked(spec)) {
      ++counters_.rejections;
      return nullptr;
    }
    ++counters_.admissions;
    inflight_bytes_ += spec.table_bytes();
    flight = std::make_shared<Flight>();
    flights_.emplace(spec, flight);
    ++counters_.computations;
  }

  std::shared_ptr<const Table> table;
  absl::Status shm_refused;
  try {
    table = Table::Compute(spec, options_.pool, options_.shm, &shm_refused);
  } catch (const std::bad_alloc&) {
    table = nullptr;  // waiters and caller fall back to computing their rows
  }

  std::unique_lock<std::mutex> lock(mu_);
  inflight_bytes_ -= spec.table_bytes();
  if (!shm_refused.ok()) ++counters_.shm_fallbacks;
  flights_.erase(spec);
  if (table != nullptr) InsertLocked(table);
  flight->table = table;
  flight->done = true;
  flight_done_.notify_all();
  return table;
}

std::shared_ptr<const Table> TableCache::GetIfResident(const TableSpec& spec) {
  std::unique_lock<std::mutex> lock(mu_);
  std::shared_ptr<const Table> table = FindLocked(spec);
  if (table != nullptr) ++counters_.hits;
  return table;
}

void TableCache::RecordRowsComputed(const TableSpec& spec, uint64_t rows) {
  std::unique_lock<std::mutex> lock(mu_);
  rent_.Add(FamilyHash(spec),
            static_cast<uint32_t>(std::min<uint64_t>(rows, UINT32_MAX)));
  counters_.rows_computed_outside += rows;
}

TableCache::Stats TableCache::GetStats() const {
  std::unique_lock<std::mutex> lock(mu_);
  Stats stats = counters_;
  stats.resident_bytes = resident_bytes_;
  stats.entries = entries_.size();
  stats.budget_bytes = options_.budget_bytes;
  return stats;
}

}  // namespace posenc
