// RoPE tables through a real server on 127.0.0.1 (issue 14): cached under
// their own key, the RoPE layouts are the compact table's values expanded,
// every RPC returns the same rows, a one-row call computes one row, and a
// bad parameter is INVALID_ARGUMENT naming the field. Bit-exactness against
// an independent MPFR reference lives in tests/numerics.
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/server_fixture.h"

namespace posenc::testing {
namespace {

using ::testing::HasSubstr;

class RopeTest : public ServerTest {
 protected:
  // Llama 3.1's scaling with a small M, so every band falls inside d = 16.
  static TableSpec Llama3(uint32_t max_len, Layout layout) {
    TableSpec spec = Spec(16, max_len);
    spec.base = 500000;
    spec.layout = layout;
    auto rope = std::make_shared<RopeScaling>();
    rope->type = RopeType::kLlama3;
    rope->factor = 8;
    rope->low_freq_factor = 1;
    rope->high_freq_factor = 4;
    rope->original_max_position_embeddings = 32;
    spec.rope = rope;
    return spec;
  }
  // YaRN with its attention factor 0.1 ln 4 + 1.
  static TableSpec Yarn(uint32_t max_len, Layout layout, DType dtype) {
    TableSpec spec = Spec(16, max_len);
    spec.layout = layout;
    spec.dtype = dtype;
    auto rope = std::make_shared<RopeScaling>();
    rope->type = RopeType::kYarn;
    rope->factor = 4;
    rope->original_max_position_embeddings = 64;
    spec.rope = rope;
    return spec;
  }
  v1::GetStatsResponse Stats() {
    absl::StatusOr<v1::GetStatsResponse> stats = client_->GetStats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? *stats : v1::GetStatsResponse();
  }
  static std::string Element(const Tensor& t, size_t row, size_t col,
                             size_t size) {
    const size_t width = t.shape.back();
    return t.data.substr((row * width + col) * size, size);
  }
};

TEST_F(RopeTest, RopeSpecs_CachedUnderTheirOwnKey) {
  const TableSpec llama = Llama3(64, Layout::kConcatCosSin);
  ASSERT_TRUE(client_->GetTable(llama).ok());
  ASSERT_TRUE(client_->GetTable(llama).ok());
  v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.cache().computations(), 1u);
  EXPECT_EQ(stats.cache().hits(), 1u);
  TableSpec other = llama;
  auto rope = std::make_shared<RopeScaling>(*llama.rope);
  rope->factor = 16;
  other.rope = rope;
  TableSpec plain = llama;
  plain.rope = nullptr;
  absl::StatusOr<Tensor> a = client_->GetTable(llama);
  absl::StatusOr<Tensor> b = client_->GetTable(other);
  absl::StatusOr<Tensor> c = client_->GetTable(plain);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(Stats().cache().computations(), 3u);
  EXPECT_NE(a->data, b->data);
  EXPECT_NE(a->data, c->data);
}

TEST_F(RopeTest, RopeLayouts_CompactValuesEachTwice) {
  for (DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    const size_t size = DTypeSize(dtype);
    absl::StatusOr<Tensor> compact =
        client_->GetTable(Yarn(300, Layout::kConcatCosSin, dtype));
    absl::StatusOr<Tensor> half =
        client_->GetTable(Yarn(300, Layout::kRotateHalf, dtype));
    absl::StatusOr<Tensor> pairs =
        client_->GetTable(Yarn(300, Layout::kInterleavedPairs, dtype));
    ASSERT_TRUE(compact.ok() && half.ok() && pairs.ok());
    EXPECT_EQ(compact->shape, (std::vector<uint32_t>{300, 16}));
    EXPECT_EQ(half->shape, (std::vector<uint32_t>{300, 32}));
    EXPECT_EQ(pairs->shape, (std::vector<uint32_t>{300, 32}));
    for (size_t row : {size_t{0}, size_t{1}, size_t{17}, size_t{299}}) {
      for (size_t i = 0; i < 8; ++i) {
        const std::string cos = Element(*compact, row, i, size);
        const std::string sin = Element(*compact, row, 8 + i, size);
        EXPECT_EQ(Element(*half, row, i, size), cos);
        EXPECT_EQ(Element(*half, row, 8 + i, size), cos);
        EXPECT_EQ(Element(*half, row, 16 + i, size), sin);
        EXPECT_EQ(Element(*half, row, 24 + i, size), sin);
        EXPECT_EQ(Element(*pairs, row, 2 * i, size), cos);
        EXPECT_EQ(Element(*pairs, row, 2 * i + 1, size), cos);
        EXPECT_EQ(Element(*pairs, row, 16 + 2 * i, size), sin);
        EXPECT_EQ(Element(*pairs, row, 16 + 2 * i + 1, size), sin);
      }
    }
  }
}

TEST_F(RopeTest, EveryRpc_SameRowsAsGetTable) {
  const TableSpec spec = Llama3(600, Layout::kRotateHalf);
  absl::StatusOr<Tensor> table = client_->GetTable(spec);
  ASSERT_TRUE(table.ok()) << table.status();
  const size_t row_bytes = spec.row_bytes();
  std::string streamed;
  ASSERT_TRUE(client_
                  ->StreamBatches(spec, 0, std::nullopt, 64,
                                  [&](uint32_t, const Tensor& batch) {
                                    streamed += batch.data;
                                    return absl::OkStatus();
                                  })
                  .ok());
  EXPECT_EQ(streamed, table->data);
  // A different family spelling (another server, nothing cached): GetRows
  // computes its rows one by one.
  StartServer();
  absl::StatusOr<Tensor> rows = client_->GetRows(spec, {599, 0, 300, 1});
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->shape, (std::vector<uint32_t>{4, 32}));
  const uint32_t positions[] = {599, 0, 300, 1};
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(rows->data.substr(k * row_bytes, row_bytes),
              table->data.substr(positions[k] * row_bytes, row_bytes))
        << "position " << positions[k];
  }
  EXPECT_EQ(Stats().cache().computations(), 0u);
}

