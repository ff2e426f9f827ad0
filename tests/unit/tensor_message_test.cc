// server/tensor_message.h: the buffers the server computes rows into.
#include "server/tensor_message.h"

#include <grpcpp/grpcpp.h>  // its static initialiser sets up gRPC's C++ layer
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace posenc {
namespace {

// Regression (fuzz_stream_rows and fuzz_stream_batches, issue 36's
// campaign): a stream message of up to 23 bytes was an inlined slice whose
// bytes start one byte into the slice struct, and the kernels' 16-bit
// stores into a one-row float16 grid table were misaligned (UBSan).
TEST(NewSliceTest, AnySize_HeapBytesAlignedForEveryDtype) {
  // gRPC's C++ layer, which grpc::Slice calls, initialised as a server's
  // or a client's is (the channel is never used: no connection).
  const std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials());
  for (size_t bytes : {size_t{1}, size_t{2}, size_t{8}, size_t{22}, size_t{23},
                       size_t{24}, size_t{64}, size_t{4096}}) {
    grpc::Slice slice = NewSlice(bytes);
    ASSERT_EQ(slice.size(), bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(MutableData(slice)) % 8, 0u)
        << bytes << " bytes";
    // Writable in place: every byte.
    for (size_t k = 0; k < bytes; ++k) MutableData(slice)[k] = std::byte{7};
    EXPECT_EQ(slice.begin()[bytes - 1], 7);
  }
}

}  // namespace
}  // namespace posenc
