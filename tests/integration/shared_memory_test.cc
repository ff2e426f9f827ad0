// Shared-memory tables (docs/shared_memory.md) through a real server on
// 127.0.0.1 with --shm_dir in a fresh directory of /dev/shm: the C++ client
// maps the cached table's file and gets the same bits as over gRPC; eviction
// unlinks the file while a mapping stays valid; and the hostile cases a
// same-host user can try -- a renamed or planted directory, a file changed
// in place, a symlink, a full tmpfs, stale directories -- end in the bytes or
// in DATA_LOSS, never in wrong data, and never make the server write outside
// its own directory.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "core/cache/table.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/server_fixture.h"

namespace posenc {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The exact bytes of `spec`'s table, computed locally.
std::string LocalTable(const TableSpec& spec) {
  const std::shared_ptr<const Table> table = Table::Compute(spec, nullptr);
  return std::string(reinterpret_cast<const char*>(table->data()),
                     table->size_bytes());
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// What this process's open descriptors name among the table files of
// `directory` (the server closes its own after publishing: these are the
// client's kept ones), "(deleted)" appended to an unlinked file's.
std::vector<std::string> TableDescriptors(const std::string& directory) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    const std::string target = fs::read_symlink(entry.path(), error);
    if (!error && absl::StartsWith(target, directory + "/table-")) {
      out.push_back(target);
    }
  }
  return out;
}

class SharedMemoryTest : public testing::ServerTest {
 protected:
  void SetUp() override {
    char dir[] = "/dev/shm/posenc-test-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    root_ = parent_ = dir;
    StartShmServer();
  }
  void TearDown() override {
    shm_client_.reset();
    client_.reset();
    server_.reset();
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  void StartShmServer(uint64_t cache_bytes = uint64_t{64} << 20) {
    ServerOptions options = DefaultOptions();
    options.cache_bytes = cache_bytes;
    options.shm_dir = parent_;
    StartServer(options);
    PosencClient::Options shm_options = ClientOptions();
    shm_options.shared_memory = true;
    shm_client_ = std::make_unique<PosencClient>(shm_options);
  }

  std::string ServerDirectory() const { return server_->shm_directory(); }

  std::string root_;    // the test's fresh directory, removed after it
  std::string parent_;  // --shm_dir: root_ or a directory in it
  std::unique_ptr<PosencClient> shm_client_;
};

TEST_F(SharedMemoryTest, GetTable_MapsTheCachedFileWithTheBytesOfGrpc) {
  EXPECT_TRUE(absl::StartsWith(ServerDirectory(), parent_ + "/posenc-"))
      << ServerDirectory();
  for (DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    TableSpec spec = Spec(64, 300);
    spec.dtype = dtype;
    std::string because = "unset";
    absl::StatusOr<Tensor> mapped = shm_client_->GetTable(spec, &because);
    ASSERT_TRUE(mapped.ok()) << mapped.status();
    ASSERT_NE(mapped->mapping, nullptr) << DTypeName(dtype) << ": " << because;
    EXPECT_EQ(because, "");
    EXPECT_TRUE(mapped->data.empty());
    EXPECT_EQ(mapped->shape, (std::vector<uint32_t>{300, 64}));
    EXPECT_EQ(mapped->bytes(), LocalTable(spec)) << DTypeName(dtype);
    absl::StatusOr<Tensor> sent = client_->GetTable(spec);
    ASSERT_TRUE(sent.ok()) << sent.status();
    EXPECT_EQ(sent->mapping, nullptr);
    EXPECT_EQ(mapped->bytes(), sent->bytes()) << DTypeName(dtype);
    // The server's file: read-only to everyone, the server's user's.
    struct stat st;
    ASSERT_EQ(stat(mapped->mapping->path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0444u);
    EXPECT_EQ(st.st_uid, geteuid());
    EXPECT_EQ(fs::path(mapped->mapping->path()).parent_path(),
              ServerDirectory());
  }
  struct stat dir;
  ASSERT_EQ(stat(ServerDirectory().c_str(), &dir), 0);
  EXPECT_EQ(dir.st_mode & 07777, 0755u);
  absl::StatusOr<v1::GetStatsResponse> stats = client_->GetStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->cache().shm_files(), 4u);
  EXPECT_EQ(stats->cache().shm_fallbacks(), 0u);
  EXPECT_EQ(stats->server().shm_directory(), ServerDirectory());
}

TEST_F(SharedMemoryTest, ShorterTableOfACachedFamily_MapsThePrefix) {
  ASSERT_TRUE(shm_client_->GetTable(Spec(32, 1000)).ok());
  absl::StatusOr<Tensor> shorter = shm_client_->GetTable(Spec(32, 10));
  ASSERT_TRUE(shorter.ok()) << shorter.status();
  ASSERT_NE(shorter->mapping, nullptr);
  EXPECT_EQ(shorter->shape, (std::vector<uint32_t>{10, 32}));
  EXPECT_EQ(shorter->bytes(), LocalTable(Spec(32, 10)));
}

TEST_F(SharedMemoryTest, Eviction_UnlinksTheFileAndTheMappingStaysValid) {
  // Room for one 1 MiB table: the second evicts the first.
  StartShmServer(uint64_t{3} << 19);
  const TableSpec first_spec = Spec(256, 1024);
  absl::StatusOr<Tensor> first = shm_client_->GetTable(first_spec);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_NE(first->mapping, nullptr);
  const std::string first_path = first->mapping->path();
  ASSERT_TRUE(fs::exists(first_path));
  absl::StatusOr<Tensor> second = shm_client_->GetTable(Spec(256, 1025));
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_NE(second->mapping, nullptr);
  EXPECT_FALSE(fs::exists(first_path));
  EXPECT_EQ(first->bytes(), LocalTable(first_spec));
  absl::StatusOr<v1::GetStatsResponse> stats = client_->GetStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->cache().evictions(), 1u);
  EXPECT_EQ(stats->cache().shm_files(), 1u);
  // The directory holds exactly the resident table (and the lock).
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(ServerDirectory())) {
    names.push_back(entry.path().filename());
  }
  EXPECT_THAT(
      names,
      ::testing::UnorderedElementsAre(
          ".lock", fs::path(second->mapping->path()).filename().string()));
}

