#include "core/table_cache.h"

#include <utility>

namespace posenc {

TableCache::TableCache(Options options) : options_(options) {}

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

bool TableCache::ReserveLocked(uint64_t bytes) {
  if (bytes + inflight_bytes_ > options_.budget_bytes) return false;
  while (resident_bytes_ + inflight_bytes_ + bytes > options_.budget_bytes) {
    EraseLocked(lru_.back());
    ++counters_.evictions;
  }
  return true;
}

void TableCache::EraseLocked(TableSpec spec) {
  auto it = entries_.find(spec);
  resident_bytes_ -= it->second.table->size_bytes();
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
  lru_.push_front(spec);
  families_[FamilyOf(spec)].insert(spec.max_len);
  entries_.emplace(spec, Entry{std::move(table), lru_.begin()});
}

std::shared_ptr<const Table> TableCache::GetIfResident(const TableSpec& spec) {
  std::unique_lock<std::mutex> lock(mu_);
  std::shared_ptr<const Table> table = FindLocked(spec);
  if (table != nullptr) ++counters_.hits;
  return table;
}

std::shared_ptr<const Table> TableCache::GetOrCompute(const TableSpec& spec) {
  std::shared_ptr<Flight> flight;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (auto table = FindLocked(spec)) {
      ++counters_.hits;
      return table;
    }
    ++counters_.misses;
    auto it = flights_.find(spec);
    if (it != flights_.end()) {
      // Another caller is computing this table: wait for its result.
      std::shared_ptr<Flight> theirs = it->second;
      flight_done_.wait(lock, [&theirs] { return theirs->done; });
      return theirs->table;
    }
    if (!Admits(spec) || !ReserveLocked(spec.table_bytes())) return nullptr;
    inflight_bytes_ += spec.table_bytes();
    flight = std::make_shared<Flight>();
    flights_.emplace(spec, flight);
    ++counters_.computations;
  }

  std::shared_ptr<const Table> table;
  try {
    table = Table::Compute(spec, options_.compute_threads);
  } catch (const std::bad_alloc&) {
    table = nullptr;  // waiters and caller fall back to chunked computing
  }

  std::unique_lock<std::mutex> lock(mu_);
  inflight_bytes_ -= spec.table_bytes();
  flights_.erase(spec);
  if (table != nullptr) InsertLocked(table);
  flight->table = table;
  flight->done = true;
  flight_done_.notify_all();
  return table;
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
