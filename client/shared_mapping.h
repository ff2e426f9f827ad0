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

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "posenc/v1/posenc.pb.h"

namespace posenc {

class SharedMapping {
 public:
  // The file `answer` names, mapped and checked. Errors:
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
  ~SharedMapping();
  SharedMapping(const SharedMapping&) = delete;
  SharedMapping& operator=(const SharedMapping&) = delete;

  // The tensor's bytes: [offset, offset + size_bytes) of the file.
  absl::string_view bytes() const { return bytes_; }
  const std::string& path() const { return path_; }

 private:
  SharedMapping(void* base, size_t length, absl::string_view bytes,
                std::string path)
      : base_(base), length_(length), bytes_(bytes), path_(std::move(path)) {}

  void* const base_;
  const size_t length_;
  const absl::string_view bytes_;
  const std::string path_;
};

}  // namespace posenc

#endif  // POSENC_CLIENT_SHARED_MAPPING_H_
