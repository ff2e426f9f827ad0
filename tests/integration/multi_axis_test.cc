// Multi-axis RoPE through Encode against a real server on 127.0.0.1: FLUX
// image ids sent as a grid give the same bits as the same ids sent as
// tuples (and as core); Qwen2-VL's and Qwen3-VL's text ids (p, p, p) give
// the rows of the plain RoPE table at p (GetRows); the rotation-matrix
// shape; and the exact status code and field of every refusal.
#include <grpcpp/grpcpp.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/plan/real_encoding_plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "posenc/v1/posenc.grpc.pb.h"
#include "tests/common/encoding_specs.h"
#include "tests/common/table_specs.h"
#include "tests/integration/server_fixture.h"

namespace posenc::testing {
namespace {

using ::testing::HasSubstr;

class MultiAxisEncodeTest : public ServerTest {};

constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                             DType::kBFloat16};

EncodingSpec Flux() {  // FLUX.1: EmbedND(3072, 10000, [16, 56, 56])
  return AxesSpec({16, 56, 56}, Layout::kRotationMatrix);
}

EncodingSpec Qwen(bool interleaved) {  // head_dim 128, theta 1e6
  EncodingSpec spec = MRopeSpec(128, 1000000,
                                interleaved ? std::vector<uint32_t>{24, 20, 20}
                                            : std::vector<uint32_t>{16, 24, 24},
                                Layout::kRotateHalf);
  spec.mrope_interleaved = interleaved;
  return spec;
}

std::string Local(const EncodingSpec& spec, const std::vector<double>& xs) {
  absl::StatusOr<RealEncodingPlan> plan = RealEncodingPlan::Create(spec, {});
  EXPECT_TRUE(plan.ok()) << plan.status();
  std::string out(xs.size() / spec.coordinates * spec.row_bytes(), '\0');
  plan->ComputeRows(xs, reinterpret_cast<std::byte*>(out.data()));
  return out;
}

TEST_F(MultiAxisEncodeTest, FluxImageGrid_SameBitsAsTuplesAndCore) {
  // A 12 x 20 latent with offsets: ids (0, 3 + r, 5 + c), row-major.
  PositionGrid grid;
  grid.start = {0, 3, 5};
  grid.count = {1, 12, 20};
  std::vector<double> tuples;
  for (int r = 0; r < 12; ++r) {
    for (int c = 0; c < 20; ++c)
      tuples.insert(tuples.end(), {0, 3.0 + r, 5.0 + c});
  }
  for (DType dtype : kDTypes) {
    for (Layout layout : {Layout::kRotationMatrix, Layout::kInterleavedPairs}) {
      EncodingSpec spec = Flux();
      spec.dtype = dtype;
      spec.layout = layout;
      absl::StatusOr<Tensor> by_grid = client_->EncodeGrid(spec, grid);
      ASSERT_TRUE(by_grid.ok()) << by_grid.status();
      absl::StatusOr<Tensor> by_tuples = client_->Encode(spec, tuples);
      ASSERT_TRUE(by_tuples.ok()) << by_tuples.status();
      EXPECT_EQ(by_grid->dtype, dtype);
      if (layout == Layout::kRotationMatrix) {
        EXPECT_EQ(by_grid->shape, (std::vector<uint32_t>{240, 64, 2, 2}));
      } else {
        EXPECT_EQ(by_grid->shape, (std::vector<uint32_t>{240, 256}));
      }
      EXPECT_EQ(by_grid->shape, by_tuples->shape);
      EXPECT_EQ(by_grid->data, by_tuples->data) << DTypeName(dtype);
      EXPECT_EQ(by_grid->data, Local(spec, tuples)) << DTypeName(dtype);
    }
  }
}

TEST_F(MultiAxisEncodeTest, FluxTextIds_IdentityRotations) {
  // Text ids (0, 0, 0): every pair [[1, -0], [0, 1]], as FLUX's
  // stack([cos, -sin, sin, cos]) at angle 0.
  absl::StatusOr<Tensor> got = client_->Encode(Flux(), {0, 0, 0});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 256u);
  for (size_t j = 0; j < 64; ++j) {
    EXPECT_EQ(got->ValueAt(4 * j), 1.0);
    EXPECT_EQ(got->ValueAt(4 * j + 1), 0.0);
    EXPECT_TRUE(std::signbit(got->ValueAt(4 * j + 1))) << j;
    EXPECT_FALSE(std::signbit(got->ValueAt(4 * j + 2))) << j;
    EXPECT_EQ(got->ValueAt(4 * j + 3), 1.0);
  }
}

