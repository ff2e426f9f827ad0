// The C++ client's tensor readers (client/tensor.h): a shape must hold the
// answer's bytes exactly, its element count computed without wrapping.
#include "client/tensor.h"

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

}  // namespace
}  // namespace posenc
