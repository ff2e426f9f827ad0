// SharedMapping: a read-only mapping of a table file in a posenc server's
// shared-memory directory, opened and checked as docs/shared_memory.md
// says: opened without following symlinks, its fstat matched against the
// server's answer (regular file, owner, inode, size, no write bit), mapped
// read-only, and its XXH64 checked over every byte before anyone reads it.
//
// Thread-safe once made (read-only). The mapping lives until the last
// shared_ptr goes, whatever happens to the file's name (eviction).
#ifndef POSENC_CLIENT_SHARED_MAPPING_H_
#define POSENC_CLIENT_SHARED_MAPPING_H_

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "posenc/v1/posenc.pb.h"

namespace posenc {

class SharedMapping {
 public:
  // The file `answer` names, mapped and checked (steps 1-4). Errors:
  // - FAILED_PRECONDITION: the file's directory cannot be opened (this
  //   process is not on the server's host, or lacks the volume): the
  //   caller should stop asking for shared memory.
  // - UNAVAILABLE: the file cannot be opened (just evicted, permissions):
  //   the caller asks for the bytes instead.
  // - DATA_LOSS, naming what differed: the file is not the one the server
  //   described (owner, inode, size, mode) or its bytes do not match
  //   file_xxh64. Never data.
  // - INTERNAL: the answer is inconsistent (offset + size past the file).
  static absl::StatusOr<std::shared_ptr<const SharedMapping>> Open(
      const v1::SharedMemoryTensor& answer);

  // Steps 1-2 alone: the open descriptor (O_RDONLY | O_CLOEXEC) of the file
  // `answer` names, its fstat in `st`; Open's errors but for the digest.
  static absl::StatusOr<int> OpenFile(const v1::SharedMemoryTensor& answer,
                                      struct stat* st);
  // Steps 3-4 on a descriptor from OpenFile (left open); Open's errors.
  static absl::StatusOr<std::shared_ptr<const SharedMapping>> MapFile(
      int fd, const v1::SharedMemoryTensor& answer);

  // The bytes [offset, offset + size_bytes) that `answer` names in the file
  // `whole` maps (mapped for another answer about the same file), sharing
  // that mapping. INTERNAL when they lie past it.
  static absl::StatusOr<std::shared_ptr<const SharedMapping>> View(
      std::shared_ptr<const SharedMapping> whole,
      const v1::SharedMemoryTensor& answer);

  ~SharedMapping();
  SharedMapping(const SharedMapping&) = delete;
  SharedMapping& operator=(const SharedMapping&) = delete;

  // The tensor's bytes: [offset, offset + size_bytes) of the file.
  absl::string_view bytes() const { return bytes_; }
  const std::string& path() const { return path_; }
  // Where bytes() starts in the file.
  uint64_t offset() const {
    return static_cast<uint64_t>(bytes_.data() - static_cast<char*>(base_));
  }

 private:
  SharedMapping(void* base, size_t length, absl::string_view bytes,
                std::string path,
                std::shared_ptr<const SharedMapping> owner = nullptr)
      : base_(base),
        length_(length),
        bytes_(bytes),
        path_(std::move(path)),
        owner_(std::move(owner)) {}

  void* const base_;
  const size_t length_;
  const absl::string_view bytes_;
  const std::string path_;
  // Set for a View: the mapping it shares (and unmaps), else null.
  const std::shared_ptr<const SharedMapping> owner_;
};

}  // namespace posenc

#endif  // POSENC_CLIENT_SHARED_MAPPING_H_
