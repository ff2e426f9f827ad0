// libFuzzer target: the C++ client's shared-memory table reader
// (MapTensor, client/tensor.h: the answer's dtype and shape, then
// client/shared_mapping.h, or client/mapping_cache.h's kept mappings)
// against files another process could have written. An input is a recipe: a
// file's bytes, the answer a server would give for it (path, offset, size,
// file_bytes, XXH64, owner, inode), and up to a few changes made after the
// answer, as an attacker or a racing eviction would: truncate, grow, overwrite
// bytes, make the name a symlink, a directory or a FIFO, give the file away
// (chown) or a write bit, or lie in the answer's fields. The reader must then
// say DATA_LOSS, UNAVAILABLE, FAILED_PRECONDITION or INTERNAL
// (shared_mapping.h), never crash, hang or hand back bytes that are not the
// ones the answer described; with no change, it must hand back exactly those
// bytes.
//
// Recipe bytes: [0] change mask, [1] answer-field change (bits 0-2), shape
// (bits 3-5: see AnswerShape) and whether a MappingCache mapped and
// checked the file before the changes (bit 7: the reuse of step 6),
// [2..3] offset and [4..5] size (scaled to the file, whole float32s),
// [6..7] the changes' parameter, then the file's bytes (at most
// kMaxFileBytes).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/mapping_cache.h"
#include "client/shared_mapping.h"
#include "client/tensor.h"

namespace {

constexpr size_t kMaxFileBytes = 1 << 16;

// The directory of this process's files (removed at exit; never
// destroyed, so the exit handler can still read it).
const std::string& Directory() {
  static const std::string* const dir = [] {
    char tmpl[] = "/tmp/posenc-fuzz-shm-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) std::abort();
    auto* d = new std::string(tmpl);
    std::atexit([] { std::filesystem::remove_all(Directory()); });
    return d;
  }();
  return *dir;
}

[[noreturn]] void Fail(const std::string& what) {
  std::printf("posenc fuzz (shared_mapping): %s\n", what.c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "posenc fuzz (shared_mapping): %s\n", what.c_str());
  std::abort();
}

void WriteFile(const std::string& path, const uint8_t* data, size_t size) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) Fail(absl::StrCat("cannot create ", path));
  if (size > 0 && write(fd, data, size) != static_cast<ssize_t>(size)) {
    Fail("short write");
  }
  close(fd);
}

// Whether `path` is still the regular file `st` described, read-only,
// holding `body`.
bool SameFile(const std::string& path, const struct stat& st,
              const uint8_t* body, size_t body_size) {
  struct stat now;
  if (lstat(path.c_str(), &now) != 0 || !S_ISREG(now.st_mode) ||
      now.st_ino != st.st_ino || now.st_uid != st.st_uid ||
      (now.st_mode & 0222) != 0 ||
      static_cast<size_t>(now.st_size) != body_size) {
    return false;
  }
  std::string bytes(body_size, '\0');
  const int fd = open(path.c_str(), O_RDONLY);
  const bool read_all = fd >= 0 && pread(fd, bytes.data(), body_size, 0) ==
                                       static_cast<ssize_t>(body_size);
  if (fd >= 0) close(fd);
  return read_all && std::memcmp(bytes.data(), body, body_size) == 0;
}

// The answer's shape for `count` elements: 0 [count], 1 [1, count], 2 a
// shape one element off, 3-7 dims that are powers of two whose product
// may pass 2^64 (what a 64-bit product of the dims would wrap).
void AnswerShape(int mode, uint64_t count, uint16_t param,
                 posenc::v1::SharedMemoryTensor* answer) {
  switch (mode) {
    case 0:
      answer->add_shape(static_cast<uint32_t>(count));
      break;
    case 1:
      answer->add_shape(1);
      answer->add_shape(static_cast<uint32_t>(count));
      break;
    case 2:
      answer->add_shape(static_cast<uint32_t>(count + 1));
      break;
    default:
      for (int k = 0; k < 2 + (param >> 12); ++k) {
        answer->add_shape(uint32_t{1} << (16 + (param + k) % 16));
      }
      break;
  }
}

