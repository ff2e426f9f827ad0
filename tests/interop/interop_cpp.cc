// Runs the interop script (tests/interop/SCRIPT.md) with the C++ client
// library (client/posenc_client.h) and prints one line per call.
//
// Usage: posenc_interop_cpp HOST:PORT

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/posenc_client.h"
#include "client/tensor.h"
#include "convert/proto_conversion.h"
#include "convert/routing_key.h"
#include "core/spec/encoding_spec.h"
#include "core/spec/rope.h"
#include "core/spec/table_spec.h"
#include "tests/common/encoding_specs.h"
#include "tests/common/rope_scalings.h"
#include "tests/common/sha256_hex.h"
#include "tests/common/table_specs.h"

namespace {

using posenc::DType;
using posenc::EncodingSpec;
using posenc::Frequency;
using posenc::FrequencyScheme;
using posenc::GridSinCos;
using posenc::Layout;
using posenc::RopeScaling;
using posenc::TableSpec;
using posenc::Tensor;
using posenc::testing::DynamicScaling;
using posenc::testing::FluxTimestepSpec;
using posenc::testing::GridAxis;
using posenc::testing::GridTableSpec;
using posenc::testing::Llama3Scaling;
using posenc::testing::LongRopeScaling;
using posenc::testing::PlainSpec;
using posenc::testing::TimestepSpec;
using posenc::testing::WithRope;
using posenc::testing::YarnScaling;

// The RoPE specs of SCRIPT.md (max_len as in the calls).
// SCRIPT.md's grid_crop_f16: max_len unset (the grid's 16 rows).
TableSpec GridCropF16() {
  TableSpec spec =
      GridTableSpec({GridAxis(3, 16, 1, 3, /*first_index=*/10),
                     GridAxis(5, 16, 1, 3, /*first_index=*/9)},
                    {1, 0}, Layout::kConcatSinCos, GridSinCos::kPerAxis,
                    /*extra_zero_rows=*/1);
  spec.max_len = 0;
  spec.dtype = DType::kFloat16;
  return spec;
}

TableSpec RopeLlama3Bf16() {  // Llama 3.1
  return WithRope(
      PlainSpec(128, 32, 500000, DType::kBFloat16, Layout::kRotateHalf),
      Llama3Scaling(8, 1, 4, 8192));
}

TableSpec RopeYarnPairsF32() {  // gpt-oss-like
  RopeScaling r = YarnScaling(32, 4096, 32, 1);
  r.truncate = false;
  return WithRope(
      PlainSpec(64, 16, 150000, DType::kFloat32, Layout::kInterleavedPairs), r);
}

RopeScaling LongRope() {  // Phi-3-like, long list (seq_len > M)
  RopeScaling r = LongRopeScaling(32, 4096, 8192);
  r.short_factor = {1, 1.05, 1.1, 1.25, 1.5, 2, 3, 4.5};
  r.long_factor = {1, 1.5, 2.5, 4, 7, 12, 20, 32.5};
  return r;
}

TableSpec RopeLongropeF64() {
  return WithRope(
      PlainSpec(16, 16, 10000, DType::kFloat64, Layout::kConcatCosSin),
      LongRope());
}

TableSpec RopeBadList() {  // 7 short factors for d/2 = 8
  RopeScaling r = LongRope();
  r.short_factor.pop_back();
  return WithRope(
      PlainSpec(16, 16, 10000, DType::kFloat64, Layout::kConcatCosSin), r);
}

TableSpec RopeDynamicF16() {
  return WithRope(
      PlainSpec(32, 40, 10000, DType::kFloat16, Layout::kRotateHalf),
      DynamicScaling(2, 16, 40));
}

// d=64, partial_rotary_factor 0.5, DeepSeek-style YaRN. The core spec has
// no partial_rotary_factor (its d is the rotary dimension), so this one is
// a hand-made proto.
posenc::v1::TableSpec RopeYarnPrfProto() {
  posenc::v1::TableSpec spec;
  spec.set_d(64);
  spec.set_max_len(1);
  spec.set_dtype(posenc::v1::DTYPE_BFLOAT16);
  spec.set_layout(posenc::v1::LAYOUT_ROTATE_HALF);
  spec.set_partial_rotary_factor(0.5);
  posenc::v1::RopeScaling* r = spec.mutable_rope();
  r->set_type(posenc::v1::ROPE_TYPE_YARN);
  r->set_factor(40);
  r->set_original_max_position_embeddings(4096);
  r->set_beta_fast(32);
  r->set_beta_slow(1);
  r->set_mscale(1);
  r->set_mscale_all_dim(0.707);
  return spec;
}

// The Encode specs of SCRIPT.md.
EncodingSpec NerfBf16() {  // nerfstudio NeRFEncoding(3, 10, 0, 8, True)
  EncodingSpec spec = posenc::testing::NerfSpec(3, 10, 0, 8, true);
  spec.dtype = DType::kBFloat16;
  return spec;
}

using ::posenc::testing::Sha256Hex;

// "Key <name> <routing key>", the x-posenc-table value of `spec`'s calls.
void PrintKey(const char* name, const TableSpec& spec) {
  std::printf("Key %s %s\n", name,
              posenc::RoutingKey(posenc::SpecToProto(spec)).c_str());
}

// "<rpc> <name> <dtype> <rows>x<d> sha256=<hex>", or the error code name.
void PrintPayload(const char* rpc, const char* name, const absl::Status& status,
                  DType dtype, size_t rows, uint32_t d,
                  const std::string& bytes) {
  if (!status.ok()) {
    std::printf("%s %s %s\n", rpc, name,
                absl::StatusCodeToString(status.code()).c_str());
    return;
  }
  std::printf("%s %s %s %zux%u sha256=%s\n", rpc, name,
              posenc::DTypeName(dtype), rows, d, Sha256Hex(bytes).c_str());
}

void PrintTensor(const char* rpc, const char* name,
                 const absl::StatusOr<Tensor>& tensor) {
  if (!tensor.ok()) {
    PrintPayload(rpc, name, tensor.status(), DType::kFloat32, 0, 0, "");
  } else {
    PrintPayload(rpc, name, absl::OkStatus(), tensor->dtype, tensor->shape[0],
                 tensor->shape[1], tensor->data);
  }
}

// Concatenates the payloads of a stream (rows or batches).
struct Collected {
  std::string bytes;
  size_t rows = 0;
  DType dtype = DType::kFloat32;

