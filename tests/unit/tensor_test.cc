// The C++ client's tensor readers (client/tensor.h): a shape must hold the
// answer's bytes exactly, its element count computed without wrapping.
#include "client/tensor.h"

#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdio>
#include <string>

#include "gtest/gtest.h"
#include "posenc/v1/posenc.pb.h"

namespace posenc {
namespace {

// Found by fuzz_shared_mapping: 2^22 x 2^23 x 2^24 = 2^69 elements is 0
// in a 64-bit product, so a shared-memory answer of 0 bytes with that
// shape was mapped, and a reader indexing the shape went past the bytes.
TEST(TensorTest, SharedMemoryShapeWhoseProductWraps_InternalNotMapped) {
  v1::SharedMemoryTensor answer;
  answer.set_path("/nonexistent/table");
  answer.set_dtype(v1::DTYPE_FLOAT32);
  answer.add_shape(1u << 22);
  answer.add_shape(1u << 23);
  answer.add_shape(1u << 24);
  answer.set_size_bytes(0);
  answer.set_file_bytes(64);
  const absl::StatusOr<Tensor> tensor = MapTensor(answer);
  EXPECT_EQ(tensor.status().code(), absl::StatusCode::kInternal)
      << tensor.status();
}

// The same product wrapping on the bytes path (a response's Tensor).
TEST(TensorTest, ResponseShapeWhoseProductWraps_InternalNotTaken) {
  v1::Tensor proto;
  proto.set_dtype(v1::DTYPE_FLOAT64);
  proto.add_shape(1u << 31);
  proto.add_shape(1u << 31);
  proto.add_shape(4);  // 2^64 elements of 8 bytes: 0 in 64 bits
  const absl::StatusOr<Tensor> tensor = TakeTensor(&proto);
  EXPECT_EQ(tensor.status().code(), absl::StatusCode::kInternal)
      << tensor.status();
}

TEST(TensorTest, ShapeThatHoldsTheBytes_Taken) {
  v1::Tensor proto;
  proto.set_dtype(v1::DTYPE_FLOAT32);
  proto.add_shape(2);
  proto.add_shape(3);
  proto.set_data(std::string(24, '\0'));
  const absl::StatusOr<Tensor> tensor = TakeTensor(&proto);
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_EQ(tensor->bytes().size(), 24u);
}

// The campaign's shared_mapping finding (fuzz/README.md#campaigns): an
// answer whose size and shape both grew by one element names a longer slice
// of the same file, here all of it, and is an honest answer; the reader
// serves it. With a shape that does not hold the bytes it refuses.
TEST(TensorTest, SizeLieThatIsAnHonestAnswer_Mapped) {
  const std::string path = ::testing::TempDir() + "/tensor_test_table";
  std::remove(path.c_str());
  const char body[4] = {0x00, 0x0c, 0x00, 0x02};
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(body, 1, 4, f), 4u);
  ASSERT_EQ(std::fclose(f), 0);
  ASSERT_EQ(chmod(path.c_str(), 0444), 0);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  v1::SharedMemoryTensor answer;
  answer.set_path(path);
  answer.set_dtype(v1::DTYPE_FLOAT32);
  answer.set_file_bytes(4);
  answer.set_file_xxh64(XXH64(body, 4, 0));
  answer.set_owner_uid(st.st_uid);
  answer.set_inode(st.st_ino);
  answer.set_offset(0);
  answer.set_size_bytes(4);  // 0 bytes grown by 4
  answer.add_shape(1);       // [0] grown by one element
  const absl::StatusOr<Tensor> tensor = MapTensor(answer);
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_EQ(tensor->bytes(), std::string(body, 4));
  answer.set_shape(0, 2);  // 8 bytes' shape for 4 bytes
  EXPECT_FALSE(MapTensor(answer).ok());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace posenc
