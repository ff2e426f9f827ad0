#include "core/runtime/shared_memory_directory.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace posenc {
namespace {

constexpr char kPrefix[] = "posenc-";
constexpr char kLockName[] = ".lock";
constexpr size_t kRandomHexDigits = 16;

std::string Errno(int err) { return std::strerror(err); }

// Removes every entry of the directory `dir_fd` that is not a directory.
void RemoveFiles(int dir_fd) {
  const int list_fd = dup(dir_fd);
  if (list_fd < 0) return;
  DIR* list = fdopendir(list_fd);
  if (list == nullptr) {
    close(list_fd);
    return;
  }
  while (const dirent* entry = readdir(list)) {
    if (std::strcmp(entry->d_name, ".") == 0 ||
        std::strcmp(entry->d_name, "..") == 0) {
      continue;
    }
    unlinkat(dir_fd, entry->d_name, 0);  // a directory fails: left alone
  }
  closedir(list);  // closes list_fd
}

// Removes the subdirectories of `parent_fd` that servers of this user left
// when they died: named posenc-<hex>, ours, with a .lock no one holds.
// Directories being set up are not matched (they are renamed to posenc-*
// only once their lock is held). Returns how many it removed.
int RemoveStaleSubdirectories(int parent_fd) {
  const int list_fd = dup(parent_fd);
  if (list_fd < 0) return 0;
  DIR* list = fdopendir(list_fd);
  if (list == nullptr) {
    close(list_fd);
    return 0;
  }
  int removed = 0;
  while (const dirent* entry = readdir(list)) {
    const char* name = entry->d_name;
    if (!absl::StartsWith(name, kPrefix) ||
        std::strlen(name) != sizeof(kPrefix) - 1 + kRandomHexDigits) {
      continue;
    }
    struct stat st;
    if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
      continue;
    }
    const int sub_fd = openat(parent_fd, name,
                              O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub_fd < 0) continue;
    const int lock_fd =
        openat(sub_fd, kLockName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (lock_fd >= 0 && flock(lock_fd, LOCK_EX | LOCK_NB) == 0) {
      RemoveFiles(sub_fd);
      if (unlinkat(parent_fd, name, AT_REMOVEDIR) == 0) ++removed;
    }
    if (lock_fd >= 0) close(lock_fd);
    close(sub_fd);
  }
  closedir(list);
  return removed;
}

absl::StatusOr<std::string> RandomHex() {
  uint64_t bits = 0;
  if (getrandom(&bits, sizeof(bits), 0) != sizeof(bits)) {
    return absl::InternalError(absl::StrCat("getrandom: ", Errno(errno)));
  }
  return absl::StrFormat("%016x", bits);
}

}  // namespace

