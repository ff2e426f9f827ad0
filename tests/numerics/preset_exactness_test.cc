// Each preset (presets/presets.h) against an MPFR reference of the library
// call it names, written from that library's code with its own arguments
// (tests/numerics/library_reference.h): same bits in every dtype, on fixed
// calls and on fresh random calls every run (seed printed; POSENC_SEED
// replays it).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/cache/table.h"
#include "core/numerics/shortest_double.h"
#include "core/plan/real_encoding_plan.h"
#include "gtest/gtest.h"
#include "presets/presets.h"
#include "tests/common/encoding_specs.h"
#include "tests/numerics/check_util.h"
#include "tests/numerics/grid_reference.h"
#include "tests/numerics/library_reference.h"
#include "tests/numerics/multi_axis_reference.h"
#include "tests/numerics/real_reference.h"

namespace posenc {
namespace {

using ::posenc::testing::DiffusersTimestepRow;
using ::posenc::testing::GuidedDiffusionTimestepRow;
using ::posenc::testing::NerfEncodingRow;
using ::posenc::testing::RealElementBits;
using Arguments = std::map<std::string, std::string>;

using ::posenc::testing::kDTypes;

EncodingSpec Resolve(const std::string& name, Arguments args, DType dtype) {
  absl::StatusOr<PresetArguments> parsed =
      PresetArguments::Create(std::move(args));
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<ResolvedPreset> resolved =
      ResolvePreset(name, *std::move(parsed), dtype, SpecLimits{});
  EXPECT_TRUE(resolved.ok()) << resolved.status();
  if (!resolved.ok()) return {};
  EXPECT_TRUE(std::holds_alternative<EncodingSpec>(resolved->spec));
  return std::get<EncodingSpec>(resolved->spec);
}

// Rows of `points` (coordinates values each) by posenc, compared with the
// library's reference rows; returns the values compared.
uint64_t ExpectSameBits(const EncodingSpec& spec,
                        const std::vector<double>& points,
                        const std::vector<std::vector<uint64_t>>& expected,
                        const std::string& call) {
  absl::StatusOr<RealEncodingPlan> plan =
      RealEncodingPlan::Create(spec, SpecLimits{});
  EXPECT_TRUE(plan.ok()) << plan.status() << " " << call;
  if (!plan.ok()) return 0;
  EXPECT_TRUE(plan->ValidatePositions(points, 1 << 20).ok()) << call;
  const size_t rows = expected.size();
  std::vector<std::byte> out(rows * spec.row_bytes());
  plan->ComputeRows(points, out.data());
  uint64_t compared = 0;
  for (size_t r = 0; r < rows; ++r) {
    EXPECT_EQ(expected[r].size(), spec.width()) << call;
    int mismatches = 0;
    for (size_t col = 0; col < expected[r].size(); ++col) {
      const uint64_t got =
          RealElementBits(spec, out.data() + r * spec.row_bytes(), col);
      ++compared;
      if (got != expected[r][col] && ++mismatches <= 3) {
        ADD_FAILURE() << call << " in " << DTypeName(spec.dtype) << ": row "
                      << r << " column " << col << " posenc 0x" << std::hex
                      << got << ", library formula 0x" << expected[r][col];
      }
    }
  }
  return compared;
}

struct TimestepCall {
  std::string preset;
  Arguments args;
  // The library's formula, from the library's own arguments.
  std::vector<uint64_t> (*row)(const Arguments& args, double t, DType dtype);
};

double Num(const Arguments& args, const char* key, double fallback) {
  auto it = args.find(key);
  return it == args.end() ? fallback : std::strtod(it->second.c_str(), nullptr);
}
bool Flag(const Arguments& args, const char* key, bool fallback) {
  auto it = args.find(key);
  return it == args.end() ? fallback
                          : (it->second == "true" || it->second == "True");
}

std::vector<uint64_t> DiffusersFunctionRow(const Arguments& a, double t,
                                           DType dtype) {
  return DiffusersTimestepRow(
      t, static_cast<uint32_t>(Num(a, "embedding_dim", 0)),
      Flag(a, "flip_sin_to_cos", false), Num(a, "downscale_freq_shift", 1),
      Num(a, "scale", 1), Num(a, "max_period", 10000), dtype);
}
std::vector<uint64_t> DiffusersModuleRow(const Arguments& a, double t,
                                         DType dtype) {
  return DiffusersTimestepRow(
      t, static_cast<uint32_t>(Num(a, "num_channels", 0)),
      Flag(a, "flip_sin_to_cos", false), Num(a, "downscale_freq_shift", 0),
      Num(a, "scale", 1), 10000, dtype);
}
std::vector<uint64_t> GuidedRow(const Arguments& a, double t, DType dtype) {
  return GuidedDiffusionTimestepRow(t, static_cast<uint32_t>(Num(a, "dim", 0)),
                                    Num(a, "max_period", 10000), 1, dtype);
}
std::vector<uint64_t> FluxRow(const Arguments& a, double t, DType dtype) {
  return GuidedDiffusionTimestepRow(t, static_cast<uint32_t>(Num(a, "dim", 0)),
                                    Num(a, "max_period", 10000),
                                    Num(a, "time_factor", 1000), dtype);
}

void CheckTimestepCall(const TimestepCall& call,
                       const std::vector<double>& timesteps,
                       uint64_t* compared) {
  std::string text = call.preset;
  for (const auto& [k, v] : call.args) absl::StrAppend(&text, " ", k, "=", v);
  for (DType dtype : kDTypes) {
    const EncodingSpec spec = Resolve(call.preset, call.args, dtype);
    std::vector<std::vector<uint64_t>> expected;
    for (double t : timesteps)
      expected.push_back(call.row(call.args, t, dtype));
    *compared += ExpectSameBits(spec, timesteps, expected, text);
  }
}

// The issue's own example (t = 999.5, dim 320) and each library's usual
// settings, including an odd dimension (the zero column).
TEST(PresetExactnessTest, TimestepPresets_EveryDtypeMatchesLibraryFormula) {
  const std::vector<double> timesteps = {0, 1, 999.5, 999, 0.25, 417.123456789};
  const std::vector<TimestepCall> calls = {
      {"diffusers.get_timestep_embedding",
       {{"embedding_dim", "320"}},
       &DiffusersFunctionRow},
      {"diffusers.get_timestep_embedding",
       {{"embedding_dim", "321"},
        {"flip_sin_to_cos", "True"},
        {"downscale_freq_shift", "0"},
        {"scale", "2.5"},
        {"max_period", "5000"}},
       &DiffusersFunctionRow},
      {"diffusers.Timesteps",
       {{"num_channels", "320"},
        {"flip_sin_to_cos", "true"},
        {"downscale_freq_shift", "0"}},
       &DiffusersModuleRow},
      {"guided_diffusion.timestep_embedding", {{"dim", "129"}}, &GuidedRow},
      {"flux.timestep_embedding", {{"dim", "256"}}, &FluxRow},
  };
  uint64_t compared = 0;
  for (const TimestepCall& call : calls) {
    CheckTimestepCall(call,
                      call.preset == "flux.timestep_embedding"
                          ? std::vector<double>{0, 0.25, 1, 0.999}
                          : timesteps,
                      &compared);
  }
  std::printf("[numerics] timestep presets: %llu values compared\n",
              static_cast<unsigned long long>(compared));
}

TEST(PresetExactnessTest, NerfEncoding_EveryDtypeMatchesLibraryFormula) {
  const Arguments args = {{"in_dim", "3"},
                          {"num_frequencies", "10"},
                          {"min_freq_exp", "0"},
                          {"max_freq_exp", "8"},
                          {"include_input", "True"}};
  // Points whose 4 x 2^e is never an integer (no exact quarter turns).
  const std::vector<std::vector<double>> points = {
      {0.1, -0.7, 0.333}, {0.123456789, 0.987654321, -0.5551}};
  uint64_t compared = 0;
  for (DType dtype : kDTypes) {
    const EncodingSpec spec = Resolve("nerfstudio.NeRFEncoding", args, dtype);
    std::vector<double> flat;
    std::vector<std::vector<uint64_t>> expected;
    for (const auto& x : points) {
      flat.insert(flat.end(), x.begin(), x.end());
      expected.push_back(NerfEncodingRow(x, 10, 0, 8, true, dtype));
    }
    compared += ExpectSameBits(spec, flat, expected, "nerfstudio.NeRFEncoding");
  }
  std::printf("[numerics] NeRF preset: %llu values compared\n",
              static_cast<unsigned long long>(compared));
}

TEST(PresetExactnessTest, FreshRandomTimestepCalls_MatchLibraryFormula) {
  std::mt19937_64 rng = ::posenc::testing::SeededRng("presets");
  std::uniform_real_distribution<double> u(0, 1);
  uint64_t compared = 0;
  for (int n = 0; n < 8; ++n) {
    const uint32_t dim = 2 + rng() % 200;
    const std::string d = absl::StrCat(dim);
    std::vector<double> ts;
    for (int k = 0; k < 3; ++k) {
      ts.push_back(std::round(u(rng) * 2000) / 2 + (rng() % 2) * u(rng));
    }
    TimestepCall call;
    switch (rng() % 3) {
      case 0: {
        const uint32_t half = dim / 2;
        // downscale_freq_shift: 0, 1 or any value below half.
        double shift =
            rng() % 2 ? static_cast<double>(rng() % 2) : u(rng) * (half - 0.5);
        if (!(shift < half)) shift = 0;
        call = {"diffusers.get_timestep_embedding",
                {{"embedding_dim", d},
                 {"flip_sin_to_cos", rng() % 2 ? "True" : "False"},
                 {"downscale_freq_shift", ShortestDouble(shift)},
                 {"scale", ShortestDouble(std::exp2(u(rng) * 4 - 2))}},
                &DiffusersFunctionRow};
        break;
      }
      case 1:
        call = {
            "guided_diffusion.timestep_embedding",
            {{"dim", d}, {"max_period", ShortestDouble(100 + u(rng) * 20000)}},
            &GuidedRow};
        break;
      default:
        for (double& t : ts) t = u(rng);
        call = {"flux.timestep_embedding", {{"dim", d}}, &FluxRow};
    }
    CheckTimestepCall(call, ts, &compared);
  }
  std::printf("[numerics] fresh preset calls: %llu values compared\n",
              static_cast<unsigned long long>(compared));
}

std::variant<TableSpec, EncodingSpec> ResolveAny(const std::string& name,
                                                 Arguments args, DType dtype) {
  absl::StatusOr<PresetArguments> parsed =
      PresetArguments::Create(std::move(args));
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<ResolvedPreset> resolved =
      ResolvePreset(name, *std::move(parsed), dtype, SpecLimits{});
  EXPECT_TRUE(resolved.ok()) << name << ": " << resolved.status();
  if (!resolved.ok()) return TableSpec{};
  return resolved->spec;
}

// A grid preset's whole table (Table::Compute, the cache's path) against
// the library's table from tests/numerics/grid_reference.h, every dtype.
void CheckGridPreset(const std::string& name, const Arguments& args,
                     const ::posenc::testing::LibraryTable& want) {
  uint64_t compared = 0;
  for (DType dtype : kDTypes) {
    const auto any = ResolveAny(name, args, dtype);
    ASSERT_TRUE(std::holds_alternative<TableSpec>(any)) << name;
    const TableSpec& spec = std::get<TableSpec>(any);
    ASSERT_EQ(spec.max_len, want.rows) << name;
    ASSERT_EQ(spec.width(), want.width) << name;
    const std::shared_ptr<const Table> table = Table::Compute(spec, nullptr);
    int mismatches = 0;
    for (uint32_t r = 0; r < want.rows; ++r) {
      for (uint32_t c = 0; c < want.width; ++c) {
        const uint64_t w = ::posenc::testing::GridElementBits(
            want.element(r, c), want.base, dtype);
        uint64_t g = 0;
        std::memcpy(&g,
                    table->data() + r * spec.row_bytes() + c * DTypeSize(dtype),
                    DTypeSize(dtype));
        ++compared;
        if (g != w && ++mismatches <= 3) {
          ADD_FAILURE() << name << " " << DTypeName(dtype) << " row " << r
                        << " col " << c << std::hex << " posenc 0x" << g
                        << " library 0x" << w;
        }
      }
    }
  }
  std::printf("[numerics] %s: %llu values compared\n", name.c_str(),
              static_cast<unsigned long long>(compared));
}

TEST(PresetExactnessTest, GridPresets_EveryDtypeMatchesLibraryCode) {
  // MAE at 14 x 14 with its cls row (ViT-B/16 at 224 px is 768 wide).
  CheckGridPreset(
      "mae.get_2d_sincos_pos_embed",
      {{"embed_dim", "64"}, {"grid_size", "14"}, {"cls_token", "True"}},
      ::posenc::testing::MaeTable(64, 14, true));
  // diffusers with interpolation_scale 1.5 (3/2) and base_size 16, a
  // non-square grid, extra tokens.
  CheckGridPreset(
      "diffusers.get_2d_sincos_pos_embed",
      {{"embed_dim", "48"},
       {"grid_size", "(5, 7)"},
       {"cls_token", "True"},
       {"extra_tokens", "2"},
       {"interpolation_scale", "1.5"},
       {"base_size", "16"}},
      ::posenc::testing::DiffusersTable(48, 5, 7, true, 2, 3, 2, 16));
  // SD3's PatchEmbed: M = 24, base_size = 16 // 2 = 8, a 20 x 26 latent is
  // a 10 x 13 patch grid cropped at the centre.
  CheckGridPreset("diffusers.PatchEmbed",
                  {{"height", "16"},
                   {"width", "16"},
                   {"patch_size", "2"},
                   {"embed_dim", "32"},
                   {"pos_embed_max_size", "24"},
                   {"latent_height", "20"},
                   {"latent_width", "26"}},
                  ::posenc::testing::Sd3CroppedTable(32, 24, 8, 1, 1, 10, 13));
  for (bool reverse : {false, true}) {
    for (bool interleave : {false, true}) {
      CheckGridPreset(
          "timm.build_sincos2d_pos_embed",
          {{"feat_shape", "[4, 7]"},
           {"dim", "32"},
           {"temperature", "100"},
           {"reverse_coord", reverse ? "True" : "False"},
           {"interleave_sin_cos", interleave ? "True" : "False"}},
          ::posenc::testing::TimmTable(4, 7, 32, 100, reverse, interleave));
    }
  }
  CheckGridPreset("cogvideox.get_3d_sincos_pos_embed",
                  {{"embed_dim", "64"},
                   {"spatial_size", "(6, 4)"},
                   {"temporal_size", "3"},
                   {"spatial_interpolation_scale", "1.875"}},
                  ::posenc::testing::CogVideoXTable(64, 6, 4, 3, 15, 8, 1, 1));
}

// Multi-axis presets: the preset's rows against the libraries' formulas
// (tests/numerics/multi_axis_reference.h) for the spec the library call
// means, written here by hand from the library's arguments.
void CheckMultiAxisPreset(const std::string& name, const Arguments& args,
                          EncodingSpec by_hand,
                          const std::vector<double>& points) {
  uint64_t compared = 0;
  for (DType dtype : kDTypes) {
    const auto any = ResolveAny(name, args, dtype);
    ASSERT_TRUE(std::holds_alternative<EncodingSpec>(any)) << name;
    const EncodingSpec& spec = std::get<EncodingSpec>(any);
    by_hand.dtype = dtype;
    std::vector<std::vector<uint64_t>> want;
    for (size_t p = 0; p < points.size(); p += by_hand.coordinates) {
      want.push_back(
          ::posenc::testing::MultiAxisReferenceRow(by_hand, &points[p]));
    }
    compared += ExpectSameBits(spec, points, want, name);
  }
  std::printf("[numerics] %s: %llu values compared\n", name.c_str(),
              static_cast<unsigned long long>(compared));
}

TEST(PresetExactnessTest, MultiAxisPresets_EveryDtypeMatchesLibraryFormula) {
  const std::vector<double> ids3 = {0, 0, 0, 0, 17, 5, 3, 63, 63, 1, 1000, 999};
  // EmbedND(128, 10000, [16, 56, 56])
  const EncodingSpec flux =
      ::posenc::testing::AxesSpec({16, 56, 56}, Layout::kRotationMatrix);
  CheckMultiAxisPreset(
      "flux.EmbedND",
      {{"dim", "128"}, {"theta", "10000"}, {"axes_dim", "[16, 56, 56]"}}, flux,
      ids3);
  EncodingSpec diffusers_flux = flux;
  diffusers_flux.layout = Layout::kInterleavedPairs;
  CheckMultiAxisPreset("diffusers.FluxPosEmbed",
                       {{"theta", "10000"}, {"axes_dim", "(16, 56, 56)"}},
                       diffusers_flux, ids3);
  const EncodingSpec qwen2 = ::posenc::testing::MRopeSpec(
      128, 1000000, {16, 24, 24}, Layout::kRotateHalf);
  CheckMultiAxisPreset("qwen2_vl.mrope",
                       {{"head_dim", "128"},
                        {"rope_theta", "1000000.0"},
                        {"mrope_section", "[16, 24, 24]"}},
                       qwen2, ids3);
  EncodingSpec qwen3 = qwen2;
  qwen3.max_period = 5000000;
  qwen3.mrope_section = {24, 20, 20};
  qwen3.mrope_interleaved = true;
  CheckMultiAxisPreset("qwen3_vl.mrope",
                       {{"head_dim", "128"},
                        {"rope_theta", "5000000"},
                        {"mrope_section", "[24, 20, 20]"}},
                       qwen3, ids3);
  // RotaryEmbeddingCat(64, in_pixels=False)
  const EncodingSpec axial =
      ::posenc::testing::AxesSpec({32, 32}, Layout::kInterleavedPairs);
  CheckMultiAxisPreset("timm.RotaryEmbeddingCat",
                       {{"dim", "64"}, {"in_pixels", "False"}}, axial,
                       {0, 0, 3, 7, 15, 15, 0.5, 1.5});
}

}  // namespace
}  // namespace posenc