TEST_F(SharedMemoryTest, SecondGetTable_ReusesTheVerifiedMapping) {
  const TableSpec spec = Spec(64, 300);
  absl::StatusOr<Tensor> first = shm_client_->GetTable(spec);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_NE(first->mapping, nullptr);
  absl::StatusOr<Tensor> second = shm_client_->GetTable(spec);
  ASSERT_TRUE(second.ok()) << second.status();
  // The same mapping object: not mapped, not hashed again.
  EXPECT_EQ(second->mapping, first->mapping);
  EXPECT_EQ(second->bytes().data(), first->bytes().data());
  EXPECT_EQ(second->bytes(), LocalTable(spec));
  // A shorter table of the family is a prefix of the same file: a view of
  // the same memory.
  absl::StatusOr<Tensor> shorter = shm_client_->GetTable(Spec(64, 100));
  ASSERT_TRUE(shorter.ok()) << shorter.status();
  ASSERT_NE(shorter->mapping, nullptr);
  EXPECT_EQ(shorter->mapping->path(), first->mapping->path());
  EXPECT_EQ(shorter->bytes().data(), first->bytes().data());
  EXPECT_EQ(shorter->bytes(), LocalTable(Spec(64, 100)));
  // One kept descriptor, of the one file.
  EXPECT_THAT(TableDescriptors(ServerDirectory()),
              ::testing::ElementsAre(first->mapping->path()));
  // A client that keeps no mappings maps the file on every call.
  PosencClient::Options options = ClientOptions();
  options.shared_memory = true;
  options.kept_mappings = 0;
  PosencClient keeps_none(options);
  absl::StatusOr<Tensor> a = keeps_none.GetTable(spec);
  absl::StatusOr<Tensor> b = keeps_none.GetTable(spec);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  ASSERT_NE(a->mapping, nullptr);
  EXPECT_NE(a->mapping, b->mapping);
  EXPECT_NE(a->bytes().data(), b->bytes().data());
  EXPECT_EQ(a->bytes(), b->bytes());
}

