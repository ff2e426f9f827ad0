// The Encode RPC (real-valued points) against a real server on 127.0.0.1:
// the same bytes as core, the same rows as GetRows at integer points, and
// the exact status code and field of every refusal.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/plan/real_encoding_plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/encoding_specs.h"
#include "tests/integration/server_fixture.h"

namespace posenc::testing {
namespace {

using ::testing::HasSubstr;

class EncodeTest : public ServerTest {};

std::vector<std::byte> Local(const EncodingSpec& spec,
                             const std::vector<double>& xs) {
  absl::StatusOr<RealEncodingPlan> plan = RealEncodingPlan::Create(spec, {});
  EXPECT_TRUE(plan.ok()) << plan.status();
  std::vector<std::byte> out(xs.size() / spec.coordinates * spec.row_bytes());
  plan->ComputeRows(xs, out.data());
  return out;
}

TEST_F(EncodeTest, FluxTimesteps_SameBytesAsCore) {
  std::vector<double> ts;
  for (int k = 0; k < 1024; ++k) ts.push_back(k / 1023.0);
  for (DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    EncodingSpec spec = FluxTimestepSpec();
    spec.dtype = dtype;
    absl::StatusOr<Tensor> got = client_->Encode(spec, ts);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->dtype, dtype);
    EXPECT_EQ(got->shape, (std::vector<uint32_t>{1024, 256}));
    const std::vector<std::byte> want = Local(spec, ts);
    ASSERT_EQ(got->data.size(), want.size());
    EXPECT_EQ(std::memcmp(got->data.data(), want.data(), want.size()), 0);
  }
}

TEST_F(EncodeTest, IntegerPoints_SameRowsAsGetRows) {
  EncodingSpec spec;
  spec.dim = 64;
  spec.layout = Layout::kConcatSinCos;
  spec.shift = 1;  // tensor2tensor's frequencies
  TableSpec table = Spec(64, 5000);
  table.layout = Layout::kConcatSinCos;
  table.frequency = Frequency::kT2T;
  const std::vector<uint32_t> pos = {0, 1, 7, 4999};
  absl::StatusOr<Tensor> rows = client_->GetRows(table, pos);
  ASSERT_TRUE(rows.ok()) << rows.status();
  absl::StatusOr<Tensor> points =
      client_->Encode(spec, std::vector<double>(pos.begin(), pos.end()));
  ASSERT_TRUE(points.ok()) << points.status();
  EXPECT_EQ(points->shape, rows->shape);
  EXPECT_EQ(points->data, rows->data);
}

TEST_F(EncodeTest, WorkedExample_AtTwo) {
  EncodingSpec spec;
  spec.dim = 4;
  absl::StatusOr<Tensor> got = client_->Encode(spec, {2.0});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_NEAR(got->ValueAt(0), 0.9093, 1e-4);
  EXPECT_NEAR(got->ValueAt(1), -0.4161, 1e-4);
  EXPECT_NEAR(got->ValueAt(2), 0.0200, 1e-4);
  EXPECT_NEAR(got->ValueAt(3), 0.9998, 1e-4);
}

TEST_F(EncodeTest, NerfCoordinates_WidthAndInputs) {
  const EncodingSpec spec = NerfSpec(3, 10, 0, 8, true);
  const std::vector<double> xs = {0.1, -0.2, 0.3, 0.5, 0.25, 1.0};
  absl::StatusOr<Tensor> got = client_->Encode(spec, xs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->shape, (std::vector<uint32_t>{2, 63}));
  EXPECT_FLOAT_EQ(got->ValueAt(60), 0.1f);  // the inputs, last
  EXPECT_FLOAT_EQ(got->ValueAt(63 + 62), 1.0f);
  // 0.5 * 2 pi * 2^0 = pi: sin is exactly +0, cos exactly -1.
  EXPECT_EQ(got->ValueAt(63 + 0), 0.0);
  EXPECT_FALSE(std::signbit(got->ValueAt(63 + 0)));
  EXPECT_EQ(got->ValueAt(63 + 30), -1.0);
  EXPECT_EQ(
      std::memcmp(got->data.data(), Local(spec, xs).data(), got->data.size()),
      0);
}

void ExpectRefused(const absl::StatusOr<Tensor>& got, absl::StatusCode code,
                   const std::string& text) {
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), code) << got.status();
  EXPECT_THAT(std::string(got.status().message()), HasSubstr(text));
}

