#include "client/tensor_file_writer.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/npy_reader.h"

namespace posenc {
namespace {

using ::testing::HasSubstr;

Tensor Float32Rows(std::vector<float> values, uint32_t d) {
  Tensor t;
  t.dtype = DType::kFloat32;
  t.shape = {static_cast<uint32_t>(values.size() / d), d};
  t.data.assign(reinterpret_cast<const char*>(values.data()),
                values.size() * sizeof(float));
  return t;
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

TEST(TensorFileWriterTest, NpyInTwoAppends_ReadsBackShapeAndValues) {
  const std::string path = TempPath("two.npy");
  auto writer = TensorFileWriter::Open(path, DType::kFloat32, 3, 2);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append(Float32Rows({1, 2, 3, 4}, 2)).ok());
  ASSERT_TRUE((*writer)->Append(Float32Rows({5, 6}, 2)).ok());
  ASSERT_TRUE((*writer)->Close().ok());

  absl::StatusOr<testing::NpyArray> npy = testing::ReadNpy(path);
  ASSERT_TRUE(npy.ok()) << npy.status();
  EXPECT_EQ(npy->descr, "<f4");
  EXPECT_EQ(npy->shape, (std::vector<uint64_t>{3, 2}));
  ASSERT_EQ(npy->data.size(), 6 * sizeof(float));
  float values[6];
  std::memcpy(values, npy->data.data(), sizeof values);
  EXPECT_EQ(values[0], 1);
  EXPECT_EQ(values[5], 6);
}

TEST(TensorFileWriterTest, Csv_ShortestRoundTripDigits) {
  const std::string path = TempPath("t.csv");
  auto writer = TensorFileWriter::Open(path, DType::kFloat32, 1, 2);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append(Float32Rows({0.1f, -2.5f}, 2)).ok());
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(ReadFile(path), "0.1,-2.5\n");
}

TEST(TensorFileWriterTest, Bin_RawBytesExactly) {
  const std::string path = TempPath("t.bin");
  Tensor rows = Float32Rows({1.5f, 2.5f}, 2);
  auto writer = TensorFileWriter::Open(path, DType::kFloat32, 1, 2);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append(rows).ok());
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(ReadFile(path), rows.data);
}

TEST(TensorFileWriterTest, UnknownExtension_InvalidArgument) {
  auto writer =
      TensorFileWriter::Open(TempPath("t.txt"), DType::kFloat32, 1, 2);
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(writer.status().message(), HasSubstr(".npy, .csv or .bin"));
}

TEST(TensorFileWriterTest, FewerRowsThanAnnounced_FailedPrecondition) {
  auto writer =
      TensorFileWriter::Open(TempPath("short.npy"), DType::kFloat32, 2, 2);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append(Float32Rows({1, 2}, 2)).ok());
  EXPECT_EQ((*writer)->Close().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(TensorFileWriterTest, UnwritablePath_Unavailable) {
  auto writer =
      TensorFileWriter::Open("/nonexistent-dir/x.npy", DType::kFloat32, 1, 2);
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kUnavailable);
}

TEST(TensorTest, HalfAndBFloat16Bits_DecodeExactly) {
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xc000), -2.0f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));  // subnormal
  EXPECT_EQ(BFloat16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(BFloat16ToFloat(0xbf00), -0.5f);
}

}  // namespace
}  // namespace posenc