TEST_F(SharedMemoryTest, NinthTable_DropsTheLeastRecentlyUsedMapping) {
  // Nine families (d differs), nine files.
  std::vector<Tensor> tables;
  for (uint32_t k = 0; k < 9; ++k) {
    absl::StatusOr<Tensor> t = shm_client_->GetTable(Spec(4 + 2 * k, 16));
    ASSERT_TRUE(t.ok()) << t.status();
    ASSERT_NE(t->mapping, nullptr);
    if (k == 1) {  // the first used again: the second is the least recent
      absl::StatusOr<Tensor> again = shm_client_->GetTable(Spec(4, 16));
      ASSERT_TRUE(again.ok()) << again.status();
    }
    tables.push_back(*std::move(t));
  }
  EXPECT_EQ(TableDescriptors(ServerDirectory()).size(), 8u);
  absl::StatusOr<Tensor> first = shm_client_->GetTable(Spec(4, 16));
  absl::StatusOr<Tensor> second = shm_client_->GetTable(Spec(6, 16));
  ASSERT_TRUE(first.ok() && second.ok()) << first.status() << second.status();
  EXPECT_EQ(first->mapping, tables[0].mapping);
  EXPECT_NE(second->mapping, tables[1].mapping);  // dropped, mapped anew
  EXPECT_EQ(second->bytes(), tables[1].bytes());
}

TEST_F(SharedMemoryTest, Eviction_DropsTheKeptMappingAndItsDescriptor) {
  // Room for one 1 MiB table: the second evicts the first.
  StartShmServer(uint64_t{3} << 19);
  absl::StatusOr<Tensor> first = shm_client_->GetTable(Spec(256, 1024));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_NE(first->mapping, nullptr);
  const std::string first_path = first->mapping->path();
  EXPECT_THAT(TableDescriptors(ServerDirectory()),
              ::testing::ElementsAre(first_path));
  first = absl::InternalError("dropped");  // the caller's tensor is gone
  absl::StatusOr<Tensor> second = shm_client_->GetTable(Spec(256, 1025));
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_NE(second->mapping, nullptr);
  EXPECT_FALSE(fs::exists(first_path));
  // The unlinked file's entry went on this answer: only the new file's
  // descriptor is held, none to a "(deleted)" one.
  EXPECT_THAT(TableDescriptors(ServerDirectory()),
              ::testing::ElementsAre(second->mapping->path()));
  // The evicted table asked again is the prefix of the resident one: a
  // view of its kept mapping.
  absl::StatusOr<Tensor> again = shm_client_->GetTable(Spec(256, 1024));
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_NE(again->mapping, nullptr);
  EXPECT_EQ(again->mapping->path(), second->mapping->path());
  EXPECT_EQ(again->bytes().data(), second->bytes().data());
  EXPECT_EQ(again->bytes(), LocalTable(Spec(256, 1024)));
}

TEST_F(SharedMemoryTest, ReplacedFileWithAKeptMapping_DataLossNeverData) {
  const TableSpec spec = Spec(16, 64);
  absl::StatusOr<Tensor> first = shm_client_->GetTable(spec);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<Tensor> second = shm_client_->GetTable(spec);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_NE(second->mapping, nullptr);
  ASSERT_EQ(second->mapping, first->mapping);  // kept
  const std::string path = first->mapping->path();
  // As in PlantedDirectoryAndFile, with the very same bytes: the server's
  // file is still linked (in the moved directory), so the kept entry stays,
  // and the name now leads to another inode.
  ASSERT_EQ(rename(ServerDirectory().c_str(), (parent_ + "/away").c_str()), 0);
  ASSERT_EQ(mkdir(ServerDirectory().c_str(), 0755), 0);
  std::ofstream(path, std::ios::binary) << LocalTable(spec);
  ASSERT_EQ(chmod(path.c_str(), 0444), 0);
  absl::StatusOr<Tensor> table = shm_client_->GetTable(spec);
  EXPECT_EQ(table.status().code(), absl::StatusCode::kDataLoss)
      << table.status();
  EXPECT_THAT(table.status().message(), HasSubstr("inode"));
  // The server's file is still linked, so its entry stays: with the
  // directory put back, the name leads to it again and it is reused.
  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_EQ(rmdir(ServerDirectory().c_str()), 0);
  ASSERT_EQ(rename((parent_ + "/away").c_str(), ServerDirectory().c_str()), 0);
  absl::StatusOr<Tensor> back = shm_client_->GetTable(spec);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->mapping, first->mapping);
}

