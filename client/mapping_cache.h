// MappingCache: the files a client has mapped and checked, kept for reuse:
// step 6 of docs/shared_memory.md "What a client does", as the Python
// client's _VerifiedMappings. Mapping a 16 MiB table and hashing it costs
// about 3.4 ms here, more than copying it (1.3 ms).
//
// Up to `capacity` entries, the least recently used dropped first, each
// keyed by the answer's (path, inode, file_bytes, file_xxh64) and holding
// the file's mapping, its descriptor (kept open, to see its link count) and
// its st_ctime and st_mtime when its XXH64 was checked. On every
// shared-memory answer:
//   1. every entry whose file is unlinked (fstat of its descriptor:
//      st_nlink == 0; evicted, or the server stopped) is dropped, so the
//      client holds no memory the server's cache no longer counts (beyond
//      the tensors its caller still holds);
//   2. steps 1-2 (open, fstat checks) run as always;
//   3. on a key hit whose file still has the ctime and mtime it had when
//      checked, the descriptor is closed and the tensor shares the kept
//      mapping: no mmap, no XXH64. The server never writes a published file
//      and no other user can; a chmod or a write (root's, the server
//      user's) changes those times;
//   4. else steps 3-4 on the open descriptor, which the new entry keeps (it
//      replaces the key's old entry, if any).
// A failed check (DATA_LOSS, or the file cannot be opened) leaves the
// entries as they are.
//
// Thread-safe: one mutex around the entries, held for none of the file
// operations.
#ifndef POSENC_CLIENT_MAPPING_CACHE_H_
#define POSENC_CLIENT_MAPPING_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "client/shared_mapping.h"
#include "posenc/v1/posenc.pb.h"

namespace posenc {

class MappingCache {
 public:
  static constexpr size_t kDefaultCapacity = 8;

  // capacity 0 keeps nothing: every answer takes steps 1-4 in full.
  explicit MappingCache(size_t capacity = kDefaultCapacity)
      : capacity_(capacity) {}
  ~MappingCache();
  MappingCache(const MappingCache&) = delete;
  MappingCache& operator=(const MappingCache&) = delete;

  // The mapping of `answer`'s tensor, reused or made (SharedMapping::Open's
  // errors).
  absl::StatusOr<std::shared_ptr<const SharedMapping>> Map(
      const v1::SharedMemoryTensor& answer);

  // Entries held now.
  size_t size() const;

 private:
  struct Entry {
    std::string path;
    uint64_t inode = 0;
    uint64_t file_bytes = 0;
    uint64_t file_xxh64 = 0;
    int fd = -1;
    std::shared_ptr<const SharedMapping> mapping;
    // st_ctime and st_mtime (ns) when its XXH64 was checked.
    int64_t ctime_ns = 0, mtime_ns = 0;
  };
  static bool Matches(const Entry& entry, const v1::SharedMemoryTensor& answer);
  // Drops the entries whose file has no name left. Requires mu_.
  void DropUnlinkedLocked();
  // Drops `it`; returns the next. Requires mu_.
  std::list<Entry>::iterator EraseLocked(std::list<Entry>::iterator it);

  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> entries_;  // most recently used first
};

}  // namespace posenc

#endif  // POSENC_CLIENT_MAPPING_CACHE_H_
