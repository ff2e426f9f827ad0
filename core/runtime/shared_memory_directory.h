// SharedMemoryDirectory: the server's own subdirectory of a tmpfs, where
// cached tables live as immutable files that clients on the same host map
// read-only (docs/shared_memory.md).
//
// Open(parent) checks that `parent` is a directory on a tmpfs (not a
// symlink), removes the subdirectories that earlier servers of this user
// left behind when they died (their `.lock` is no longer flock'ed), and
// creates `posenc-<16 random hex digits>`, mode 0755, holding an exclusive
// flock on its `.lock` for its whole life. Every later operation goes
// through the subdirectory's descriptor (openat, renameat2, unlinkat), so a
// rename of the directory or a planted symlink never makes the server read
// or write elsewhere.
//
// A SharedMemoryFile is one table's file: created writable under a
// temporary name with its whole size allocated (a full tmpfs fails there,
// never with a SIGBUS later), written by the caller, then Publish()ed:
// sealed read-only (mprotect, fchmod 0444), digested (XXH64) and renamed to
// its final name. Unlink() removes the name (eviction); the mapping lives
// until the file object is destroyed, so calls still sending from it and
// clients that mapped it keep valid memory.
//
// Thread-safe: the directory's methods may be called concurrently; a file
// is written by one thread before Publish and only read afterwards. Each
// file holds the directory (shared_ptr), which removes its subdirectory when
// the last file and the last holder are gone.
#ifndef POSENC_CORE_RUNTIME_SHARED_MEMORY_DIRECTORY_H_
#define POSENC_CORE_RUNTIME_SHARED_MEMORY_DIRECTORY_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace posenc {

class SharedMemoryFile;

class SharedMemoryDirectory
    : public std::enable_shared_from_this<SharedMemoryDirectory> {
 public:
  // INVALID_ARGUMENT naming `parent` when it is missing, not a directory, a
  // symlink, or not on a tmpfs; INTERNAL when the subdirectory cannot be
  // made.
  static absl::StatusOr<std::shared_ptr<SharedMemoryDirectory>> Open(
      const std::string& parent);
  ~SharedMemoryDirectory();
  SharedMemoryDirectory(const SharedMemoryDirectory&) = delete;
  SharedMemoryDirectory& operator=(const SharedMemoryDirectory&) = delete;

  // Absolute path of the server's own subdirectory.
  const std::string& path() const { return path_; }

  // A new writable file of `bytes` bytes (> 0), mapped, all of it allocated.
  // RESOURCE_EXHAUSTED when the tmpfs is full; INTERNAL on any other
  // failure. Nothing is left behind on failure.
  absl::StatusOr<std::unique_ptr<SharedMemoryFile>> CreateFile(size_t bytes);

  // Unlinks every file and removes the subdirectory (the server stops).
  // Files made afterwards fail to publish, so tables fall back to ordinary
  // memory; mappings stay valid. Idempotent; the destructor does it too.
  void RemoveAll();

  // Subdirectories of dead servers removed by Open (for its caller's log).
  int stale_removed() const { return stale_removed_; }

 private:
  friend class SharedMemoryFile;
  SharedMemoryDirectory(int dir_fd, int lock_fd, std::string name,
                        std::string path, int parent_fd, int stale_removed);

  const int dir_fd_;
  const int lock_fd_;  // flock'ed for the directory's life
  const std::string name_;
  const std::string path_;
  const int parent_fd_;
  const int stale_removed_;
  std::atomic<uint64_t> next_id_{0};
  std::atomic<bool> removed_{false};
};

class SharedMemoryFile {
 public:
  ~SharedMemoryFile();
  SharedMemoryFile(const SharedMemoryFile&) = delete;
  SharedMemoryFile& operator=(const SharedMemoryFile&) = delete;

  // The mapping: writable until Publish, read-only after.
  std::byte* data() const { return data_; }
  size_t size() const { return size_; }

  // Seals the file read-only, digests it and gives it its final name,
  // `table-<name_key as 16 hex>-<XXH64 as 16 hex>`. Call once, after the
  // bytes are written. INTERNAL on failure (the file is then unlinked).
  absl::Status Publish(uint64_t name_key);

  // After Publish: what a client needs to find and check the file.
  const std::string& path() const { return path_; }
  uint64_t xxh64() const { return xxh64_; }
  uint64_t inode() const { return inode_; }
  uint32_t owner_uid() const { return owner_uid_; }

  // Removes the file's name (idempotent). The mapping stays valid.
  void Unlink() const;

 private:
  friend class SharedMemoryDirectory;
  SharedMemoryFile(std::shared_ptr<SharedMemoryDirectory> dir, int fd,
                   std::string name, std::byte* data, size_t size)
      : dir_(std::move(dir)),
        fd_(fd),
        name_(std::move(name)),
        data_(data),
        size_(size) {}

  const std::shared_ptr<SharedMemoryDirectory> dir_;
  int fd_;            // open until Publish
  std::string name_;  // temporary, then final
  std::byte* const data_;
  const size_t size_;
  std::string path_;
  uint64_t xxh64_ = 0;
  uint64_t inode_ = 0;
  uint32_t owner_uid_ = 0;
  mutable std::atomic<bool> unlinked_{false};
};

}  // namespace posenc

#endif  // POSENC_CORE_RUNTIME_SHARED_MEMORY_DIRECTORY_H_