TEST_F(SharedMemoryTest, ManyThreads_ShareOneKeptMapping) {
  const TableSpec spec = Spec(32, 200);
  absl::StatusOr<Tensor> first = shm_client_->GetTable(spec);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_NE(first->mapping, nullptr);
  std::atomic<int> same{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        absl::StatusOr<Tensor> got = shm_client_->GetTable(spec);
        if (got.ok() && got->mapping == first->mapping) ++same;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(same.load(), 100);
  EXPECT_EQ(TableDescriptors(ServerDirectory()).size(), 1u);
}

TEST_F(SharedMemoryTest, FileGoneBeforeTheClientOpensIt_BytesAndNoError) {
  const TableSpec spec = Spec(16, 64);
  absl::StatusOr<Tensor> mapped = shm_client_->GetTable(spec);
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  ASSERT_NE(mapped->mapping, nullptr);
  // As if evicted between the answer and the client's open.
  ASSERT_EQ(unlink(mapped->mapping->path().c_str()), 0);
  std::string because;
  absl::StatusOr<Tensor> again = shm_client_->GetTable(spec, &because);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->mapping, nullptr);
  EXPECT_THAT(because, HasSubstr("cannot open"));
  EXPECT_EQ(again->bytes(), LocalTable(spec));
  // Only the file was missing: the client still asks for shared memory.
  absl::StatusOr<Tensor> other = shm_client_->GetTable(Spec(16, 65));
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NE(other->mapping, nullptr);
}

TEST_F(SharedMemoryTest, DirectoryUnreachable_BytesAndTheClientStopsAsking) {
  // What a client on another host, or without the volume, meets: the
  // answer's directory does not exist for it.
  ASSERT_TRUE(shm_client_->GetTable(Spec(16, 64)).ok());
  const std::string moved = parent_ + "/moved";
  ASSERT_EQ(rename(ServerDirectory().c_str(), moved.c_str()), 0);
  std::string because;
  absl::StatusOr<Tensor> table = shm_client_->GetTable(Spec(16, 64), &because);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->mapping, nullptr);
  EXPECT_THAT(because, HasSubstr("cannot open"));
  EXPECT_EQ(table->bytes(), LocalTable(Spec(16, 64)));
  table = shm_client_->GetTable(Spec(24, 66), &because);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->mapping, nullptr);
  EXPECT_EQ(because, "its directory could not be opened before");
  EXPECT_EQ(table->bytes(), LocalTable(Spec(24, 66)));
  // The server kept working in its own directory, wherever it now is.
  EXPECT_EQ(
      std::distance(fs::directory_iterator(moved), fs::directory_iterator()),
      3);  // .lock and two tables
}

TEST_F(SharedMemoryTest, PlantedDirectoryAndFile_DataLossNeverData) {
  const TableSpec spec = Spec(16, 64);
  absl::StatusOr<Tensor> mapped = shm_client_->GetTable(spec);
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  ASSERT_NE(mapped->mapping, nullptr);
  const std::string path = mapped->mapping->path();
  const std::string name = fs::path(path).filename();
  // Another user of a world-writable --shm_dir moves the server's
  // directory away and puts its own in its place, with a read-only file of
  // the same name and size holding other values.
  ASSERT_EQ(rename(ServerDirectory().c_str(), (parent_ + "/away").c_str()), 0);
  ASSERT_EQ(mkdir(ServerDirectory().c_str(), 0755), 0);
  {
    std::string forged = LocalTable(spec);
    forged[0] ^= 1;
    std::ofstream(path, std::ios::binary) << forged;
    ASSERT_EQ(chmod(path.c_str(), 0444), 0);
  }
  absl::StatusOr<Tensor> table = shm_client_->GetTable(spec);
  EXPECT_EQ(table.status().code(), absl::StatusCode::kDataLoss)
      << table.status();
  EXPECT_THAT(table.status().message(), HasSubstr("inode"));
  // A miss: the server writes its new table in its own (moved) directory,
  // never in the planted one.
  ASSERT_TRUE(client_->GetTable(Spec(24, 70)).ok());
  EXPECT_EQ(std::distance(fs::directory_iterator(ServerDirectory()),
                          fs::directory_iterator()),
            1);
  EXPECT_EQ(std::distance(fs::directory_iterator(parent_ + "/away"),
                          fs::directory_iterator()),
            3);
}

TEST_F(SharedMemoryTest, FileChangedInPlace_DataLossNamingTheDigest) {
  const TableSpec spec = Spec(16, 64);
  absl::StatusOr<Tensor> mapped = shm_client_->GetTable(spec);
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  ASSERT_NE(mapped->mapping, nullptr);
  const std::string path = mapped->mapping->path();
  // Only the server's user (or root) can do this: same inode, owner, size
  // and mode, other bytes.
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(100);
    file.put('\x7f');
  }
  // While it is writable: the mode.
  absl::StatusOr<Tensor> table = shm_client_->GetTable(spec);
  EXPECT_EQ(table.status().code(), absl::StatusCode::kDataLoss)
      << table.status();
  EXPECT_THAT(table.status().message(), HasSubstr("writable"));
  // Read-only again: the same client kept the file's mapping, but its ctime
  // and mtime changed, so it is checked whole again, and the digest refuses
  // it.
  ASSERT_EQ(chmod(path.c_str(), 0444), 0);
  table = shm_client_->GetTable(spec);
  EXPECT_EQ(table.status().code(), absl::StatusCode::kDataLoss)
      << table.status();
  EXPECT_THAT(table.status().message(), HasSubstr("XXH64"));
}