// The answer's element count, without wrapping, times 4 is size_bytes.
bool ShapeFits(const posenc::v1::SharedMemoryTensor& answer) {
  unsigned __int128 elements = 1;
  for (uint32_t dim : answer.shape()) {
    elements *= dim;
    if (elements > (static_cast<unsigned __int128>(1) << 64)) return false;
  }
  return elements * 4 == answer.size_bytes();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // (A server never publishes an empty file.)
  if (size < 12) return 0;
  const uint8_t changes = data[0];
  const uint8_t field = data[1];
  const uint16_t offset_in = data[2] | data[3] << 8;
  const uint16_t size_in = data[4] | data[5] << 8;
  const uint16_t param = data[6] | data[7] << 8;
  const uint8_t* body = data + 8;
  const size_t body_size = std::min(size - 8, kMaxFileBytes);

  const std::string path = Directory() + "/table";
  std::filesystem::remove_all(path);
  WriteFile(path, body, body_size);
  chmod(path.c_str(), 0444);
  struct stat st;
  if (stat(path.c_str(), &st) != 0) Fail("stat");

  // The answer a server gives for this file: float32 elements, offset and
  // size whole elements within it.
  const uint64_t elements = body_size / 4;
  posenc::v1::SharedMemoryTensor answer;
  answer.set_path(path);
  answer.set_file_bytes(body_size);
  const uint64_t first = elements == 0 ? 0 : offset_in % elements;
  const uint64_t count = elements == 0 ? 0 : size_in % (elements - first + 1);
  answer.set_offset(4 * first);
  answer.set_size_bytes(4 * count);
  answer.set_file_xxh64(XXH64(body, body_size, 0));
  answer.set_owner_uid(st.st_uid);
  answer.set_inode(st.st_ino);
  answer.set_dtype(posenc::v1::DTYPE_FLOAT32);
  AnswerShape((field >> 3) & 7, count, param, &answer);

  std::unique_ptr<posenc::MappingCache> cache;
  if (field & 0x80) {  // mapped and checked before the changes
    cache = std::make_unique<posenc::MappingCache>();
    const absl::StatusOr<posenc::Tensor> before =
        posenc::MapTensor(answer, cache.get());
    (void)before;
  }

  // What changes, after the answer was made (whether the file still is
  // the one the answer describes is read back afterwards: a change may
  // undo another, and a new file may get the old inode number).
  if (changes & 0x01) {  // truncate
    const off_t to = body_size == 0 ? 0 : param % body_size;
    chmod(path.c_str(), 0644);
    if (truncate(path.c_str(), to) != 0) Fail("truncate");
    chmod(path.c_str(), 0444);
  }
  if (changes & 0x02) {  // grow (oversized)
    chmod(path.c_str(), 0644);
    if (truncate(path.c_str(), body_size + 1 + param) != 0) Fail("grow");
    chmod(path.c_str(), 0444);
  }
  if (changes & 0x04) {  // overwrite one byte in place
    chmod(path.c_str(), 0644);
    const int fd = open(path.c_str(), O_RDWR);
    if (fd < 0) Fail("open for the overwrite");
    const uint8_t flipped = static_cast<uint8_t>(~param & 0xff);
    const off_t at = (param >> 8) % body_size;
    uint8_t old = 0;
    if (pread(fd, &old, 1, at) == 1) {  // (not past a truncation)
      if (pwrite(fd, &flipped, 1, at) != 1) Fail("pwrite");
    }
    close(fd);
    chmod(path.c_str(), 0444);
  }
  if (changes & 0x08) {  // the name becomes a symlink to the same bytes
    const std::string real = Directory() + "/real";
    std::filesystem::remove_all(real);
    std::filesystem::rename(path, real);
    std::filesystem::create_symlink(real, path);
  }
  if (changes & 0x10) {  // a directory or a FIFO in the file's place
    std::filesystem::remove_all(path);
    if (param & 1) {
      mkdir(path.c_str(), 0755);
    } else {
      mkfifo(path.c_str(), 0444);
    }
  }
  if (changes & 0x20) {  // a write bit
    chmod(path.c_str(), 0444 | (0222 & (param | 2)));
  }
  if ((changes & 0x40) && geteuid() == 0) {  // another owner
    lchown(path.c_str(), 4242 + (param & 7), -1);
  }
  if (changes & 0x80) {  // the file replaced by another (a new inode)
    const std::string other = Directory() + "/other";
    WriteFile(other, body, body_size);
    chmod(other.c_str(), 0444);
    std::filesystem::remove_all(path);
    std::filesystem::rename(other, path);
  }
  // `changed`: the file is no longer the one the answer describes, or the
  // answer no longer describes it.
  bool changed = !SameFile(path, st, body, body_size);
  switch (field % 8) {  // a lie in the answer
    case 1:  // other bytes of the file: what the answer names, no change
      answer.set_offset(answer.offset() + 4 * (1 + param % 4));
      changed |= answer.offset() + answer.size_bytes() > body_size;
      break;
    case 2:
      // Bad when the bytes leave the file, or its shape no longer holds them
      // (ShapeFits below). A shape one element off (shape mode 2) and 4
      // bytes more make it the honest answer for a longer slice of the same
      // file: the reader must serve it.
      answer.set_size_bytes(answer.size_bytes() + 1 + param);
      changed |= answer.offset() + answer.size_bytes() > body_size;
      break;
    case 3:
      answer.set_file_bytes(uint64_t{param} << (field >> 3));
      changed |= answer.file_bytes() != body_size;
      break;
    case 4:
      answer.set_file_xxh64(answer.file_xxh64() ^ (uint64_t{param} | 1));
      changed = true;
      break;
    case 5:
      answer.set_offset(~uint64_t{0} - param);
      answer.set_size_bytes(uint64_t{param} + 2);
      changed = true;
      break;
    case 6:
      answer.set_path(Directory() + "/missing/table");
      changed = true;
      break;
    default:
      break;
  }

  // What the answer now names, if it names bytes of the file as written.
  const bool in_file = answer.offset() <= body_size &&
                       answer.size_bytes() <= body_size - answer.offset();
  const std::string want =
      in_file
          ? std::string(reinterpret_cast<const char*>(body) + answer.offset(),
                        answer.size_bytes())
          : std::string();
  changed |= !ShapeFits(answer);

  const absl::StatusOr<posenc::Tensor> tensor =
      posenc::MapTensor(answer, cache.get());
  const std::string what = absl::StrCat(
      "changes ", changes, " field ", field % 8, " shape ", (field >> 3) & 7,
      " cached ", (field >> 7), " param ", param);
  if (tensor.ok()) {
    // Never bytes other than those the answer names in the file as the
    // server wrote it, and never for a changed file or an answer whose
    // shape does not hold its bytes.
    if (!in_file || tensor->bytes() != want) {
      Fail("OK with bytes that are not the answer's: " + what);
    }
    if (changed) Fail("OK for a changed file or a bad answer: " + what);
  } else {
    switch (tensor.status().code()) {
      case absl::StatusCode::kDataLoss:
      case absl::StatusCode::kUnavailable:
      case absl::StatusCode::kFailedPrecondition:
      case absl::StatusCode::kInternal:
        break;
      default:
        Fail("undocumented error " + tensor.status().ToString() + ": " + what);
    }
    if (!changed) {
      Fail("an unchanged file refused: " + tensor.status().ToString() + ": " +
           what);
    }
  }
  return 0;
}
