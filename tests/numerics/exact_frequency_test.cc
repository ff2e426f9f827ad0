// ExactFrequencies against an independent MPFR computation: f_i = base^(-2i/d)
// (or the t2t convention) at 400 bits, its words checked to be within
// 2^-158 of it, and w0 the nearest double unless f_i lies within 2^-160 of a
// rounding boundary. Covers the integer split of the 192-bit significand
// (f >= 2^-800) and the MPFR split from 2^-900 to 2^-800.
#include "core/spec/exact_frequency.h"

#include <mpfr.h>

#include <cmath>
#include <iostream>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace posenc {
namespace {

// |f - (w0 + w1 + w2)| / f and whether w0 = RN(f), for the exact f_i.
void Check(const TableSpec& spec, uint32_t i, const FrequencyWords& w,
           uint64_t* checked) {
  mpfr_t f, sum, t;
  mpfr_inits2(400, f, sum, t, static_cast<mpfr_ptr>(nullptr));
  // f = exp(-ln(base) * i / den), den = d/2 (paper) or d/2 - 1 (t2t).
  const uint32_t den =
      spec.frequency == Frequency::kPaper ? spec.d / 2 : spec.d / 2 - 1;
  mpfr_set_d(f, spec.base, MPFR_RNDN);
  mpfr_log(f, f, MPFR_RNDN);
  mpfr_mul_ui(f, f, i, MPFR_RNDN);
  mpfr_div_ui(f, f, den, MPFR_RNDN);
  mpfr_neg(f, f, MPFR_RNDN);
  mpfr_exp(f, f, MPFR_RNDN);
  if (mpfr_get_exp(f) <= -900) {
    // Below 2^-900 the words may lose bits to underflow: such columns go
    // straight to MPFR (exact_frequency.h); nothing to check here.
    mpfr_clears(f, sum, t, static_cast<mpfr_ptr>(nullptr));
    return;
  }
  mpfr_set_d(sum, w.w0, MPFR_RNDN);
  mpfr_add_d(sum, sum, w.w1, MPFR_RNDN);  // exact at 400 bits
  mpfr_add_d(sum, sum, w.w2, MPFR_RNDN);
  mpfr_sub(t, sum, f, MPFR_RNDN);
  mpfr_div(t, t, f, MPFR_RNDN);
  const double rel = std::fabs(mpfr_get_d(t, MPFR_RNDN));
  EXPECT_LE(rel, std::ldexp(1.0, -158))
      << "d=" << spec.d << " base=" << spec.base << " i=" << i;
  {
    // The words are each the nearest double to what is left (|w1| at most
    // half an ulp of w0, |w2| of w1).
    EXPECT_LE(std::fabs(w.w1), std::ldexp(std::fabs(w.w0), -53))
        << "d=" << spec.d << " base=" << spec.base << " i=" << i;
    EXPECT_LE(std::fabs(w.w2), std::ldexp(std::fabs(w.w1), -53))
        << "d=" << spec.d << " base=" << spec.base << " i=" << i;
    const double rn = mpfr_get_d(f, MPFR_RNDN);
    if (rn != w.w0) {
      // Allowed only right at a rounding boundary of double.
      mpfr_set_d(t, (rn + w.w0) / 2, MPFR_RNDN);
      mpfr_sub(t, t, f, MPFR_RNDN);
      mpfr_div(t, t, f, MPFR_RNDN);
      EXPECT_LE(std::fabs(mpfr_get_d(t, MPFR_RNDN)), std::ldexp(1.0, -160))
          << "w0 is not RN(f): d=" << spec.d << " base=" << spec.base
          << " i=" << i;
    }
  }
  ++*checked;
  mpfr_clears(f, sum, t, static_cast<mpfr_ptr>(nullptr));
}

TEST(ExactFrequencyTest, WordsWithin2ToMinus158OfMpfrForManyBases) {
  std::mt19937_64 rng(20261201);
  std::vector<double> bases = {10000, 2,     1.0000001, 500.5, 1e6,   731.25,
                               1e30,  1e100, 1e200,     1e240, 1e250, 1e300};
  for (int k = 0; k < 40; ++k) {
    bases.push_back(
        std::exp(std::uniform_real_distribution<double>(0.001, 700)(rng)));
  }
  uint64_t checked = 0;
  for (double base : bases) {
    for (uint32_t d : {4u, 64u, 512u, 4096u}) {
      for (Frequency freq : {Frequency::kPaper, Frequency::kT2T}) {
        TableSpec spec;
        spec.d = d;
        spec.base = base;
        spec.max_len = 1;
        spec.frequency = freq;
        const std::vector<FrequencyWords> words = ExactFrequencies(spec);
        ASSERT_EQ(words.size(), d / 2);
        // Every column for small d; a spread of them for large d.
        const uint32_t step = d <= 64 ? 1 : 7;
        for (uint32_t i = 0; i < d / 2; i += step) {
          Check(spec, i, words[i], &checked);
        }
        Check(spec, d / 2 - 1, words[d / 2 - 1], &checked);
      }
    }
  }
  std::cout << "[ frequencies ] " << checked
            << " frequencies checked against MPFR at 400 bits\n";
}

}  // namespace
}  // namespace posenc
