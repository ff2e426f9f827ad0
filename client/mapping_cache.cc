#include "client/mapping_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <iterator>
#include <utility>

#include "absl/status/status.h"

namespace posenc {
namespace {

int64_t Nanoseconds(const struct timespec& t) {
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

// The tensor of `answer` over `mapping` (of the same file): the mapping
// itself when it names the same bytes, else a view of it.
absl::StatusOr<std::shared_ptr<const SharedMapping>> Reuse(
    std::shared_ptr<const SharedMapping> mapping,
    const v1::SharedMemoryTensor& answer) {
  if (mapping->offset() == answer.offset() &&
      mapping->bytes().size() == answer.size_bytes()) {
    return mapping;
  }
  return SharedMapping::View(std::move(mapping), answer);
}

}  // namespace

MappingCache::~MappingCache() {
  for (Entry& entry : entries_) close(entry.fd);
}

bool MappingCache::Matches(const Entry& entry,
                           const v1::SharedMemoryTensor& answer) {
  return entry.inode == answer.inode() &&
         entry.file_bytes == answer.file_bytes() &&
         entry.file_xxh64 == answer.file_xxh64() && entry.path == answer.path();
}

std::list<MappingCache::Entry>::iterator MappingCache::EraseLocked(
    std::list<Entry>::iterator it) {
  close(it->fd);
  return entries_.erase(it);
}

void MappingCache::DropUnlinkedLocked() {
  for (auto it = entries_.begin(); it != entries_.end();) {
    struct stat st;
    if (fstat(it->fd, &st) != 0 || st.st_nlink == 0) {
      it = EraseLocked(it);
    } else {
      ++it;
    }
  }
}

absl::StatusOr<std::shared_ptr<const SharedMapping>> MappingCache::Map(
    const v1::SharedMemoryTensor& answer) {
  if (capacity_ == 0) return SharedMapping::Open(answer);
  std::shared_ptr<const SharedMapping> kept;
  int64_t kept_ctime_ns = 0, kept_mtime_ns = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    DropUnlinkedLocked();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (Matches(*it, answer)) {
        entries_.splice(entries_.begin(), entries_, it);  // most recent
        kept = it->mapping;
        kept_ctime_ns = it->ctime_ns;
        kept_mtime_ns = it->mtime_ns;
        break;
      }
    }
  }
  struct stat st;
  absl::StatusOr<int> fd = SharedMapping::OpenFile(answer, &st);
  if (!fd.ok()) return fd.status();
  const int64_t ctime_ns = Nanoseconds(st.st_ctim);
  const int64_t mtime_ns = Nanoseconds(st.st_mtim);
  if (kept != nullptr && kept_ctime_ns == ctime_ns &&
      kept_mtime_ns == mtime_ns) {
    close(*fd);
    return Reuse(std::move(kept), answer);
  }
  absl::StatusOr<std::shared_ptr<const SharedMapping>> mapping =
      SharedMapping::MapFile(*fd, answer);
  if (!mapping.ok()) {
    close(*fd);
    return mapping;
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (Matches(*it, answer)) {
      EraseLocked(it);
      break;
    }
  }
  entries_.push_front(Entry{answer.path(), answer.inode(), answer.file_bytes(),
                            answer.file_xxh64(), *fd, *mapping, ctime_ns,
                            mtime_ns});
  while (entries_.size() > capacity_) EraseLocked(std::prev(entries_.end()));
  return mapping;
}

size_t MappingCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace posenc
