// Framework presets: posenc's (layout, frequency) reproduces each framework's
// own formula evaluated in exact arithmetic (MPFR), and a record of how far
// the frameworks' float32 computations are from the exact table.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/encoding.h"
#include "tests/numerics/check_util.h"

namespace posenc {
namespace {

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
// README.md's table "How far is your framework's own float32 table from the
// exact one" (max abs error at max_len 8192 and 10^6) and docs/numerics.md's
// share of values differing: the test asserts both, so they cannot drift.
// Tolerances: 5% relative on the error (the README rounds to two digits;
// libm's float sinf/cosf may differ by an ulp between versions), 1
// percentage point on the share.
constexpr double kReadmeErrorTolerance = 0.05;
constexpr double kDifferingTolerancePoints = 1.0;

struct Float32Framework {
  const char* name;
  Layout layout;
  Frequency frequency;
  // float32 frequency of pair i, as the framework computes it.
  float (*freq)(uint32_t d, uint32_t i);
  // Documented figures for max_len 8192 and 10^6: max abs error (README.md)
  // and percent of values differing from exact (docs/numerics.md).
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
          << ": README.md's error table is out of date";
      EXPECT_NEAR(100.0 * differing / total, fw.differing_percent[which],
                  kDifferingTolerancePoints)
          << fw.name << " max_len " << max_len
          << ": docs/numerics.md's share of differing values is out of date";
    }
  }
  RecordProperty("values_compared_not_mpfr", std::to_string(checked));
  std::printf(
      "[numerics] FrameworkFloat32Error: %llu values compared with posenc's "
      "output (not MPFR)\n",
      static_cast<unsigned long long>(checked));
}

}  // namespace
}  // namespace posenc
