// Framework presets: posenc's (layout, frequency) reproduces each framework's
// own formula evaluated in exact arithmetic (MPFR), and a record of how far
// the frameworks' float32 computations are from the exact table.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/plan/encoding.h"
#include "tests/common/rope_scalings.h"
#include "tests/numerics/check_util.h"
#include "tests/numerics/rope_reference.h"

namespace posenc {
namespace {

// Records `values` compared with posenc's output (the frameworks' float32
// error, not an MPFR check) as values_compared_not_mpfr, and prints it.
void ReportComparedWithPosenc(const char* suite, uint64_t values) {
  ::testing::Test::RecordProperty("values_compared_not_mpfr",
                                  std::to_string(values));
  std::printf(
      "[numerics] %s: %llu values compared with posenc's output (not MPFR)\n",
      suite, static_cast<unsigned long long>(values));
}

// A framework's formula: value of column `col` of row `pos` for width d,
// evaluated at 256 bits in the framework's own literal form.
using FrameworkFormula = void (*)(uint32_t d, uint32_t pos, uint32_t col,
                                  mpfr_ptr out);

void SinOrCos(bool is_sin, mpfr_ptr out, mpfr_srcptr x) {
  if (is_sin) {
    mpfr_sin(out, x, MPFR_RNDN);
  } else {
    mpfr_cos(out, x, MPFR_RNDN);
  }
}

// exp(k * -scale) * pos with scale = ln(10000) / den.
void AngleExpForm(uint32_t k, uint32_t den, uint32_t pos, mpfr_ptr x) {
  mpfr_t t;
  mpfr_init2(t, mpfr_get_prec(x) + 32);
  mpfr_set_ui(t, 10000, MPFR_RNDN);
  mpfr_log(t, t, MPFR_RNDN);
  mpfr_div_ui(t, t, den, MPFR_RNDN);
  mpfr_mul_si(t, t, -static_cast<long>(k), MPFR_RNDN);
  mpfr_exp(t, t, MPFR_RNDN);
  mpfr_mul_ui(x, t, pos, MPFR_RNDN);
  mpfr_clear(t);
}

// PyTorch tutorial: div_term = exp(arange(0, d, 2) * (-ln(10000) / d));
// pe[:, 0::2] = sin(position * div_term); pe[:, 1::2] = cos(...).
void PyTorchTutorial(uint32_t d, uint32_t pos, uint32_t col, mpfr_ptr out) {
  mpfr_t x;
  mpfr_init2(x, mpfr_get_prec(out) + 32);
  AngleExpForm(2 * (col / 2), d, pos, x);
  SinOrCos(col % 2 == 0, out, x);
  mpfr_clear(x);
}

// fairseq SinusoidalPositionalEmbedding / tensor2tensor timing signal:
// emb = exp(arange(half) * -(ln(10000) / (half - 1))); cat(sin, cos).
void Fairseq(uint32_t d, uint32_t pos, uint32_t col, mpfr_ptr out) {
  const uint32_t half = d / 2;
  mpfr_t x;
  mpfr_init2(x, mpfr_get_prec(out) + 32);
  AngleExpForm(col % half, half - 1, pos, x);
  SinOrCos(col < half, out, x);
  mpfr_clear(x);
}

// HF MarianSinusoidalPositionalEmbedding: pos / 10000^(2 (j // 2) / d),
// sin of the even j in the first half, cos of the odd j in the second.
void HfMarian(uint32_t d, uint32_t pos, uint32_t col, mpfr_ptr out) {
  const uint32_t half = d / 2;
  const uint32_t j = col < half ? 2 * col : 2 * (col - half) + 1;
  mpfr_t x, t;
  mpfr_inits2(mpfr_get_prec(out) + 32, x, t, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_ui(t, 2 * (j / 2), MPFR_RNDN);
  mpfr_div_ui(t, t, d, MPFR_RNDN);
  mpfr_ui_pow(x, 10000, t, MPFR_RNDN);
  mpfr_ui_div(x, pos, x, MPFR_RNDN);
  SinOrCos(col < half, out, x);
  mpfr_clears(x, t, static_cast<mpfr_ptr>(nullptr));
}

// ggml_timestep_embedding: freqs = exp(-ln(max_period) * j / half);
// embed[j] = cos(t * freqs), embed[j + half] = sin(t * freqs).
void Ggml(uint32_t d, uint32_t pos, uint32_t col, mpfr_ptr out) {
  const uint32_t half = d / 2;
  mpfr_t x;
  mpfr_init2(x, mpfr_get_prec(out) + 32);
  AngleExpForm(col % half, half, pos, x);
  SinOrCos(col >= half, out, x);
  mpfr_clear(x);
}

struct Preset {
  const char* name;
  FrameworkFormula formula;
  Layout layout;
  Frequency frequency;
};

constexpr Preset kPresets[] = {
    {"pytorch_tutorial", PyTorchTutorial, Layout::kInterleaved,
     Frequency::kPaper},
    {"fairseq_t2t", Fairseq, Layout::kConcatSinCos, Frequency::kT2T},
    {"hf_marian", HfMarian, Layout::kConcatSinCos, Frequency::kPaper},
    {"ggml", Ggml, Layout::kConcatCosSin, Frequency::kPaper},
};

TEST(FrameworkPresets, PosencEqualsFrameworkFormulaInExactArithmetic) {
  testing::CheckStats stats;
  for (const Preset& preset : kPresets) {
    for (uint32_t d : {8u, 64u, 512u}) {
      TableSpec spec;
      spec.d = d;
      spec.base = 10000;
      spec.dtype = DType::kFloat32;
      spec.layout = preset.layout;
      spec.frequency = preset.frequency;
      std::vector<uint32_t> positions = {0, 1, 2, 3, 17, 511, 8191, 999999};
      std::vector<float> rows(positions.size() * d);
      ComputePositions(spec, positions,
                       reinterpret_cast<std::byte*>(rows.data()));
      mpfr_t v;
      mpfr_init2(v, 256);
      for (size_t r = 0; r < positions.size(); ++r) {
        for (uint32_t col = 0; col < d; col += (d > 64 ? 7 : 1)) {
          preset.formula(d, positions[r], col, v);
          const float want = mpfr_get_flt(v, MPFR_RNDN);
          ++stats.values;
          if (std::memcmp(&want, &rows[r * d + col], 4) != 0) {
            ++stats.mismatches;
            ADD_FAILURE() << preset.name << " d=" << d
                          << " pos=" << positions[r] << " col=" << col;
          }
        }
      }
      mpfr_clear(v);
    }
  }
  testing::ReportChecked(stats);
}

// How far float32-computed framework tables are from the exact ones: the
// PyTorch tutorial (float32 exp(arange * c), float32 product, sinf/cosf),
// fairseq (same, T2T frequencies) and ggml (expf/logf, cosf/sinf).
// docs/frameworks.md's table "How far is your framework's own float32 table
// from the exact one" (max abs error at max_len 8192 and 10^6) and
// docs/numerics.md's share of values differing: the test asserts both, so
// they cannot drift. Tolerances: 5% relative on the error
// (docs/frameworks.md rounds to two digits; libm's float sinf/cosf may
// differ by an ulp between versions), 1 percentage point on the share.
constexpr double kReadmeErrorTolerance = 0.05;
constexpr double kDifferingTolerancePoints = 1.0;

struct Float32Framework {
  const char* name;
  Layout layout;
  Frequency frequency;
  // float32 frequency of pair i, as the framework computes it.
  float (*freq)(uint32_t d, uint32_t i);
  // Documented figures for max_len 8192 and 10^6: max abs error
  // (docs/frameworks.md) and percent of values differing from exact
  // (docs/numerics.md).
  double max_err[2];
  double differing_percent[2];
};

float PyTorchFreq(uint32_t d, uint32_t i) {
  const float scale = static_cast<float>(-std::log(10000.0) / d);
  return std::exp(static_cast<float>(2 * i) * scale);
}
float FairseqFreq(uint32_t d, uint32_t i) {
  const float scale = static_cast<float>(-(std::log(10000.0) / (d / 2 - 1)));
  return std::exp(static_cast<float>(i) * scale);
}
float GgmlFreq(uint32_t d, uint32_t i) {
  return std::exp(-std::log(10000.0f) * static_cast<float>(i) /
                  static_cast<float>(d / 2));
}

TEST(FrameworkFloat32Error, D512_ReportsMaxAbsErrorVsExact) {
  constexpr Float32Framework kFrameworks[] = {
      {"pytorch_tutorial",
       Layout::kInterleaved,
       Frequency::kPaper,
       PyTorchFreq,
       {4.7e-4, 6.0e-2},
       {92.3, 99.4}},
      {"fairseq",
       Layout::kConcatSinCos,
       Frequency::kT2T,
       FairseqFreq,
       {4.9e-4, 6.2e-2},
       {93.6, 99.5}},
      {"ggml",
       Layout::kConcatCosSin,
       Frequency::kPaper,
       GgmlFreq,
       {4.7e-4, 6.0e-2},
       {92.3, 99.4}},
  };
  constexpr uint32_t d = 512;
  uint64_t checked = 0;
  for (const Float32Framework& fw : kFrameworks) {
    TableSpec spec;
    spec.d = d;
    spec.dtype = DType::kFloat32;
    spec.layout = fw.layout;
    spec.frequency = fw.frequency;
    std::vector<float> freq(d / 2);
    for (uint32_t i = 0; i < d / 2; ++i) freq[i] = fw.freq(d, i);
    const EncodingPlan plan(spec);
    for (int which = 0; which < 2; ++which) {
      const uint32_t max_len = which == 0 ? 8192u : 1000000u;
      // All rows up to 8192; for 10^6, every 97th row plus the last 512.
      std::vector<uint32_t> positions;
      for (uint32_t p = 0; p < max_len; p += (max_len > 8192 ? 97 : 1))
        positions.push_back(p);
      for (uint32_t p = max_len - 512; max_len > 8192 && p < max_len; ++p)
        positions.push_back(p);
      std::vector<float> exact(positions.size() * d);
      ComputePositions(plan, positions,
                       reinterpret_cast<std::byte*>(exact.data()));
      double max_err = 0;
      uint64_t differing = 0;
      for (size_t r = 0; r < positions.size(); ++r) {
        const float pos = static_cast<float>(positions[r]);
        for (uint32_t i = 0; i < d / 2; ++i) {
          const float angle = pos * freq[i];
          const float s = std::sin(angle), c = std::cos(angle);
          const size_t sc = testing::ColumnOf(spec, i, true);
          const size_t cc = testing::ColumnOf(spec, i, false);
          const double es = std::fabs(double{s} - exact[r * d + sc]);
          const double ec = std::fabs(double{c} - exact[r * d + cc]);
          max_err = std::max({max_err, es, ec});
          differing += (es != 0) + (ec != 0);
          checked += 2;
        }
      }
      const double total = 2.0 * positions.size() * (d / 2);
      std::printf(
          "[numerics] float32 %s d=512 max_len=%u: max abs error "
          "%.3g, %.2f%% of values differ from exact (%zu rows)\n",
          fw.name, max_len, max_err, 100.0 * differing / total,
          positions.size());
      RecordProperty(std::string(fw.name) + "_max_len_" +
                         std::to_string(max_len) + "_max_abs_error",
                     std::to_string(max_err));
      EXPECT_GT(max_err, 0.0);  // float32 arithmetic is not exact
      EXPECT_NEAR(max_err, fw.max_err[which],
                  kReadmeErrorTolerance * fw.max_err[which])
          << fw.name << " max_len " << max_len
          << ": docs/frameworks.md's error table is out of date";
      EXPECT_NEAR(100.0 * differing / total, fw.differing_percent[which],
                  kDifferingTolerancePoints)
          << fw.name << " max_len " << max_len
          << ": docs/numerics.md's share of differing values is out of date";
    }
  }
  ReportComparedWithPosenc("FrameworkFloat32Error", checked);
}

// HF transformers' float32 RoPE recipe (modeling_rope_utils.py and the
// models' RotaryEmbedding.forward), emulated operation by operation in
// float32 with glibc's powf / cosf / sinf:
//   inv_freq = 1.0 / (base ** (arange(0, dim, 2).float() / dim))
// (torch's `scalar / tensor` is reciprocal(tensor) * scalar, `base ** t` is
// powf(float(base), t)), the scheme's scaling on float32 tensors, then
// freqs = t * inv_freq with float32 positions t, cos/sin in float32 and the
// product with float32(attention_scaling).
struct HfRopeFloat32 {
  const char* name;
  double base;
  std::shared_ptr<const RopeScaling> rope;
  // docs/rope.md's figures: max abs error vs the exact value, and the percent
  // of float32 values differing from posenc's exact float32 table.
  double max_err;
  double differing_percent;
};

std::vector<float> HfInvFreq(double base, uint32_t dim) {
  std::vector<float> inv(dim / 2);
  for (uint32_t i = 0; i < dim / 2; ++i) {
    const float x = static_cast<float>(2 * i) / static_cast<float>(dim);
    const float p = powf(static_cast<float>(base), x);
    inv[i] = 1.0f / p;
  }
  return inv;
}

// _compute_llama3_parameters on float32 tensors.
std::vector<float> HfLlama3(const std::vector<float>& inv,
                            const RopeScaling& r) {
  const float factor = static_cast<float>(r.factor);
  const float low = static_cast<float>(r.low_freq_factor);
  const float high = static_cast<float>(r.high_freq_factor);
  const float m = static_cast<float>(r.original_max_position_embeddings);
  const double low_wl = r.original_max_position_embeddings / r.low_freq_factor;
  const double high_wl =
      r.original_max_position_embeddings / r.high_freq_factor;
  const float two_pi = static_cast<float>(2 * M_PI);
  std::vector<float> out(inv.size());
  for (size_t i = 0; i < inv.size(); ++i) {
    const float wavelen = (1.0f / inv[i]) * two_pi;
    const float f =
        wavelen > static_cast<float>(low_wl) ? inv[i] / factor : inv[i];
    const float smooth = ((1.0f / wavelen) * m - low) / (high - low);
    const float smoothed = (1.0f - smooth) * f / factor + smooth * f;
    const bool medium = !(wavelen < static_cast<float>(high_wl)) &&
                        !(wavelen > static_cast<float>(low_wl));
    out[i] = medium ? smoothed : f;
  }
  return out;
}

// _compute_yarn_parameters on float32 tensors (find_correction_range in
// Python doubles, linear_ramp_factor in float32).
std::vector<float> HfYarn(double base, uint32_t dim, const RopeScaling& r) {
  const double beta_fast = r.beta_fast == 0 ? 32 : r.beta_fast;
  const double beta_slow = r.beta_slow == 0 ? 1 : r.beta_slow;
  const double m = r.original_max_position_embeddings;
  auto correction_dim = [&](double rot) {
    return dim * std::log(m / (rot * 2 * M_PI)) / (2 * std::log(base));
  };
  double low = std::floor(correction_dim(beta_fast));
  double high = std::ceil(correction_dim(beta_slow));
  low = std::max(low, 0.0);
  high = std::min(high, dim - 1.0);
  if (low == high) high += 0.001;
  const float factor = static_cast<float>(r.factor);
  std::vector<float> out(dim / 2);
  for (uint32_t i = 0; i < dim / 2; ++i) {
    const float pos_freq =
        powf(static_cast<float>(base),
             static_cast<float>(2 * i) / static_cast<float>(dim));
    const float extrapolation = 1.0f / pos_freq;
    const float interpolation = 1.0f / (factor * pos_freq);
    const float ramp =
        std::clamp((static_cast<float>(i) - static_cast<float>(low)) /
                       static_cast<float>(high - low),
                   0.0f, 1.0f);
    const float extrapolation_factor = 1.0f - ramp;
    out[i] = interpolation * (1.0f - extrapolation_factor) +
             extrapolation * extrapolation_factor;
  }
  return out;
}

TEST(FrameworkRopeFloat32Error, Llama31AndYarnTo128k_ReportsErrorVsExact) {
  constexpr uint32_t kHeadDim = 128;
  constexpr uint32_t kMaxPos = 131072;
  const RopeScaling llama = testing::Llama3Scaling(8, 1, 4, 8192);
  const RopeScaling yarn = testing::YarnScaling(4, 32768, 32, 1);
  const HfRopeFloat32 kRecipes[] = {
      {"llama3.1 base=5e5 factor=8", 500000,
       std::make_shared<const RopeScaling>(llama), 9.29e-3, 68.9},
      {"yarn base=1e6 factor=4 (Qwen2.5)", 1e6,
       std::make_shared<const RopeScaling>(yarn), 1.07e-2, 72.9},
      {"yarn base=1e4 factor=4", 10000,
       std::make_shared<const RopeScaling>(yarn), 8.70e-3, 92.0},
  };
  // Every 13th position up to 2^17 plus the last 512 (up to 2^17 itself).
  std::vector<uint32_t> positions;
  for (uint32_t p = 0; p < kMaxPos - 512; p += 13) positions.push_back(p);
  for (uint32_t p = kMaxPos - 511; p <= kMaxPos; ++p) positions.push_back(p);
  uint64_t compared = 0;
  for (const HfRopeFloat32& hf : kRecipes) {
    TableSpec spec;
    spec.d = kHeadDim;
    spec.base = hf.base;
    spec.max_len = kMaxPos + 1;
    spec.layout = Layout::kRotateHalf;  // HF's cos = row[:d], sin = row[d:]
    spec.rope = hf.rope;
    ASSERT_TRUE(ValidateSpec(spec, SpecLimits{}).ok());
    TableSpec spec64 = spec;
    spec64.dtype = DType::kFloat64;
    const uint32_t w = spec.width();
    std::vector<float> exact32(positions.size() * w);
    std::vector<double> exact64(positions.size() * w);
    ComputePositions(spec, positions,
                     reinterpret_cast<std::byte*>(exact32.data()));
    ComputePositions(spec64, positions,
                     reinterpret_cast<std::byte*>(exact64.data()));
    const RopeScaling& r = *hf.rope;
    const std::vector<float> inv =
        r.type == RopeType::kLlama3 ? HfLlama3(HfInvFreq(hf.base, kHeadDim), r)
                                    : HfYarn(hf.base, kHeadDim, r);
    const float scaling =
        r.type == RopeType::kYarn
            ? static_cast<float>(0.1 * std::log(r.factor) + 1.0)
            : 1.0f;
    // How far float32 inv_freq is from the exact f'_i (relative).
    testing::RopeReference ref(hf.rope.get(), kHeadDim, hf.base);
    double max_rel_freq_err = 0;
    uint32_t worst_freq = 0;
    for (uint32_t i = 0; i < kHeadDim / 2; ++i) {
      const double e = std::fabs(inv[i] / ref.Frequency(i) - 1.0);
      if (e > max_rel_freq_err) {
        max_rel_freq_err = e;
        worst_freq = i;
      }
    }
    double max_err = 0;
    uint32_t worst_pos = 0, worst_i = 0;
    uint64_t differing = 0, total = 0;
    for (size_t k = 0; k < positions.size(); ++k) {
      const float t = static_cast<float>(positions[k]);
      for (uint32_t i = 0; i < kHeadDim / 2; ++i) {
        const float freq = t * inv[i];
        const float v[2] = {cosf(freq) * scaling, sinf(freq) * scaling};
        for (int s = 0; s < 2; ++s) {
          const size_t col = k * w + (s == 1 ? kHeadDim : 0) + i;
          const double err = std::fabs(double{v[s]} - exact64[col]);
          if (err > max_err) {
            max_err = err;
            worst_pos = positions[k];
            worst_i = i;
          }
          differing += v[s] != exact32[col] ||
                       std::signbit(v[s]) != std::signbit(exact32[col]);
          ++total;
        }
      }
    }
    compared += total;
    const double percent = 100.0 * differing / total;
    std::printf(
        "[numerics] float32 HF %s head_dim=128 pos<=131072: max abs error "
        "%.4g (pos %u, pair %u), %.3f%% of values differ from exact float32 "
        "(%zu rows); inv_freq max relative error %.3g (2^%.2f, pair %u)\n",
        hf.name, max_err, worst_pos, worst_i, percent, positions.size(),
        max_rel_freq_err, std::log2(max_rel_freq_err), worst_freq);
    RecordProperty(std::string(hf.name) + " max_abs_error",
                   std::to_string(max_err));
    EXPECT_NEAR(max_err, hf.max_err, kReadmeErrorTolerance * hf.max_err)
        << hf.name << ": docs/rope.md's RoPE error table is out of date";
    EXPECT_NEAR(percent, hf.differing_percent, kDifferingTolerancePoints)
        << hf.name
        << ": docs/rope.md's share of differing values is out of date";
  }
  ReportComparedWithPosenc("FrameworkRopeFloat32Error", compared);
}

}  // namespace
}  // namespace posenc