  posenc::PosencClient::RowsCallback Callback() {
    return [this](uint32_t, const Tensor& part) {
      bytes += part.data;
      rows += part.shape.size() == 1 ? 1 : part.shape[0];
      dtype = part.dtype;
      return absl::OkStatus();
    };
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s HOST:PORT\n", argv[0]);
    return 2;
  }
  posenc::PosencClient::Options options;
  options.target = argv[1];
  options.timeout = absl::Seconds(20);
  posenc::PosencClient client(options);

  PrintTensor("GetTable", "d4_f32", client.GetTable(PlainSpec(4, 16)));
  PrintTensor("GetTable", "d512_f64_concat",
              client.GetTable(PlainSpec(512, 40, 500.5, DType::kFloat64,
                                        Layout::kConcatSinCos)));
  PrintTensor(
      "GetTable", "d1024_f16_t2t",
      client.GetTable(PlainSpec(1024, 24, 1e6, DType::kFloat16,
                                Layout::kInterleaved, Frequency::kT2T)));
  PrintTensor("GetTable", "d64_bf16_cossin",
              client.GetTable(PlainSpec(64, 100, 10000, DType::kBFloat16,
                                        Layout::kConcatCosSin)));

  Collected rows;
  absl::Status status =
      client.StreamRows(PlainSpec(512, 64), 5, 37, rows.Callback());
  PrintPayload("StreamRows", "d512_f32_5_37", status, rows.dtype, rows.rows,
               512, rows.bytes);
  Collected batches;
  status =
      client.StreamBatches(PlainSpec(256, 128, 10000, DType::kBFloat16,
                                     Layout::kInterleaved, Frequency::kT2T),
                           3, 100, 7, batches.Callback());
  PrintPayload("StreamBatches", "d256_bf16_t2t_3_100_by7", status,
               batches.dtype, batches.rows, 256, batches.bytes);
  const std::vector<uint32_t> positions = {9, 0, 9, 63, 1, 2, 2, 40};
  PrintTensor("GetRows", "d128_f16_concat",
              client.GetRows(PlainSpec(128, 64, 1234.5, DType::kFloat16,
                                       Layout::kConcatSinCos),
                             positions));