TEST_F(EncodeTest, BadSpecs_InvalidArgumentNamingTheField) {
  EncodingSpec spec;
  spec.dim = 7;
  ExpectRefused(client_->Encode(spec, {1}), absl::StatusCode::kInvalidArgument,
                "spec.dim: 7 is odd");
  spec.dim = 8;
  spec.layout = Layout::kRotateHalf;
  ExpectRefused(client_->Encode(spec, {1}), absl::StatusCode::kInvalidArgument,
                "spec.layout");
  spec.layout = Layout::kInterleaved;
  spec.shift = 3.9999;
  ExpectRefused(client_->Encode(spec, {1}), absl::StatusCode::kInvalidArgument,
                "spec.shift");
  spec.shift = 0;
  spec.dim = 70000;
  ExpectRefused(client_->Encode(spec, {1}), absl::StatusCode::kInvalidArgument,
                "over the limit 65536 (posenc_server --max_d)");
}

TEST_F(EncodeTest, BadPositions_NameTheEntryOrTheLimit) {
  EncodingSpec spec = FluxTimestepSpec();
  ExpectRefused(client_->Encode(spec, {0.5, 17000}),
                absl::StatusCode::kOutOfRange, "positions[1] = 17000");
  ExpectRefused(client_->Encode(spec, {0.5, NAN}),
                absl::StatusCode::kOutOfRange, "positions[1]");
  ExpectRefused(client_->Encode(spec, {}), absl::StatusCode::kInvalidArgument,
                "positions: empty");
  ExpectRefused(client_->Encode(spec, std::vector<double>(65537, 0.5)),
                absl::StatusCode::kInvalidArgument, "--max_rows_per_request");
  spec.coordinates = 2;
  ExpectRefused(client_->Encode(spec, {1, 2, 3}),
                absl::StatusCode::kInvalidArgument, "spec.coordinates = 2");
}

TEST_F(EncodeTest, AnswerOverMessageLimit_ResourceExhausted) {
  ServerOptions options = DefaultOptions();
  options.max_message_bytes = 1 << 20;
  StartServer(options);
  EncodingSpec spec;
  spec.dim = 4096;  // 16 KiB a row: 65 points are over 1 MiB
  ExpectRefused(client_->Encode(spec, std::vector<double>(65, 0.5)),
                absl::StatusCode::kResourceExhausted,
                "over the limit of 1048576 bytes a message; ");
  ExpectRefused(client_->Encode(spec, std::vector<double>(65, 0.5)),
                absl::StatusCode::kResourceExhausted,
                "(posenc_server --max_message_bytes)");
  EXPECT_TRUE(client_->Encode(spec, std::vector<double>(63, 0.5)).ok());
}

// The fuzz campaign's Encode finding (fuzz/README.md#campaigns): 58 bytes
// whose 32,768 octave angles at x = 1.5 all lie within ~1e-192 of 3 pi,
// each a Ziv loop to 1,024 bits of MPFR: 5.9 s of a server core before
// SlowPathBudget (core/plan/slow_path_budget.h). Now refused within its
// units, and the server answers the next call.
TEST_F(EncodeTest,
       OctavesNearQuarterTurns_ResourceExhaustedNamingTheExactWork) {
  EncodingSpec spec;
  spec.dtype = DType::kFloat16;
  spec.layout = Layout::kConcatSinCos;
  spec.scheme = FrequencyScheme::kOctaves;
  spec.num_frequencies = 32768;
  spec.min_freq_exp = -1.3202428078732969e-192;
  spec.include_input = true;
  ExpectRefused(
      client_->Encode(spec, {0.50012207031227263, -3.3176763878166904, 1.5}),
      absl::StatusCode::kResourceExhausted, "units of exact (MPFR) evaluation");
  // The same spec at points whose angles are not crowded: served.
  absl::StatusOr<Tensor> spread = client_->Encode(spec, {0.3, 0.7});
  ASSERT_TRUE(spread.ok()) << spread.status();
  EXPECT_EQ(spread->shape, (std::vector<uint32_t>{2, 65537}));
}

TEST_F(EncodeTest, Stats_CountEncodeCalls) {
  EncodingSpec spec;
  spec.dim = 8;
  ASSERT_TRUE(client_->Encode(spec, {1.5}).ok());
  EXPECT_FALSE(client_->Encode(spec, {}).ok());
  absl::StatusOr<v1::GetStatsResponse> stats = client_->GetStats();
  ASSERT_TRUE(stats.ok());
  ASSERT_EQ(stats->methods_size(), 7);
  EXPECT_EQ(stats->methods(4).method(), "/posenc.v1.PositionalEncoding/Encode");
  EXPECT_EQ(stats->methods(4).ok(), 1u);
  EXPECT_EQ(stats->methods(4).errors(), 1u);
  // Nothing is cached.
  EXPECT_EQ(stats->cache().entries(), 0u);
}

}  // namespace
}  // namespace posenc::testing