// Text tokens have t = h = w = p: every pair rotates by p at HF's
// inv_freq, so the row is the plain RoPE table's row p.
void ExpectTextIdsAreTableRows(PosencClient& client, bool interleaved) {
  const std::vector<uint32_t> ps = {0, 1, 7, 4095, 32767};
  std::vector<double> ids;
  for (uint32_t p : ps) ids.insert(ids.end(), {1.0 * p, 1.0 * p, 1.0 * p});
  for (DType dtype : kDTypes) {
    for (Layout layout : {Layout::kRotateHalf, Layout::kInterleavedPairs}) {
      EncodingSpec spec = Qwen(interleaved);
      spec.dtype = dtype;
      spec.layout = layout;
      absl::StatusOr<Tensor> got = client.Encode(spec, ids);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(got->shape, (std::vector<uint32_t>{5, 256}));
      TableSpec table;
      table.d = 128;
      table.base = 1000000;
      table.max_len = 32768;
      table.dtype = dtype;
      table.layout = layout;
      absl::StatusOr<Tensor> rows = client.GetRows(table, ps);
      ASSERT_TRUE(rows.ok()) << rows.status();
      EXPECT_EQ(got->data, rows->data) << DTypeName(dtype);
    }
  }
}

TEST_F(MultiAxisEncodeTest, Qwen2VlTextIds_PlainRopeTableRows) {
  ExpectTextIdsAreTableRows(*client_, /*interleaved=*/false);
}

TEST_F(MultiAxisEncodeTest, Qwen3VlTextIds_PlainRopeTableRows) {
  ExpectTextIdsAreTableRows(*client_, /*interleaved=*/true);
}

TEST_F(MultiAxisEncodeTest, QwenVisionIds_SectionsTakeTheirCoordinate) {
  // A vision token (t, h, w) = (3, 10, 20): in Qwen2-VL's rotate_half row,
  // pair j < 16 rotates by t, 16 <= j < 40 by h, 40 <= j < 64 by w, each as
  // the plain table's row of that position.
  EncodingSpec spec = Qwen(false);
  spec.dtype = DType::kFloat64;
  absl::StatusOr<Tensor> got = client_->Encode(spec, {3, 10, 20});
  ASSERT_TRUE(got.ok()) << got.status();
  const TableSpec table =
      PlainSpec(128, 32, 1000000, DType::kFloat64, Layout::kRotateHalf);
  absl::StatusOr<Tensor> rows = client_->GetRows(table, {3, 10, 20});
  ASSERT_TRUE(rows.ok()) << rows.status();
  for (size_t col = 0; col < 256; ++col) {
    const size_t j = col % 64;
    const size_t from = j < 16 ? 0 : j < 40 ? 1 : 2;
    EXPECT_EQ(got->ValueAt(col), rows->ValueAt(from * 256 + col)) << col;
  }
  // Qwen3-VL interleaved: j % 3 == 1 (j < 60) height, j % 3 == 2 (j < 60)
  // width, else temporal.
  spec = Qwen(true);
  spec.dtype = DType::kFloat64;
  got = client_->Encode(spec, {3, 10, 20});
  ASSERT_TRUE(got.ok()) << got.status();
  for (size_t col = 0; col < 256; ++col) {
    const size_t j = col % 64;
    const size_t from = j < 60 ? j % 3 : 0;
    EXPECT_EQ(got->ValueAt(col), rows->ValueAt(from * 256 + col)) << col;
  }
}

