#include "core/spec/rope.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/numerics/mpfr_value.h"
#include "core/numerics/shortest_double.h"
#include "core/spec/exact_frequency.h"

namespace posenc {
namespace {

// Precision at which a comparison of two reals is given up as a tie. The
// values compared are transcendental against rational (or the other way
// round), so they are never equal and a few hundred bits always decide.
constexpr mpfr_prec_t kMaxDecisionPrecision = 1 << 14;

absl::Status Invalid(const std::string& field, const std::string& rule) {
  return absl::InvalidArgumentError(
      absl::StrCat("spec.rope.", field, " ", rule));
}

absl::Status CheckFactorRange(const char* field, double v) {
  if (!std::isfinite(v) || v < 1 || v > kMaxRopeFactor) {
    return Invalid(field,
                   absl::StrCat("must be finite and in [1, ", kMaxRopeFactor,
                                "], got ", ShortestDouble(v)));
  }
  return absl::OkStatus();
}

absl::Status CheckPositive(const char* field, double v) {
  if (!std::isfinite(v) || v <= 0) {
    return Invalid(
        field, absl::StrCat("must be finite and > 0, got ", ShortestDouble(v)));
  }
  return absl::OkStatus();
}

absl::Status CheckLength(const char* field, uint32_t v, bool required) {
  if ((required && v == 0) || v > kMaxRopeLength) {
    return Invalid(field, absl::StrCat(required ? "is required: " : "must be ",
                                       required ? "1" : "0", " to ",
                                       kMaxRopeLength, ", got ", v));
  }
  return absl::OkStatus();
}

absl::Status CheckList(const char* field, const std::vector<double>& list,
                       uint32_t d) {
  if (list.size() != d / 2) {
    return Invalid(
        field, absl::StrCat("must hold d/2 = ", d / 2,
                            " values (one per frequency), got ", list.size()));
  }
  for (size_t k = 0; k < list.size(); ++k) {
    const double v = list[k];
    if (!std::isfinite(v) || v < 1 || v > kMaxRopeFactor) {
      return Invalid(absl::StrCat(field, "[", k, "]"),
                     absl::StrCat("must be finite and in [1, ", kMaxRopeFactor,
                                  "], got ", ShortestDouble(v)));
    }
  }
  return absl::OkStatus();
}

// The paper's f_i = base^(-2i/d) to out's precision, relative error
// <= 2^(12 - w).
void PlainFrequency(uint32_t d, double base, uint32_t i, mpfr_ptr out) {
  TableSpec plain;
  plain.d = d;
  plain.base = base;
  FrequencyMpfr(plain, i, out);
}

// Sets `out` (precision p) to 2 * pi.
void TwoPi(mpfr_ptr out) {
  mpfr_const_pi(out, MPFR_RNDN);
  mpfr_mul_2ui(out, out, 1, MPFR_RNDN);
}

// YaRN's correction dimension c(b) = d ln(M / (2 pi b)) / (2 ln base), with
// relative error <= 2^(10 - p) + absolute 2^(10 - p) (p = out's precision).
void CorrectionDim(uint32_t d, double base, uint32_t m, double b,
                   mpfr_ptr out) {
  const mpfr_prec_t p = mpfr_get_prec(out);
  MpfrValue t(p), lb(p);
  TwoPi(t);
  mpfr_mul_d(t, t, b, MPFR_RNDN);
  mpfr_ui_div(t, m, t, MPFR_RNDN);
  mpfr_log(t, t, MPFR_RNDN);
  mpfr_mul_ui(t, t, d, MPFR_RNDN);
  mpfr_set_d(lb, base, MPFR_RNDN);
  mpfr_log(lb, lb, MPFR_RNDN);
  mpfr_mul_2ui(lb, lb, 1, MPFR_RNDN);
  mpfr_div(out, t, lb, MPFR_RNDN);
}

// Whether x, known within 2^(margin - p) relative plus 2^(margin - p)
// absolute (p = its precision), certainly differs from `to` by more than
// the error; sets *above to the side it lies on.
bool Separated(mpfr_srcptr x, mpfr_srcptr to, int margin, bool* above) {
  const mpfr_prec_t p = mpfr_get_prec(x);
  MpfrValue diff(p + 8), err(64);
  mpfr_sub(diff, x, to, MPFR_RNDN);
  mpfr_abs(err, x, MPFR_RNDU);
  mpfr_add_ui(err, err, 1, MPFR_RNDU);
  mpfr_mul_2si(err, err, margin - p, MPFR_RNDU);
  if (mpfr_cmpabs(diff, err) <= 0) return false;
  *above = mpfr_sgn(diff.get()) > 0;
  return true;
}

// The ramp ends of YaRN at precision p, decided on the real values: floor
// and ceil (when truncating) at whatever precision settles them.
void YarnRampEnds(const RopeScaling& r, uint32_t d, double base, mpfr_ptr low,
                  mpfr_ptr high) {
  const double beta_fast = r.beta_fast != 0 ? r.beta_fast : 32;
  const double beta_slow = r.beta_slow != 0 ? r.beta_slow : 1;
  const uint32_t m = r.original_max_position_embeddings;
  const bool truncate = r.truncate.value_or(true);
  const mpfr_prec_t p = mpfr_get_prec(low);
  if (truncate) {
    // floor(c_fast) and ceil(c_slow): integers, found at rising precision.
    double ends[2];
    for (int k = 0; k < 2; ++k) {
      for (mpfr_prec_t w = 128;; w *= 2) {
        MpfrValue c(w), n(w);
        CorrectionDim(d, base, m, k == 0 ? beta_fast : beta_slow, c);
        if (k == 0) {
          mpfr_floor(n, c);
        } else {
          mpfr_ceil(n, c);
        }
        bool above;
        // c is never an integer (see kMaxDecisionPrecision); it is decided
        // once its error interval holds no integer.
        if ((Separated(c, n, 12, &above) || w >= kMaxDecisionPrecision)) {
          ends[k] = mpfr_get_d(n, MPFR_RNDN);  // |c| < 2^40: exact
          break;
        }
      }
    }
    mpfr_set_d(low, std::max(ends[0], 0.0), MPFR_RNDN);
    mpfr_set_d(high, std::min(ends[1], static_cast<double>(d - 1)), MPFR_RNDN);
  } else {
    CorrectionDim(d, base, m, beta_fast, low);
    CorrectionDim(d, base, m, beta_slow, high);
    if (mpfr_sgn(low) < 0) mpfr_set_zero(low, 1);
    if (mpfr_cmp_ui(high, d - 1) > 0) mpfr_set_ui(high, d - 1, MPFR_RNDN);
  }
  if (mpfr_equal_p(low, high)) {
    // HF: "if min == max: max += 0.001  # Prevent singularity" (the real
    // 1/1000 here).
    MpfrValue milli(p);
    mpfr_set_ui(milli, 1, MPFR_RNDN);
    mpfr_div_ui(milli, milli, 1000, MPFR_RNDN);
    mpfr_add(high, high, milli, MPFR_RNDN);
  }
}

// Bits of guard the multiplier of a scheme needs beyond the frequency's:
// Llama 3's smooth band amplifies the error of f_i by up to
// factor * high / (high - low).
int GuardBits(const RopeScaling& r) {
  if (r.type != RopeType::kLlama3) return 16;
  const double amp =
      r.factor * r.high_freq_factor / (r.high_freq_factor - r.low_freq_factor);
  return 16 + static_cast<int>(std::ceil(std::log2(std::max(amp, 1.0))));
}

// Evaluates f'_i for one (rope, d, base) at a working precision p.
class ScaledFrequencyEvaluator {
 public:
  ScaledFrequencyEvaluator(const RopeScaling& r, uint32_t d, double base,
                           mpfr_prec_t p)
      : r_(r), d_(d), base_(base), p_(p), a_(p), b_(p), inv_factor_(p) {
    if (r.type == RopeType::kLinear || r.type == RopeType::kYarn ||
        r.type == RopeType::kLlama3) {
      // 1 / factor rounded once to p bits, as each m_i used to compute it.
      mpfr_set_ui(inv_factor_, 1, MPFR_RNDN);
      mpfr_div_d(inv_factor_, inv_factor_, r.factor, MPFR_RNDN);
    }
    switch (r.type) {
      case RopeType::kDynamic: {
        // a_ = ln s with s = factor * L / M - (factor - 1), L = max(seq, M).
        const uint32_t m = r.original_max_position_embeddings;
        const uint32_t l = std::max(r.seq_len, m);
        mpfr_set_d(a_, r.factor, MPFR_RNDN);
        mpfr_mul_ui(a_, a_, l, MPFR_RNDN);
        mpfr_div_ui(a_, a_, m, MPFR_RNDN);
        mpfr_sub_d(a_, a_, r.factor, MPFR_RNDN);
        mpfr_add_ui(a_, a_, 1, MPFR_RNDN);
        mpfr_log(a_, a_, MPFR_RNDN);
        break;
      }
      case RopeType::kYarn:
        YarnRampEnds(r, d, base, a_, b_);  // a_ = low, b_ = high
        ramp_rises_ = mpfr_cmp(b_, a_) > 0;
        break;
      default:
        break;
    }
  }

