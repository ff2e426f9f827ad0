// How far each library's own float32 output is from the exact values, for
// the README's library -> preset table. Each library's computation is
// emulated operation by operation in float32 (float64 where the library
// computes in float64), with glibc's expf / powf / sinf / cosf and sin /
// cos; torch's vectorised kernels may differ from glibc by an ulp in a few
// values. The exact values are posenc's, resolved from the same presets the
// table names (proven equal to MPFR by numerics_preset_exactness_test).
// The figures are asserted within 5% so that the README cannot go stale.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "core/cache/table.h"
#include "core/plan/real_encoding_plan.h"
#include "gtest/gtest.h"
#include "presets/presets.h"

namespace posenc {
namespace {

using Arguments = std::map<std::string, std::string>;

std::variant<TableSpec, EncodingSpec> Resolve(const std::string& name,
                                              Arguments args) {
  absl::StatusOr<PresetArguments> parsed =
      PresetArguments::Create(std::move(args));
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<ResolvedPreset> r =
      ResolvePreset(name, *std::move(parsed), DType::kFloat32, SpecLimits{});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? r->spec : std::variant<TableSpec, EncodingSpec>();
}

std::vector<float> ExactRows(const EncodingSpec& spec,
                             const std::vector<double>& points) {
  absl::StatusOr<RealEncodingPlan> plan =
      RealEncodingPlan::Create(spec, SpecLimits{});
  EXPECT_TRUE(plan.ok()) << plan.status();
  const size_t rows = points.size() / spec.coordinates;
  std::vector<float> out(rows * spec.width());
  plan->ComputeRows(points, reinterpret_cast<std::byte*>(out.data()));
  return out;
}

struct Error {
  double max_abs = 0;
  uint64_t differing = 0;
  uint64_t values = 0;
  void Add(float library, float exact) {
    const double e = std::fabs(double{library} - double{exact});
    max_abs = std::max(max_abs, e);
    differing += std::memcmp(&library, &exact, 4) != 0;
    ++values;
  }
};

void Report(const char* what, const Error& e, double expected_max_abs) {
  std::printf(
      "[numerics] library float32 %s: max abs error %.3g, %.2f%% of %llu "
      "values differ from exact\n",
      what, e.max_abs, 100.0 * e.differing / e.values,
      static_cast<unsigned long long>(e.values));
  ::testing::Test::RecordProperty(std::string(what) + "_max_abs_error",
                                  std::to_string(e.max_abs));
  if (expected_max_abs == 0) {
    EXPECT_EQ(e.max_abs, 0) << what << ": README's table is out of date";
  } else {
    EXPECT_NEAR(e.max_abs, expected_max_abs, 0.05 * expected_max_abs)
        << what << ": README's library table is out of date";
  }
}

// diffusers get_timestep_embedding(t, 320, flip_sin_to_cos=True,
// downscale_freq_shift=0) (SD UNets' Timesteps) at t = 999.5:
//   exponent = -math.log(max_period) * arange(half, float32) / (half - s)
//   emb = exp(exponent); emb = t.float() * emb; cat([cos, sin]).
TEST(LibraryFloat32Error, DiffusersTimestep999Point5Dim320) {
  const auto spec = std::get<EncodingSpec>(
      Resolve("diffusers.Timesteps", {{"num_channels", "320"},
                                      {"flip_sin_to_cos", "True"},
                                      {"downscale_freq_shift", "0"}}));
  const double t = 999.5;
  const std::vector<float> exact = ExactRows(spec, {t});
  const uint32_t half = 160;
  Error e;
  for (uint32_t i = 0; i < half; ++i) {
    const float exponent =
        static_cast<float>(-std::log(10000.0)) * static_cast<float>(i);
    const float f = std::exp(exponent / static_cast<float>(half));
    const float angle = static_cast<float>(t) * f;
    e.Add(std::cos(angle), exact[i]);
    e.Add(std::sin(angle), exact[half + i]);
  }
  Report("diffusers_timestep_t999.5_dim320", e, 5.46e-5);
}

// MAE get_2d_sincos_pos_embed(1024, n, cls_token=True) (ViT-L): omega and
// the products in float64 over a float32 grid, np.sin / np.cos in float64,
// then .float() when copied into the model.
void MaeError(uint32_t n, const char* what, double expected) {
  const uint32_t dim = 1024;
  const auto spec = std::get<TableSpec>(Resolve(
      "mae.get_2d_sincos_pos_embed", {{"embed_dim", std::to_string(dim)},
                                      {"grid_size", std::to_string(n)},
                                      {"cls_token", "True"}}));
  const std::shared_ptr<const Table> table = Table::Compute(spec, nullptr);
  const float* exact = reinterpret_cast<const float*>(table->data());
  const uint32_t quarter = dim / 4;  // frequencies per axis
  std::vector<double> omega(quarter);
  for (uint32_t i = 0; i < quarter; ++i) {
    omega[i] = 1.0 / std::pow(10000.0, static_cast<double>(i) / (dim / 4.0));
  }
  Error e;
  for (uint32_t c = 0; c < dim; ++c) e.Add(0.0f, exact[c]);  // cls row
  for (uint32_t h = 0; h < n; ++h) {
    for (uint32_t w = 0; w < n; ++w) {
      const float* row = exact + (1 + h * n + w) * dim;
      // [w: sin | cos][h: sin | cos], D/2 channels each.
      const uint32_t pos[2] = {w, h};
      for (int a = 0; a < 2; ++a) {
        for (uint32_t i = 0; i < quarter; ++i) {
          const double angle = static_cast<double>(pos[a]) * omega[i];
          e.Add(static_cast<float>(std::sin(angle)), row[a * dim / 2 + i]);
          e.Add(static_cast<float>(std::cos(angle)),
                row[a * dim / 2 + quarter + i]);
        }
      }
    }
  }
  Report(what, e, expected);
}
TEST(LibraryFloat32Error, Mae14x14And64x64) {
  MaeError(14, "mae_14x14_dim1024", 0);
  MaeError(64, "mae_64x64_dim1024", 0);
}

// FLUX rope(ids, axes_dim[a], 10000) on a 64 x 64 image's ids (0, r, c),
// in the ids' dtype (float32): scale = arange(0, d, 2) / d; omega =
// 1 / theta ** scale; out = ids * omega; [cos, -sin, sin, cos].
TEST(LibraryFloat32Error, FluxEmbedNd64x64Ids) {
  const auto spec = std::get<EncodingSpec>(Resolve(
      "flux.EmbedND",
      {{"dim", "128"}, {"theta", "10000"}, {"axes_dim", "[16, 56, 56]"}}));
  std::vector<double> ids;
  for (int r = 0; r < 64; ++r) {
    for (int c = 0; c < 64; ++c) ids.insert(ids.end(), {0.0, 1.0 * r, 1.0 * c});
  }
  const std::vector<float> exact = ExactRows(spec, ids);
  const uint32_t axes_dim[3] = {16, 56, 56};
  Error e;
  for (size_t p = 0; p < ids.size() / 3; ++p) {
    const float* row = exact.data() + p * spec.width();
    size_t pair = 0;
    for (int a = 0; a < 3; ++a) {
      const uint32_t d = axes_dim[a];
      for (uint32_t i = 0; i < d / 2; ++i, ++pair) {
        const float scale = static_cast<float>(2 * i) / static_cast<float>(d);
        const float omega = 1.0f / std::pow(10000.0f, scale);
        const float angle = static_cast<float>(ids[3 * p + a]) * omega;
        const float c = std::cos(angle), s = std::sin(angle);
        e.Add(c, row[4 * pair]);
        e.Add(-s, row[4 * pair + 1]);
        e.Add(s, row[4 * pair + 2]);
        e.Add(c, row[4 * pair + 3]);
      }
    }
  }
  Report("flux_embednd_64x64_ids", e, 2.62e-6);
}

// HF Qwen2-VL (Qwen2VLRotaryEmbedding, apply_multimodal_rotary_pos_emb):
// inv_freq = 1.0 / (base ** (arange(0, dim, 2).float() / dim)) in float32;
// freqs = inv_freq * position (float32); cos/sin of cat(freqs, freqs), the
// sections taking t, h, w. An image of 32 x 32 patches (16 x 16 tokens
// after 2 x 2 merging) after 1,000 text tokens: ids (1000, 1000 + r,
// 1000 + c).
TEST(LibraryFloat32Error, Qwen2VlImageAfter1000TextTokens) {
  const auto spec = std::get<EncodingSpec>(
      Resolve("qwen2_vl.mrope", {{"head_dim", "128"},
                                 {"rope_theta", "1000000.0"},
                                 {"mrope_section", "[16, 24, 24]"}}));
  std::vector<double> ids;
  for (int r = 0; r < 16; ++r) {
    for (int c = 0; c < 16; ++c) {
      ids.insert(ids.end(), {1000.0, 1000.0 + r, 1000.0 + c});
    }
  }
  const std::vector<float> exact = ExactRows(spec, ids);
  const uint32_t dim = 128, half = 64;
  Error e;
  for (size_t p = 0; p < ids.size() / 3; ++p) {
    const float* row = exact.data() + p * spec.width();  // [cos | sin]
    for (uint32_t ch = 0; ch < dim; ++ch) {
      const uint32_t j = ch % half;
      const int axis = j < 16 ? 0 : (j < 40 ? 1 : 2);
      const float inv_freq =
          1.0f / std::pow(1000000.0f,
                          static_cast<float>(2 * j) / static_cast<float>(dim));
      const float angle = inv_freq * static_cast<float>(ids[3 * p + axis]);
      e.Add(std::cos(angle), row[ch]);
      e.Add(std::sin(angle), row[dim + ch]);
    }
  }
  Report("qwen2_vl_image_after_1000_tokens", e, 3.63e-5);
}

}  // namespace
}  // namespace posenc