  PrintTensor("GetTable", "odd_d", client.GetTable(PlainSpec(5, 8)));
  const std::vector<uint32_t> past_end = {3, 16};
  PrintTensor("GetRows", "past_max_len",
              client.GetRows(PlainSpec(4, 16), past_end));
  PrintTensor("GetTable", "over_max_message",
              client.GetTable(PlainSpec(1024, 512)));

  absl::StatusOr<posenc::v1::GetStatsResponse> stats = client.GetStats();
  if (stats.ok()) {
    std::printf(
        "GetStats max_message_bytes %llu\n",
        static_cast<unsigned long long>(stats->server().max_message_bytes()));
  } else {
    std::printf("GetStats %s\n",
                absl::StatusCodeToString(stats.status().code()).c_str());
  }

  // RoPE.
  PrintTensor("GetTable", "rope_llama3_bf16",
              client.GetTable(RopeLlama3Bf16()));
  PrintTensor("GetTable", "rope_yarn_pairs_f32",
              client.GetTable(RopeYarnPairsF32()));
  PrintTensor("GetTable", "rope_longrope_f64",
              client.GetTable(RopeLongropeF64()));
  Collected rope_batches;
  status =
      client.StreamBatches(RopeDynamicF16(), 0, 40, 5, rope_batches.Callback());
  PrintPayload("StreamBatches", "rope_dynamic_f16_by5", status,
               rope_batches.dtype, rope_batches.rows, 64, rope_batches.bytes);
  PrintTensor("GetTable", "rope_bad_list", client.GetTable(RopeBadList()));

  // Encode.
  const EncodingSpec flux = FluxTimestepSpec();
  const std::vector<double> flux_t = {0, 0.25, 0.5, 0.999, 1.0 / 3};
  PrintTensor("Encode", "flux_t_f32", client.Encode(flux, flux_t));
  EncodingSpec sd = TimestepSpec(321, Layout::kConcatCosSin);
  sd.dtype = DType::kFloat16;
  sd.pad_odd_dim = true;
  const std::vector<double> sd_t = {999.5, 0, 1, 500.25, -3.75};
  PrintTensor("Encode", "sd_pad_f16", client.Encode(sd, sd_t));
  EncodingSpec diffusers = TimestepSpec(64, Layout::kConcatSinCos);
  diffusers.dtype = DType::kFloat64;
  diffusers.shift = 1;
  const std::vector<double> diffusers_t = {0.001, 999, 123.456};
  PrintTensor("Encode", "diffusers_shift1_f64",
              client.Encode(diffusers, diffusers_t));
  const std::vector<double> nerf_points = {0.5, -0.25, 0.1, 0.3, 1, -0.75};
  PrintTensor("Encode", "nerf_bf16", client.Encode(NerfBf16(), nerf_points));
  // diffusers FluxPosEmbed(10000, [4, 6, 6])
  const EncodingSpec flux_rope =
      posenc::testing::AxesSpec({4, 6, 6}, Layout::kInterleavedPairs);
  PrintTensor("Encode", "flux_rope_pairs_f32",
              client.Encode(flux_rope, {0, 0, 0, 0, 1, 2, 0, 31, 17}));
  // Qwen2-VL M-RoPE, head_dim 16, sections 2, 3, 3
  EncodingSpec qwen =
      posenc::testing::MRopeSpec(16, 1000000, {2, 3, 3}, Layout::kRotateHalf);
  qwen.dtype = DType::kBFloat16;
  PrintTensor("Encode", "qwen2_mrope_bf16",
              client.Encode(qwen, {7, 7, 7, 10, 11, 12, 10, 11, 13}));
  const std::vector<double> one = {1};
  PrintTensor("Encode", "odd_dim",
              client.Encode(TimestepSpec(5, Layout::kInterleaved), one));
  const std::vector<double> past_limit = {17000};
  PrintTensor("Encode", "past_limit", client.Encode(flux, past_limit));