  // f'_i at precision p, then rounded to out's precision.
  void Frequency(uint32_t i, mpfr_ptr out) const {
    MpfrValue f(p_);
    PlainFrequency(d_, base_, i, f);
    FromPlain(i, f, out);
  }

  // f'_i from f = f_i at precision p within PlainFrequency's bound
  // (relative error <= 2^(12 - p)), rounded to out's precision.
  void FromPlain(uint32_t i, mpfr_ptr f, mpfr_ptr out) const {
    MpfrValue m(p_);
    Multiplier(i, f, m);
    mpfr_mul(out, f, m, MPFR_RNDN);
  }

  mpfr_prec_t precision() const { return p_; }

 private:
  // m_i, given f = f_i.
  void Multiplier(uint32_t i, mpfr_ptr f, mpfr_ptr m) const {
    switch (r_.type) {
      case RopeType::kDefault:
        mpfr_set_ui(m, 1, MPFR_RNDN);
        return;
      case RopeType::kLinear:
        mpfr_set(m, inv_factor_, MPFR_RNDN);
        return;
      case RopeType::kDynamic:
        // base'^(-2i/d) / base^(-2i/d) = s^(-2i/(d-2)).
        mpfr_mul_si(m, a_, -2 * static_cast<long>(i), MPFR_RNDN);
        mpfr_div_ui(m, m, d_ - 2, MPFR_RNDN);
        mpfr_exp(m, m, MPFR_RNDN);
        return;
      case RopeType::kYarn: {
        // r = clamp((i - low) / (high - low), 0, 1); m = 1 - r + r / factor.
        if (ramp_rises_) {
          // Outside the ramp, the same m as the ramp's arithmetic below
          // gives, without it: i <= low makes the rounded r <= 0, so m =
          // (1 - 1) / factor + 1 = 1 exactly; i >= high makes RN(i - low)
          // >= RN(high - low) (rounding is monotone), so r >= 1 and m =
          // RN(1 / factor).
          if (mpfr_cmp_ui(a_, i) >= 0) {
            mpfr_set_ui(m, 1, MPFR_RNDN);
            return;
          }
          if (mpfr_cmp_ui(b_, i) <= 0) {
            mpfr_set(m, inv_factor_, MPFR_RNDN);
            return;
          }
        }
        MpfrValue r(p_), span(p_);
        mpfr_ui_sub(r, i, a_, MPFR_RNDN);
        mpfr_sub(span, b_, a_, MPFR_RNDN);
        mpfr_div(r, r, span, MPFR_RNDN);
        if (mpfr_sgn(r.get()) < 0) mpfr_set_zero(r, 1);
        if (mpfr_cmp_ui(r, 1) > 0) mpfr_set_ui(r, 1, MPFR_RNDN);
        mpfr_ui_sub(r, 1, r, MPFR_RNDN);  // HF ramps the extrapolation: 1 - r
        BlendByFactor(r, m);
        return;
      }
      case RopeType::kLlama3: {
        // u = M / w_i = M f_i / (2 pi); bands decided on the real u.
        mpfr_prec_t w = p_;
        for (;;) {
          MpfrValue fw(w), u(w), two_pi(w), lo(w), hi(w);
          if (w == p_) {
            mpfr_set(fw, f, MPFR_RNDN);  // f_i at p, within the same bound
          } else {
            PlainFrequency(d_, base_, i, fw);
          }
          TwoPi(two_pi);
          mpfr_mul_ui(u, fw, r_.original_max_position_embeddings, MPFR_RNDN);
          mpfr_div(u, u, two_pi, MPFR_RNDN);
          mpfr_set_d(lo, r_.low_freq_factor, MPFR_RNDN);
          mpfr_set_d(hi, r_.high_freq_factor, MPFR_RNDN);
          bool above_hi, above_lo;
          const bool decided = (Separated(u, hi, 16, &above_hi) &&
                                Separated(u, lo, 16, &above_lo)) ||
                               w >= kMaxDecisionPrecision;
          if (!decided) {
            w *= 2;
            continue;
          }
          if (above_hi) {  // w_i < M / high_freq_factor: high frequency
            mpfr_set_ui(m, 1, MPFR_RNDN);
          } else if (!above_lo) {  // w_i > M / low_freq_factor
            mpfr_set(m, inv_factor_, MPFR_RNDN);
          } else {
            // s = (u - low) / (high - low), at p (u at p from f).
            MpfrValue s(p_), up(p_), tp(p_);
            TwoPi(tp);
            mpfr_mul_ui(up, f, r_.original_max_position_embeddings, MPFR_RNDN);
            mpfr_div(up, up, tp, MPFR_RNDN);
            mpfr_sub_d(s, up, r_.low_freq_factor, MPFR_RNDN);
            mpfr_set_d(tp, r_.high_freq_factor, MPFR_RNDN);
            mpfr_sub_d(tp, tp, r_.low_freq_factor, MPFR_RNDN);
            mpfr_div(s, s, tp, MPFR_RNDN);
            BlendByFactor(s, m);
          }
          return;
        }
      }
      case RopeType::kLongRope: {
        const bool long_context =
            r_.seq_len > r_.original_max_position_embeddings;
        const double e = (long_context ? r_.long_factor : r_.short_factor)[i];
        mpfr_set_ui(m, 1, MPFR_RNDN);
        mpfr_div_d(m, m, e, MPFR_RNDN);
        return;
      }
    }
  }