absl::StatusOr<std::shared_ptr<SharedMemoryDirectory>>
SharedMemoryDirectory::Open(const std::string& parent) {
  // Errors begin with the directory; the caller names where it came from
  // (the server prefixes its flag).
  const std::string& subject = parent;
  const int parent_fd =
      open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (parent_fd < 0) {
    const int err = errno;
    if (err == ELOOP) {
      return absl::InvalidArgumentError(absl::StrCat(
          subject, " is a symlink; give the directory itself (a tmpfs)"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        subject, ": ", Errno(err), " (an existing directory on a tmpfs)"));
  }
  auto fail = [parent_fd](absl::Status status) {
    close(parent_fd);
    return status;
  };
  struct statfs fs;
  if (fstatfs(parent_fd, &fs) != 0) {
    return fail(absl::InvalidArgumentError(
        absl::StrCat(subject, ": statfs: ", Errno(errno))));
  }
  if (static_cast<unsigned long>(fs.f_type) != TMPFS_MAGIC) {
    return fail(absl::InvalidArgumentError(absl::StrFormat(
        "%s is not on a tmpfs (filesystem type 0x%x); shared-memory tables "
        "need memory, e.g. /dev/shm or a Kubernetes emptyDir with medium: "
        "Memory",
        subject, static_cast<unsigned long>(fs.f_type))));
  }
  std::string base = parent;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  if (base[0] != '/') {
    char cwd[4096];
    if (getcwd(cwd, sizeof(cwd)) == nullptr) {
      return fail(absl::InternalError(
          absl::StrCat(subject, ": getcwd: ", Errno(errno))));
    }
    base = absl::StrCat(cwd, "/", base);
  }
  const int stale_removed = RemoveStaleSubdirectories(parent_fd);

  absl::StatusOr<std::string> hex = RandomHex();
  if (!hex.ok()) return fail(hex.status());
  const std::string setup_name = absl::StrCat(".setup-", *hex);
  const std::string name = absl::StrCat(kPrefix, *hex);
  auto internal = [&](const char* what) {
    return absl::InternalError(
        absl::StrCat(subject, ": ", what, ": ", Errno(errno)));
  };
  if (mkdirat(parent_fd, setup_name.c_str(), 0700) != 0) {
    return fail(internal("mkdir"));
  }
  const int dir_fd = openat(parent_fd, setup_name.c_str(),
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (dir_fd < 0 || fstat(dir_fd, &st) != 0 || st.st_uid != geteuid()) {
    absl::Status s = internal("open the new subdirectory");
    if (dir_fd >= 0) close(dir_fd);
    unlinkat(parent_fd, setup_name.c_str(), AT_REMOVEDIR);
    return fail(s);
  }
  const int lock_fd =
      openat(dir_fd, kLockName,
             O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
  if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB) != 0 ||
      fchmod(dir_fd, 0755) != 0 ||
      renameat2(parent_fd, setup_name.c_str(), parent_fd, name.c_str(),
                RENAME_NOREPLACE) != 0) {
    absl::Status s = internal("set up the subdirectory");
    if (lock_fd >= 0) close(lock_fd);
    unlinkat(dir_fd, kLockName, 0);
    close(dir_fd);
    unlinkat(parent_fd, setup_name.c_str(), AT_REMOVEDIR);
    return fail(s);
  }
  return std::shared_ptr<SharedMemoryDirectory>(new SharedMemoryDirectory(
      dir_fd, lock_fd, name, absl::StrCat(base, "/", name), parent_fd,
      stale_removed));
}

SharedMemoryDirectory::SharedMemoryDirectory(int dir_fd, int lock_fd,
                                             std::string name, std::string path,
                                             int parent_fd, int stale_removed)
    : dir_fd_(dir_fd),
      lock_fd_(lock_fd),
      name_(std::move(name)),
      path_(std::move(path)),
      parent_fd_(parent_fd),
      stale_removed_(stale_removed) {}

void SharedMemoryDirectory::RemoveAll() {
  if (removed_.exchange(true, std::memory_order_acq_rel)) return;
  RemoveFiles(dir_fd_);  // the tables' files and the .lock
  // Remove our name only if it still names our directory (someone may have
  // renamed it and put another there).
  struct stat ours, named;
  if (fstat(dir_fd_, &ours) == 0 &&
      fstatat(parent_fd_, name_.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 &&
      ours.st_ino == named.st_ino && ours.st_dev == named.st_dev) {
    unlinkat(parent_fd_, name_.c_str(), AT_REMOVEDIR);
  }
}

SharedMemoryDirectory::~SharedMemoryDirectory() {
  RemoveAll();
  close(lock_fd_);
  close(dir_fd_);
  close(parent_fd_);
}

absl::StatusOr<std::unique_ptr<SharedMemoryFile>>
SharedMemoryDirectory::CreateFile(size_t bytes) {
  const std::string name =
      absl::StrCat("tmp-", next_id_.fetch_add(1, std::memory_order_relaxed));
  const int fd =
      openat(dir_fd_, name.c_str(),
             O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("shared memory: create ", name, ": ", Errno(errno)));
  }
  auto fail = [&](absl::Status status) {
    close(fd);
    unlinkat(dir_fd_, name.c_str(), 0);
    return status;
  };
  // Allocates every page now: a full tmpfs answers ENOSPC here rather than
  // SIGBUS on a later write through the mapping.
  if (const int err = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
      err != 0) {
    const std::string what = absl::StrFormat(
        "shared memory: allocate %d bytes in %s: %s", bytes, path_, Errno(err));
    return fail(err == ENOSPC ? absl::ResourceExhaustedError(what)
                              : absl::InternalError(what));
  }
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_POPULATE, fd, 0);
  if (data == MAP_FAILED) {
    return fail(absl::InternalError(
        absl::StrCat("shared memory: mmap: ", Errno(errno))));
  }
  return std::unique_ptr<SharedMemoryFile>(new SharedMemoryFile(
      shared_from_this(), fd, name, static_cast<std::byte*>(data), bytes));
}

absl::Status SharedMemoryFile::Publish(uint64_t name_key) {
  auto fail = [this](const char* what) {
    const absl::Status s = absl::InternalError(
        absl::StrCat("shared memory: ", what, " ", name_, ": ", Errno(errno)));
    Unlink();
    return s;
  };
  if (mprotect(data_, size_, PROT_READ) != 0) return fail("mprotect");
  if (fchmod(fd_, 0444) != 0) return fail("fchmod");
  xxh64_ = XXH64(data_, size_, 0);
  std::string final_name =
      absl::StrFormat("table-%016x-%016x", name_key, xxh64_);
  if (renameat2(dir_->dir_fd_, name_.c_str(), dir_->dir_fd_, final_name.c_str(),
                RENAME_NOREPLACE) != 0) {
    if (errno != EEXIST) return fail("rename");
    // The same spec and bytes are still published (an evicted table's
    // recomputation racing its unlink): a distinct name.
    absl::StrAppend(&final_name, "-",
                    dir_->next_id_.fetch_add(1, std::memory_order_relaxed));
    if (renameat2(dir_->dir_fd_, name_.c_str(), dir_->dir_fd_,
                  final_name.c_str(), RENAME_NOREPLACE) != 0) {
      return fail("rename");
    }
  }
  name_ = std::move(final_name);
  struct stat st;
  if (fstat(fd_, &st) != 0) return fail("fstat");
  inode_ = st.st_ino;
  owner_uid_ = st.st_uid;
  close(fd_);
  fd_ = -1;
  path_ = absl::StrCat(dir_->path(), "/", name_);
  return absl::OkStatus();
}

void SharedMemoryFile::Unlink() const {
  if (!unlinked_.exchange(true, std::memory_order_acq_rel)) {
    unlinkat(dir_->dir_fd_, name_.c_str(), 0);
  }
}

SharedMemoryFile::~SharedMemoryFile() {
  Unlink();
  munmap(data_, size_);
  if (fd_ >= 0) close(fd_);
}

}  // namespace posenc