  // A grid table: SD3-style crop, column block first, one cls row.
  const TableSpec crop = GridCropF16();
  PrintTensor("GetTable", "grid_crop_f16", client.GetTable(crop));

  // The routing keys of the specs above and of tricky bases.
  struct KeyCase {
    const char* name;
    uint32_t d;
    double base;
    DType dtype;
    Layout layout;
    Frequency frequency;
  };
  const KeyCase plain_keys[] = {
      {"d4_f32", 4, 10000, DType::kFloat32, Layout::kInterleaved,
       Frequency::kPaper},
      {"d512_f64_concat", 512, 500.5, DType::kFloat64, Layout::kConcatSinCos,
       Frequency::kPaper},
      {"d1024_f16_t2t", 1024, 1e6, DType::kFloat16, Layout::kInterleaved,
       Frequency::kT2T},
      {"d64_bf16_cossin", 64, 10000, DType::kBFloat16, Layout::kConcatCosSin,
       Frequency::kPaper},
      {"d256_bf16_t2t", 256, 10000, DType::kBFloat16, Layout::kInterleaved,
       Frequency::kT2T},
      {"d128_f16_concat", 128, 1234.5, DType::kFloat16, Layout::kConcatSinCos,
       Frequency::kPaper},
      {"base_1e21", 8, 1e21, DType::kFloat32, Layout::kInterleaved,
       Frequency::kPaper},
      {"base_5e-324", 8, 5e-324, DType::kFloat32, Layout::kInterleaved,
       Frequency::kPaper},
      {"base_0.1", 8, 0.1, DType::kFloat32, Layout::kInterleaved,
       Frequency::kPaper},
      {"base_123456789012345680000", 8, 123456789012345680000.0,
       DType::kFloat32, Layout::kInterleaved, Frequency::kPaper},
      {"base_1e-7", 8, 1e-7, DType::kFloat32, Layout::kInterleaved,
       Frequency::kPaper},
      {"base_1.7976931348623157e308", 8, 1.7976931348623157e308,
       DType::kFloat32, Layout::kInterleaved, Frequency::kPaper},
      {"base_0.30000000000000004", 8, 0.30000000000000004, DType::kFloat32,
       Layout::kInterleaved, Frequency::kPaper},
      {"base_1e16", 8, 1e16, DType::kFloat32, Layout::kInterleaved,
       Frequency::kPaper},
  };
  for (const KeyCase& k : plain_keys) {
    PrintKey(k.name, PlainSpec(k.d, 1, k.base, k.dtype, k.layout, k.frequency));
  }
  PrintKey("rope_llama3_bf16", RopeLlama3Bf16());
  PrintKey("rope_yarn_pairs_f32", RopeYarnPairsF32());
  PrintKey("rope_longrope_f64", RopeLongropeF64());
  PrintKey("rope_dynamic_f16", RopeDynamicF16());
  PrintKey("rope_bad_list", RopeBadList());
  std::printf("Key rope_yarn_prf %s\n",
              posenc::RoutingKey(RopeYarnPrfProto()).c_str());
  PrintKey("grid_crop_f16", crop);

  const std::vector<uint32_t> two = {2};
  absl::StatusOr<Tensor> example = client.GetRows(PlainSpec(4, 16), two);
  if (!example.ok()) {
    std::printf("Example d4_pos2 %s\n",
                absl::StatusCodeToString(example.status().code()).c_str());
    return 0;
  }
  std::printf("Example d4_pos2");
  for (float v : example->values<float>()) std::printf(" %.4f", v);
  std::printf("\n");
  return 0;
}