TEST_F(SharedMemoryTest, ChmodAfterTheCheck_MappedAndCheckedWholeAgain) {
  const TableSpec spec = Spec(16, 64);
  absl::StatusOr<Tensor> first = shm_client_->GetTable(spec);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_NE(first->mapping, nullptr);
  const std::string path = first->mapping->path();
  // Same bytes, same mode in the end; only the ctime moved.
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  ASSERT_EQ(chmod(path.c_str(), 0444), 0);
  absl::StatusOr<Tensor> second = shm_client_->GetTable(spec);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_NE(second->mapping, nullptr);
  EXPECT_NE(second->mapping, first->mapping);  // mapped and hashed anew
  EXPECT_EQ(second->bytes(), LocalTable(spec));
  // The new check replaced the entry: one descriptor, reused from now on.
  EXPECT_THAT(TableDescriptors(ServerDirectory()),
              ::testing::ElementsAre(path));
  absl::StatusOr<Tensor> third = shm_client_->GetTable(spec);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(third->mapping, second->mapping);
}

TEST_F(SharedMemoryTest, WritableFile_DataLossNamingTheMode) {
  const TableSpec spec = Spec(16, 64);
  absl::StatusOr<Tensor> mapped = shm_client_->GetTable(spec);
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  ASSERT_NE(mapped->mapping, nullptr);
  ASSERT_EQ(chmod(mapped->mapping->path().c_str(), 0666), 0);
  absl::StatusOr<Tensor> table = shm_client_->GetTable(spec);
  EXPECT_EQ(table.status().code(), absl::StatusCode::kDataLoss)
      << table.status();
  EXPECT_THAT(table.status().message(), HasSubstr("writable"));
}

TEST_F(SharedMemoryTest, SymlinkInPlaceOfTheFile_NotFollowedBytesInstead) {
  const TableSpec spec = Spec(16, 64);
  absl::StatusOr<Tensor> mapped = shm_client_->GetTable(spec);
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  ASSERT_NE(mapped->mapping, nullptr);
  const std::string path = mapped->mapping->path();
  const std::string elsewhere = parent_ + "/elsewhere";
  std::ofstream(elsewhere) << "not a table";
  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_EQ(symlink(elsewhere.c_str(), path.c_str()), 0);
  std::string because;
  absl::StatusOr<Tensor> table = shm_client_->GetTable(spec, &because);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->mapping, nullptr);
  EXPECT_THAT(because, HasSubstr("cannot open"));
  EXPECT_EQ(table->bytes(), LocalTable(spec));
}

// Found by fuzz_shared_mapping: open() of a FIFO without O_NONBLOCK waits
// for a writer, so a FIFO planted in the file's place hung the client's
// GetTable forever (ctest's timeout fails this test if it comes back).
TEST_F(SharedMemoryTest, FifoInPlaceOfTheFile_DataLossWithoutBlocking) {
  const TableSpec spec = Spec(16, 64);
  absl::StatusOr<Tensor> mapped = shm_client_->GetTable(spec);
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  ASSERT_NE(mapped->mapping, nullptr);
  const std::string path = mapped->mapping->path();
  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_EQ(mkfifo(path.c_str(), 0444), 0);
  absl::StatusOr<Tensor> table = shm_client_->GetTable(spec);
  EXPECT_EQ(table.status().code(), absl::StatusCode::kDataLoss)
      << table.status();
  EXPECT_THAT(table.status().message(), HasSubstr("not a regular file"));
}

