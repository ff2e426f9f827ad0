#include "client/shared_mapping.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace posenc {
namespace {

absl::Status CheckRange(const v1::SharedMemoryTensor& answer) {
  if (answer.offset() > answer.file_bytes() ||
      answer.size_bytes() > answer.file_bytes() - answer.offset() ||
      answer.file_bytes() == 0) {
    return absl::InternalError(absl::StrFormat(
        "shared memory answer for %s: offset %d + size %d past the file's %d "
        "bytes",
        answer.path(), answer.offset(), answer.size_bytes(),
        answer.file_bytes()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int> SharedMapping::OpenFile(
    const v1::SharedMemoryTensor& answer, struct stat* st) {
  if (absl::Status range = CheckRange(answer); !range.ok()) return range;
  const std::string& path = answer.path();
  // O_NONBLOCK: a FIFO planted in the file's place would block open()
  // until a writer came; it opens at once and fails the S_ISREG check.
  const int fd =
      open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    const std::string directory = path.substr(0, path.rfind('/') + 1);
    const int dir_fd = open(directory.empty() ? "." : directory.c_str(),
                            O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("shared memory: cannot open ", directory, ": ",
                       std::strerror(errno)));
    }
    close(dir_fd);
    return absl::UnavailableError(absl::StrCat("shared memory: cannot open ",
                                               path, ": ", std::strerror(err)));
  }
  if (fstat(fd, st) != 0) {
    const int err = errno;
    close(fd);
    return absl::UnavailableError(absl::StrCat("shared memory: cannot fstat ",
                                               path, ": ", std::strerror(err)));
  }
  std::string mismatch;
  if (!S_ISREG(st->st_mode)) {
    mismatch = "not a regular file";
  } else if (st->st_uid != answer.owner_uid()) {
    mismatch = absl::StrFormat("owner uid %d, the server said %d", st->st_uid,
                               answer.owner_uid());
  } else if (st->st_ino != answer.inode()) {
    mismatch = absl::StrFormat("inode %d, the server said %d", st->st_ino,
                               answer.inode());
  } else if (static_cast<uint64_t>(st->st_size) != answer.file_bytes()) {
    mismatch = absl::StrFormat("size %d bytes, the server said %d", st->st_size,
                               answer.file_bytes());
  } else if ((st->st_mode & 0222) != 0) {
    mismatch = absl::StrFormat("writable (mode %04o)", st->st_mode & 07777);
  }
  if (!mismatch.empty()) {
    close(fd);
    return absl::DataLossError(
        absl::StrCat("shared memory: ", path,
                     " is not the server's table file: ", mismatch));
  }
  return fd;
}

absl::StatusOr<std::shared_ptr<const SharedMapping>> SharedMapping::MapFile(
    int fd, const v1::SharedMemoryTensor& answer) {
  if (absl::Status range = CheckRange(answer); !range.ok()) return range;
  const std::string& path = answer.path();
  const size_t length = answer.file_bytes();
  void* base =
      mmap(nullptr, length, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (base == MAP_FAILED) {
    return absl::UnavailableError(absl::StrCat(
        "shared memory: cannot map ", path, ": ", std::strerror(errno)));
  }
  const uint64_t digest = XXH64(base, length, 0);
  if (digest != answer.file_xxh64()) {
    munmap(base, length);
    return absl::DataLossError(absl::StrFormat(
        "shared memory: %s has XXH64 %016x, the server said %016x", path,
        digest, answer.file_xxh64()));
  }
  const absl::string_view bytes(
      static_cast<const char*>(base) + answer.offset(), answer.size_bytes());
  return std::shared_ptr<const SharedMapping>(
      new SharedMapping(base, length, bytes, path));
}

absl::StatusOr<std::shared_ptr<const SharedMapping>> SharedMapping::Open(
    const v1::SharedMemoryTensor& answer) {
  struct stat st;
  absl::StatusOr<int> fd = OpenFile(answer, &st);
  if (!fd.ok()) return fd.status();
  absl::StatusOr<std::shared_ptr<const SharedMapping>> mapping =
      MapFile(*fd, answer);
  close(*fd);
  return mapping;
}

absl::StatusOr<std::shared_ptr<const SharedMapping>> SharedMapping::View(
    std::shared_ptr<const SharedMapping> whole,
    const v1::SharedMemoryTensor& answer) {
  if (absl::Status range = CheckRange(answer); !range.ok()) return range;
  if (answer.file_bytes() != whole->length_) {
    return absl::InternalError(absl::StrFormat(
        "shared memory answer for %s: a file of %d bytes, mapped as %d",
        answer.path(), answer.file_bytes(), whole->length_));
  }
  void* const base = whole->base_;
  const size_t length = whole->length_;
  const absl::string_view bytes(
      static_cast<const char*>(base) + answer.offset(), answer.size_bytes());
  return std::shared_ptr<const SharedMapping>(
      new SharedMapping(base, length, bytes, answer.path(), std::move(whole)));
}

SharedMapping::~SharedMapping() {
  if (owner_ == nullptr) munmap(base_, length_);
}

}  // namespace posenc