TEST_F(RopeTest, OneRowOfHugeRopeTable_ComputesOneRow) {
  TableSpec spec = Llama3(1u << 24, Layout::kRotateHalf);  // 2 GiB
  spec.dtype = DType::kBFloat16;
  absl::StatusOr<Tensor> row = client_->GetRows(spec, {(1u << 24) - 1});
  ASSERT_TRUE(row.ok()) << row.status();
  const v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.cache().computations(), 0u);
  EXPECT_EQ(stats.cache().rows_computed_outside(), 1u);
}

TEST_F(RopeTest, BadParameter_InvalidArgumentNamingField) {
  struct Case {
    std::function<void(RopeScaling&)> edit;
    const char* field;
  };
  const Case cases[] = {
      {[](RopeScaling& r) { r.factor = 0; }, "spec.rope.factor"},
      {[](RopeScaling& r) { r.factor = std::nan(""); }, "spec.rope.factor"},
      {[](RopeScaling& r) { r.low_freq_factor = 5; },
       "spec.rope.low_freq_factor"},
      {[](RopeScaling& r) { r.beta_fast = 2; }, "spec.rope.beta_fast"},
      {[](RopeScaling& r) { r.original_max_position_embeddings = 0; },
       "spec.rope.original_max_position_embeddings"},
      {[](RopeScaling& r) {
         r.type = RopeType::kLongRope;
         r.low_freq_factor = r.high_freq_factor = r.factor = 0;
         r.short_factor.assign(3, 1.0);
         r.long_factor.assign(8, 1.0);
       },
       "spec.rope.short_factor"},
      {[](RopeScaling& r) {
         r.type = RopeType::kYarn;
         r.low_freq_factor = r.high_freq_factor = 0;
         r.attention_factor = 3;
       },
       "spec.rope.attention_factor"},
  };
  for (const Case& c : cases) {
    TableSpec spec = Llama3(8, Layout::kRotateHalf);
    auto rope = std::make_shared<RopeScaling>(*spec.rope);
    c.edit(*rope);
    spec.rope = rope;
    absl::Status status = client_->GetTable(spec).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.field));
  }
  TableSpec t2t = Llama3(8, Layout::kRotateHalf);
  t2t.frequency = Frequency::kT2T;
  absl::Status status = client_->GetTable(t2t).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("spec.rope"));
}

}  // namespace
}  // namespace posenc::testing