  // m = (1 - s) / factor + s, for s in [0, 1].
  void BlendByFactor(mpfr_ptr s, mpfr_ptr m) const {
    MpfrValue t(p_);
    mpfr_ui_sub(t, 1, s, MPFR_RNDN);
    mpfr_div_d(t, t, r_.factor, MPFR_RNDN);
    mpfr_add(m, t, s, MPFR_RNDN);
  }

  const RopeScaling& r_;
  const uint32_t d_;
  const double base_;
  const mpfr_prec_t p_;
  mutable MpfrValue a_, b_;       // scheme constants (see the constructor)
  mutable MpfrValue inv_factor_;  // linear, YaRN, Llama 3: RN(1 / factor)
  bool ramp_rises_ = false;       // YaRN: high > low
};

// g(m) = 0.1 m ln(factor) + 1 (1 when factor <= 1), at out's precision.
void YarnMscale(double factor, double mscale, mpfr_ptr out) {
  if (factor <= 1) {
    mpfr_set_ui(out, 1, MPFR_RNDN);
    return;
  }
  mpfr_set_d(out, factor, MPFR_RNDN);
  mpfr_log(out, out, MPFR_RNDN);
  mpfr_mul_d(out, out, mscale, MPFR_RNDN);
  mpfr_div_ui(out, out, 10, MPFR_RNDN);
  mpfr_add_ui(out, out, 1, MPFR_RNDN);
}

// The INVALID_ARGUMENT of a scheme whose attention factor `a` is outside
// [2^-16, 2] (over 2 when `over`), naming the field that put it there, its
// value and its limit.
absl::Status AttentionFactorOutOfRange(const RopeScaling& r, mpfr_srcptr real,
                                       bool over) {
  // The double nearest a, unless that is the limit itself: then 25 digits.
  std::string a = ShortestDouble(mpfr_get_d(real, MPFR_RNDN));
  if (mpfr_get_d(real, MPFR_RNDN) == (over ? 2 : 0x1p-16)) {
    char buf[64];
    mpfr_snprintf(buf, sizeof buf, "%.25Rg", real);
    a = buf;
  }
  const std::string bound =
      over ? "must be <= 2" : "must be >= 2^-16 = 1.52587890625e-05";
  if (r.attention_factor != 0) {
    return Invalid("attention_factor",
                   absl::StrCat("is ", ShortestDouble(r.attention_factor),
                                over ? ", over the limit 2"
                                     : ", under the limit 2^-16 = "
                                       "1.52587890625e-05",
                                " (it must be in [2^-16, 2])"));
  }
  if (r.type == RopeType::kYarn && r.mscale != 0 && r.mscale_all_dim != 0) {
    // g(mscale) / g(mscale_all_dim): too large a numerator or denominator.
    return Invalid(
        over ? "mscale" : "mscale_all_dim",
        absl::StrCat("is ", ShortestDouble(over ? r.mscale : r.mscale_all_dim),
                     " with ", over ? "mscale_all_dim " : "mscale ",
                     ShortestDouble(over ? r.mscale_all_dim : r.mscale),
                     " and factor ", ShortestDouble(r.factor),
                     ": the attention factor g(mscale) / g(mscale_all_dim) = ",
                     a, " (g(m) = 0.1 m ln(factor) + 1) ", bound,
                     "; or set attention_factor"));
  }
  if (r.type == RopeType::kYarn) {
    // 0.1 ln(factor) + 1 <= 2 iff factor <= e^10: the largest such double.
    MpfrValue limit(53);
    mpfr_set_ui(limit, 10, MPFR_RNDN);
    mpfr_exp(limit, limit, MPFR_RNDD);
    return Invalid(
        "factor",
        absl::StrCat("is ", ShortestDouble(r.factor), ", over the limit ",
                     ShortestDouble(mpfr_get_d(limit, MPFR_RNDN)),
                     " (e^10): YaRN's default attention factor 0.1 "
                     "ln(factor) + 1 = ",
                     a, " ", bound,
                     "; or set attention_factor (or mscale and "
                     "mscale_all_dim)"));
  }
  // LongRoPE: sqrt(1 + ln(factor) / ln(M)) <= 2 iff M^3 >= factor (a is
  // never under 1). factor <= 65536, so only M <= 40 fails: the least M.
  double least = std::ceil(std::cbrt(r.factor));
  while (least > 2 && (least - 1) * (least - 1) * (least - 1) >= r.factor) {
    --least;
  }
  while (least * least * least < r.factor) ++least;
  return Invalid(
      "original_max_position_embeddings",
      absl::StrCat("is ", r.original_max_position_embeddings,
                   ", under the limit ", least, " for factor ",
                   ShortestDouble(r.factor),
                   ": LongRoPE's default attention factor sqrt(1 + "
                   "ln(factor) / ln(M)) = ",
                   a, " ", bound, " (M^3 >= factor); or set attention_factor"));
}

}  // namespace

const char* RopeTypeName(RopeType type) {
  switch (type) {
    case RopeType::kDefault:
      return "default";
    case RopeType::kLinear:
      return "linear";
    case RopeType::kDynamic:
      return "dynamic";
    case RopeType::kYarn:
      return "yarn";
    case RopeType::kLlama3:
      return "llama3";
    case RopeType::kLongRope:
      return "longrope";
  }
  return "?";
}

absl::Status ValidateRope(const RopeScaling& r, uint32_t d) {
  const RopeType t = r.type;
  const std::string scheme = absl::StrCat(" (rope type ", RopeTypeName(t), ")");
  // Which fields each scheme reads; any other must be unset.
  const bool uses_factor = t != RopeType::kDefault;
  const bool uses_m = t == RopeType::kDynamic || t == RopeType::kYarn ||
                      t == RopeType::kLlama3 || t == RopeType::kLongRope;
  const bool uses_seq = t == RopeType::kDynamic || t == RopeType::kLongRope;
  const bool yarn = t == RopeType::kYarn;
  const bool uses_attention = yarn || t == RopeType::kLongRope;
  const bool llama3 = t == RopeType::kLlama3;
  const bool longrope = t == RopeType::kLongRope;
  struct Unused {
    const char* field;
    bool set;
    bool used;
  };
  const Unused fields[] = {
      {"factor", r.factor != 0, uses_factor},
      {"original_max_position_embeddings",
       r.original_max_position_embeddings != 0, uses_m},
      {"seq_len", r.seq_len != 0, uses_seq},
      {"beta_fast", r.beta_fast != 0, yarn},
      {"beta_slow", r.beta_slow != 0, yarn},
      {"mscale", r.mscale != 0, yarn},
      {"mscale_all_dim", r.mscale_all_dim != 0, yarn},
      {"truncate", r.truncate.has_value(), yarn},
      {"attention_factor", r.attention_factor != 0, uses_attention},
      {"low_freq_factor", r.low_freq_factor != 0, llama3},
      {"high_freq_factor", r.high_freq_factor != 0, llama3},
      {"short_factor", !r.short_factor.empty(), longrope},
      {"long_factor", !r.long_factor.empty(), longrope},
  };
  for (const Unused& f : fields) {
    if (f.set && !f.used) return Invalid(f.field, "is not used" + scheme);
  }
  if (uses_factor && (!longrope || r.factor != 0)) {
    if (absl::Status s = CheckFactorRange("factor", r.factor); !s.ok()) {
      return s;
    }
  }
  if (uses_m) {
    if (absl::Status s = CheckLength("original_max_position_embeddings",
                                     r.original_max_position_embeddings, true);
        !s.ok()) {
      return s;
    }
  }
  if (uses_seq) {
    if (absl::Status s = CheckLength("seq_len", r.seq_len, false); !s.ok()) {
      return s;
    }
  }
  if (t == RopeType::kDynamic && d < 4) {
    return Invalid("type", absl::StrCat("dynamic needs d >= 4 (its base is "
                                        "raised to d/(d-2)), got d=",
                                        d));
  }
  if (yarn) {
    for (const auto& [name, v] :
         {std::pair<const char*, double>{"beta_fast", r.beta_fast},
          {"beta_slow", r.beta_slow},
          {"mscale", r.mscale},
          {"mscale_all_dim", r.mscale_all_dim}}) {
      if (v != 0) {
        if (absl::Status s = CheckPositive(name, v); !s.ok()) return s;
      }
    }
  }
  if (uses_attention && r.attention_factor != 0) {
    if (absl::Status s = CheckPositive("attention_factor", r.attention_factor);
        !s.ok()) {
      return s;
    }
  }
  if (llama3) {
    for (const auto& [name, v] :
         {std::pair<const char*, double>{"low_freq_factor", r.low_freq_factor},
          {"high_freq_factor", r.high_freq_factor}}) {
      if (absl::Status s = CheckPositive(name, v); !s.ok()) return s;
    }
    if (!(r.low_freq_factor < r.high_freq_factor)) {
      return Invalid("low_freq_factor",
                     absl::StrCat("must be < high_freq_factor, got ",
                                  ShortestDouble(r.low_freq_factor), " and ",
                                  ShortestDouble(r.high_freq_factor)));
    }
  }
  if (longrope) {
    if (absl::Status s = CheckList("short_factor", r.short_factor, d);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckList("long_factor", r.long_factor, d); !s.ok()) {
      return s;
    }
    if (r.factor > 1 && r.attention_factor == 0 &&
        r.original_max_position_embeddings < 2) {
      return Invalid("original_max_position_embeddings",
                     absl::StrCat("must be >= 2 for the default attention "
                                  "factor sqrt(1 + ln(factor) / ln(M)) with "
                                  "factor ",
                                  ShortestDouble(r.factor), ", got ",
                                  r.original_max_position_embeddings));
    }
  }
  if (uses_attention) {
    // The kernels' rounding assumes |a * cos| <= 2 and no underflow of a.
    MpfrValue a(64);
    AttentionFactorMpfr(r, a);
    bool over = mpfr_cmp_d(a, 2) > 0;
    bool under = mpfr_cmp_d(a, 0x1p-16) < 0;
    if (longrope && r.attention_factor == 0) {
      // sqrt(1 + ln(factor) / ln(M)) is in [1, 2] iff factor <= M^3,
      // decided exactly: at factor = M^3 it is exactly 2, which the 64-bit
      // value above may put on either side. Only M <= 40 can fail (factor
      // <= 65536 < 41^3), and there M^3 is an exact double.
      const double m = r.original_max_position_embeddings;
      over = r.factor > 1 && m <= 40 && r.factor > m * m * m;
      under = false;
    }
    if (over || under) return AttentionFactorOutOfRange(r, a, over);
  }
  return absl::OkStatus();
}

bool HasAttentionFactor(const RopeScaling& r) {
  if (r.type != RopeType::kYarn && r.type != RopeType::kLongRope) return false;
  if (r.attention_factor != 0) return r.attention_factor != 1.0;
  if (r.factor <= 1) return false;
  if (r.type == RopeType::kYarn && r.mscale != 0 && r.mscale_all_dim != 0) {
    return r.mscale != r.mscale_all_dim;
  }
  return true;
}

void AttentionFactorMpfr(const RopeScaling& r, mpfr_ptr out) {
  if (!HasAttentionFactor(r)) {
    mpfr_set_ui(out, 1, MPFR_RNDN);
    return;
  }
  if (r.attention_factor != 0) {
    mpfr_set_d(out, r.attention_factor, MPFR_RNDN);
    return;
  }
  const mpfr_prec_t p = mpfr_get_prec(out) + 16;
  MpfrValue a(p);
  if (r.type == RopeType::kYarn) {
    if (r.mscale != 0 && r.mscale_all_dim != 0) {
      MpfrValue g(p);
      YarnMscale(r.factor, r.mscale, a);
      YarnMscale(r.factor, r.mscale_all_dim, g);
      mpfr_div(a, a, g, MPFR_RNDN);
    } else {
      YarnMscale(r.factor, 1, a);
    }
  } else {  // LongRoPE: sqrt(1 + ln(factor) / ln(M))
    MpfrValue lm(p);
    mpfr_set_d(a, r.factor, MPFR_RNDN);
    mpfr_log(a, a, MPFR_RNDN);
    mpfr_set_ui(lm, r.original_max_position_embeddings, MPFR_RNDN);
    mpfr_log(lm, lm, MPFR_RNDN);
    mpfr_div(a, a, lm, MPFR_RNDN);
    mpfr_add_ui(a, a, 1, MPFR_RNDN);
    mpfr_sqrt(a, a, MPFR_RNDN);
  }
  mpfr_set(out, a, MPFR_RNDN);
}

void ScaledFrequencyMpfr(const RopeScaling& rope, uint32_t d, double base,
                         uint32_t i, mpfr_ptr out) {
  // Working precision: out's w plus the scheme's guard plus 32, so the
  // multiplier and the product add far less than the 2^(12 - w) claimed.
  const mpfr_prec_t p = mpfr_get_prec(out) + GuardBits(rope) + 32;
  ScaledFrequencyEvaluator(rope, d, base, p).Frequency(i, out);
}

void ScaledFrequencies192(const RopeScaling& rope, uint32_t d, double base,
                          mpfr_ptr out) {
  // Powers instead of d/2 exponentials (a cold one-row call on a new family
  // pays for this loop). At d = 4096, best of 5, load average ~7: 0.1 ms
  // (dynamic) to 1.3 ms (Llama 3, whose bands are decided per pair), where
  // ScaledFrequencyMpfr per pair took 10-26 ms.
  // g^i at q = p + 16 bits, g within 2^(12 - q) of its real value g*: the
  // i - 1 products add i - 1 roundings of 2^-q, so
  // |g^i - g*^i| <= i (2^(12 - q) + 2^-q) (1 + 2^-40) g*^i
  //             <  2^15 2^(12.01 - q) g*^i = 2^(11.01 - p) g*^i
  // for i < 2^15 (i <= d/2 - 1 and d <= 65536, the proven max_d);
  // rounded to p bits, within 2^(11.01 - p) + 2^-p < 2^(12 - p): the bound
  // PlainFrequency gives at p, all FromPlain (and Llama 3's band decision
  // at p) assume. tests/numerics/rope_reference_test.cc checks every pair
  // at d = 4096 and 65536 against mpfr_pow.
  const ScaledFrequencyEvaluator eval(rope, d, base,
                                      192 + GuardBits(rope) + 32);
  const mpfr_prec_t p = eval.precision();
  const mpfr_prec_t q = p + 16;
  const uint32_t half = d / 2;
  // Default and dynamic NTK are powers themselves, f'_i = f'_1^i (dynamic:
  // base'^(-2i/d)); the powers of f'_1 (within 2^(12 - q) by
  // ScaledFrequencyMpfr) are then within 2^(11.01 - p) = 2^-228.99 of f'_i
  // (p >= 240), and their rounding to 192 bits within 2^-191.9. The other
  // schemes scale the powers of f_1 by their multiplier.
  const bool powers_of_scaled =
      rope.type == RopeType::kDefault || rope.type == RopeType::kDynamic;
  MpfrValue g(q), power(q), f(p);
  if (half > 1) {
    if (powers_of_scaled) {
      ScaledFrequencyMpfr(rope, d, base, 1, g);
    } else {
      PlainFrequency(d, base, 1, g);
    }
  }
  mpfr_set_ui(power, 1, MPFR_RNDN);  // f_0 = f'_0 / m_0 = 1 exactly
  for (uint32_t i = 0; i < half; ++i) {
    if (i == 1) {
      mpfr_set(power, g, MPFR_RNDN);
    } else if (i > 1) {
      mpfr_mul(power, power, g, MPFR_RNDN);
    }
    if (powers_of_scaled) {
      mpfr_set(out + i, power, MPFR_RNDN);
    } else {
      mpfr_set(f, power, MPFR_RNDN);
      eval.FromPlain(i, f, out + i);
    }
  }
}

}  // namespace posenc