TEST_F(MultiAxisEncodeTest, AxialGrid_SameBitsAsCore) {
  // A ViT of head dim 64 on a 14 x 14 patch grid.
  EncodingSpec spec = AxesSpec({32, 32}, Layout::kInterleavedPairs);
  PositionGrid grid;
  grid.start = {0, 0};
  grid.count = {14, 14};
  std::vector<double> tuples;
  for (int r = 0; r < 14; ++r) {
    for (int c = 0; c < 14; ++c)
      tuples.insert(tuples.end(), {1.0 * r, 1.0 * c});
  }
  for (DType dtype : kDTypes) {
    spec.dtype = dtype;
    absl::StatusOr<Tensor> got = client_->EncodeGrid(spec, grid);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->shape, (std::vector<uint32_t>{196, 128}));
    EXPECT_EQ(got->data, Local(spec, tuples)) << DTypeName(dtype);
  }
}

void ExpectRefused(const absl::StatusOr<Tensor>& got, absl::StatusCode code,
                   const std::string& text) {
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), code) << got.status();
  EXPECT_THAT(std::string(got.status().message()), HasSubstr(text));
}

TEST_F(MultiAxisEncodeTest, BadSpecs_InvalidArgumentNamingTheField) {
  EncodingSpec spec = Flux();
  spec.axes_dim = {16, 55, 56};
  ExpectRefused(client_->Encode(spec, {0, 0, 0}),
                absl::StatusCode::kInvalidArgument, "spec.axes_dim[1]: 55");
  spec = Qwen(false);
  spec.mrope_section = {16, 24, 20};
  ExpectRefused(client_->Encode(spec, {0, 0, 0}),
                absl::StatusCode::kInvalidArgument, "spec.mrope_section");
  spec = Qwen(true);
  spec.mrope_section = {24, 20, 10, 10};
  spec.coordinates = 4;
  ExpectRefused(client_->Encode(spec, {0, 0, 0, 0}),
                absl::StatusCode::kInvalidArgument, "spec.mrope_section");
  spec = Flux();
  spec.coordinates = 2;
  ExpectRefused(client_->Encode(spec, {0, 0}),
                absl::StatusCode::kInvalidArgument, "spec.coordinates");
  EncodingSpec plain;
  plain.dim = 8;
  plain.layout = Layout::kRotationMatrix;
  ExpectRefused(client_->Encode(plain, {1}), absl::StatusCode::kInvalidArgument,
                "spec.layout");
  TableSpec table;
  table.d = 8;
  table.max_len = 4;
  table.layout = Layout::kRotationMatrix;
  absl::StatusOr<Tensor> got = client_->GetTable(table);
  ExpectRefused(got, absl::StatusCode::kInvalidArgument, "spec.layout");
}

TEST_F(MultiAxisEncodeTest, BadGrids_CodeAndFieldNamed) {
  PositionGrid grid;
  grid.start = {0, 0};
  grid.count = {1, 4};
  ExpectRefused(client_->EncodeGrid(Flux(), grid),
                absl::StatusCode::kInvalidArgument, "grid.axes");
  grid.start = {0, 0, 0};
  grid.count = {1, 256, 257};  // 65792 points > 65536
  ExpectRefused(client_->EncodeGrid(Flux(), grid),
                absl::StatusCode::kInvalidArgument, "--max_rows_per_request");
  grid.count = {1, 4, 4};
  grid.start = {0, 0, 16777215};  // 2^24 - 1 + 3 > 2^24
  ExpectRefused(client_->EncodeGrid(Flux(), grid),
                absl::StatusCode::kOutOfRange, "grid.axes[2]");
  // positions and grid together: built by hand.
  v1::EncodeRequest request;
  request.mutable_spec()->add_axes_dim(16);
  request.mutable_spec()->add_axes_dim(56);
  request.mutable_spec()->add_axes_dim(56);
  request.add_positions(0);
  request.add_positions(0);
  request.add_positions(0);
  v1::GridAxis* axis = request.mutable_grid()->add_axes();
  axis->set_count(1);
  v1::EncodeResponse response;
  grpc::ClientContext context;
  std::unique_ptr<v1::PositionalEncoding::Stub> stub =
      v1::PositionalEncoding::NewStub(client_->channel());
  const grpc::Status s = stub->Encode(&context, request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("positions, grid"));
}

}  // namespace
}  // namespace posenc::testing