TEST_F(SharedMemoryTest, FullTmpfs_TablesComputedInMemoryAndSentAsBytes) {
  // A 1 MiB tmpfs of its own (mounting needs root; CI runs as root).
  const std::string small = parent_ + "/small";
  ASSERT_EQ(mkdir(small.c_str(), 0755), 0);
  if (mount("tmpfs", small.c_str(), "tmpfs", 0, "size=1m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno)
                 << "): needs root";
  }
  parent_ = small;
  StartShmServer();
  const TableSpec fits = Spec(256, 600);     // 600 KiB
  const TableSpec too_big = Spec(256, 700);  // 700 KiB more: ENOSPC
  absl::StatusOr<Tensor> first = shm_client_->GetTable(fits);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_NE(first->mapping, nullptr);
  TableSpec other = too_big;
  other.base = 500;  // another family: both stay resident
  std::string because;
  absl::StatusOr<Tensor> second = shm_client_->GetTable(other, &because);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->mapping, nullptr);
  EXPECT_THAT(because, HasSubstr("server answered with the bytes"));
  EXPECT_EQ(second->bytes(), LocalTable(other));
  absl::StatusOr<v1::GetStatsResponse> stats = client_->GetStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->cache().shm_fallbacks(), 1u);
  EXPECT_EQ(stats->cache().shm_files(), 1u);
  EXPECT_EQ(stats->cache().entries(), 2u);
  const std::string metrics = server_->RenderMetrics();
  EXPECT_THAT(metrics, HasSubstr("\nposenc_cache_shm_files 1\n"));
  EXPECT_THAT(metrics, HasSubstr("\nposenc_cache_shm_fallbacks_total 1\n"));
  shm_client_.reset();
  first = absl::InternalError("unmapped");
  client_.reset();
  server_.reset();
  EXPECT_EQ(umount(small.c_str()), 0) << std::strerror(errno);
}

TEST_F(SharedMemoryTest, StaleDirectoriesOfDeadServers_RemovedLiveOnesKept) {
  server_.reset();
  const std::string dead = parent_ + "/posenc-00000000000000aa";
  const std::string live = parent_ + "/posenc-00000000000000bb";
  for (const std::string& dir : {dead, live}) {
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    std::ofstream(dir + "/.lock") << "";
    std::ofstream(dir + "/table-1-2") << "stale bytes";
  }
  // A running server holds its lock; the dead one's is free.
  const int held = open((live + "/.lock").c_str(), O_RDONLY);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX), 0);
  StartShmServer();
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live + "/table-1-2"));
  close(held);
}

TEST_F(SharedMemoryTest, Shutdown_RemovesTheDirectoryMappingsStayValid) {
  const TableSpec spec = Spec(64, 128);
  absl::StatusOr<Tensor> mapped = shm_client_->GetTable(spec);
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  ASSERT_NE(mapped->mapping, nullptr);
  const std::string directory = ServerDirectory();
  server_->Shutdown();
  EXPECT_FALSE(fs::exists(directory));
  EXPECT_EQ(mapped->bytes(), LocalTable(spec));
}

TEST_F(SharedMemoryTest, BadShmDir_ServerRefusesToStartNamingTheFlag) {
  server_.reset();
  const std::string missing = parent_ + "/missing";
  const std::string link = parent_ + "/link";
  ASSERT_EQ(symlink(parent_.c_str(), link.c_str()), 0);
  char disk[] = "/var/tmp/posenc-test-XXXXXX";  // not a tmpfs
  ASSERT_NE(mkdtemp(disk), nullptr);
  for (const std::string& dir : {missing, link, std::string(disk)}) {
    ServerOptions options = DefaultOptions();
    options.listen = "127.0.0.1:0";
    options.shm_dir = dir;
    absl::StatusOr<std::unique_ptr<PosencServer>> server =
        PosencServer::Create(options);
    EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument)
        << dir;
    EXPECT_THAT(server.status().message(), HasSubstr("--shm_dir " + dir));
  }
  rmdir(disk);
}

TEST_F(SharedMemoryTest, Cli_MapsTheTableAndSaysSo) {
  const std::string out = parent_ + "/cli.bin";
  const std::string command = absl::StrCat(
      POSENC_CLI_PATH, " table --target 127.0.0.1:", server_->port(),
      " --d 32 --max-len 100 --shared-memory", " -o ", out, " 2>", parent_,
      "/cli.err");
  ASSERT_EQ(std::system(command.c_str()), 0) << ReadFile(parent_ + "/cli.err");
  EXPECT_THAT(ReadFile(parent_ + "/cli.err"),
              HasSubstr("shared memory: mapped " + ServerDirectory()));
  absl::StatusOr<Tensor> sent = client_->GetTable(Spec(32, 100));
  ASSERT_TRUE(sent.ok()) << sent.status();
  // -o FILE.bin: the raw bytes.
  EXPECT_EQ(ReadFile(out), sent->bytes());
}

}  // namespace
}  // namespace posenc
