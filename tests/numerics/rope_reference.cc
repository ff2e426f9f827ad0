#include "tests/numerics/rope_reference.h"

#include <algorithm>

#include "tests/numerics/mpfr_reference.h"

namespace posenc::testing {
namespace {

constexpr mpfr_prec_t kFirstPrecision = 512;

// RAII MPFR number.
class Num {
 public:
  explicit Num(mpfr_prec_t prec) { mpfr_init2(v_, prec); }
  ~Num() { mpfr_clear(v_); }
  Num(const Num&) = delete;
  Num& operator=(const Num&) = delete;
  operator mpfr_ptr() { return v_; }  // NOLINT: MPFR-style argument
  mpfr_ptr get() { return v_; }

 private:
  mpfr_t v_;
};

// g(m) = 0.1 m ln(factor) + 1, or 1 when factor <= 1 (HF get_mscale).
void Mscale(double factor, double m, mpfr_ptr out) {
  if (factor <= 1) {
    mpfr_set_ui(out, 1, MPFR_RNDN);
    return;
  }
  const mpfr_prec_t p = mpfr_get_prec(out) + 32;
  Num l(p), t(p);
  // ln(factor) = log2(factor) * ln 2, to differ from core's mpfr_log.
  mpfr_set_d(t, factor, MPFR_RNDN);
  mpfr_log2(l, t, MPFR_RNDN);
  mpfr_const_log2(t, MPFR_RNDN);
  mpfr_mul(l, l, t, MPFR_RNDN);
  mpfr_mul_d(l, l, m, MPFR_RNDN);
  mpfr_div_ui(l, l, 10, MPFR_RNDN);
  mpfr_add_ui(out, l, 1, MPFR_RNDN);
}

}  // namespace

// The constants of one precision, and f'_i computed on first use: a check
// samples a few columns, and d/2 frequencies at 576 bits cost ~20 ms for
// d = 65536 (and ~1 s under the fuzz build's sanitizers).
struct RopeReference::Set {
  explicit Set(mpfr_prec_t prec) : p(prec), b(prec), low(prec), high(prec) {}
  mpfr_prec_t p;  // the working precision
  Num b;          // the base raised to -2i/d (dynamic rescales it)
  Num low, high;  // YaRN's ramp ends
  std::vector<std::unique_ptr<Num>> freq;  // d/2 entries, null until used
  std::unique_ptr<Num> attention;
};

RopeReference::RopeReference(const RopeScaling* rope, uint32_t d, double base)
    : d_(d), base_(base) {
  if (rope != nullptr) rope_ = *rope;
}

RopeReference::~RopeReference() = default;

RopeReference::Set& RopeReference::SetAt(mpfr_prec_t prec) {
  auto it = sets_.find(prec);
  if (it != sets_.end()) return *it->second;
  const mpfr_prec_t p = prec + 64;  // every intermediate carries 64 guard bits
  auto set = std::make_unique<Set>(p);
  const RopeScaling& r = rope_;
  const uint32_t half = d_ / 2;
  const uint32_t m = r.original_max_position_embeddings;
  set->freq.resize(half);

  // The base actually raised to -2i/d (dynamic rescales it).
  Num& b = set->b;
  mpfr_set_d(b, base_, MPFR_RNDN);
  if (r.type == RopeType::kDynamic) {
    // base' = base * (factor * L / M - (factor - 1))^(d / (d - 2)).
    const uint32_t l = std::max(r.seq_len == 0 ? m : r.seq_len, m);
    Num t(p), u(p), e(p);
    mpfr_set_d(t, r.factor, MPFR_RNDN);
    mpfr_mul_ui(t, t, l, MPFR_RNDN);
    mpfr_div_ui(t, t, m, MPFR_RNDN);
    mpfr_set_d(u, r.factor, MPFR_RNDN);
    mpfr_sub_ui(u, u, 1, MPFR_RNDN);
    mpfr_sub(t, t, u, MPFR_RNDN);
    mpfr_set_ui(e, d_, MPFR_RNDN);
    mpfr_div_ui(e, e, d_ - 2, MPFR_RNDN);
    mpfr_pow(t, t, e, MPFR_RNDN);
    mpfr_mul(b, b, t, MPFR_RNDN);
  }

  // YaRN ramp ends.
  Num& low = set->low;
  Num& high = set->high;
  if (r.type == RopeType::kYarn) {
    const double beta[2] = {r.beta_fast == 0 ? 32.0 : r.beta_fast,
                            r.beta_slow == 0 ? 1.0 : r.beta_slow};
    for (int k = 0; k < 2; ++k) {
      // c(beta) = (d / 2) * log2(M / (2 pi beta)) / log2(base).
      mpfr_ptr c = k == 0 ? low.get() : high.get();
      Num t(p), lb(p);
      mpfr_const_pi(t, MPFR_RNDN);
      mpfr_mul_2ui(t, t, 1, MPFR_RNDN);
      mpfr_mul_d(t, t, beta[k], MPFR_RNDN);
      mpfr_ui_div(t, m, t, MPFR_RNDN);
      mpfr_log2(t, t, MPFR_RNDN);
      mpfr_set_d(lb, base_, MPFR_RNDN);
      mpfr_log2(lb, lb, MPFR_RNDN);
      mpfr_div(t, t, lb, MPFR_RNDN);
      mpfr_mul_ui(c, t, half, MPFR_RNDN);
    }
    if (r.truncate.value_or(true)) {
      mpfr_floor(low.get(), low.get());
      mpfr_ceil(high.get(), high.get());
    }
    if (mpfr_sgn(low.get()) < 0) mpfr_set_ui(low, 0, MPFR_RNDN);
    if (mpfr_cmp_ui(high, d_ - 1) > 0) mpfr_set_ui(high, d_ - 1, MPFR_RNDN);
    if (mpfr_equal_p(low, high)) {
      Num t(p);
      mpfr_set_ui(t, 1, MPFR_RNDN);
      mpfr_div_ui(t, t, 1000, MPFR_RNDN);
      mpfr_add(high, high, t, MPFR_RNDN);
    }
  }

  set->attention = std::make_unique<Num>(p);
  mpfr_ptr a = *set->attention;
  mpfr_set_ui(a, 1, MPFR_RNDN);
  if (r.attention_factor != 0) {
    mpfr_set_d(a, r.attention_factor, MPFR_RNDN);
  } else if (r.type == RopeType::kYarn) {
    if (r.mscale != 0 && r.mscale_all_dim != 0) {
      Num g(p);
      Mscale(r.factor, r.mscale, a);
      Mscale(r.factor, r.mscale_all_dim, g);
      mpfr_div(a, a, g, MPFR_RNDN);
    } else {
      Mscale(r.factor, 1, a);
    }
  } else if (r.type == RopeType::kLongRope && r.factor > 1) {
    // sqrt(1 + ln(factor) / ln(M)) = sqrt(1 + log2(factor) / log2(M)).
    Num t(p);
    mpfr_set_d(a, r.factor, MPFR_RNDN);
    mpfr_log2(a, a, MPFR_RNDN);
    mpfr_set_ui(t, m, MPFR_RNDN);
    mpfr_log2(t, t, MPFR_RNDN);
    mpfr_div(a, a, t, MPFR_RNDN);
    mpfr_add_ui(a, a, 1, MPFR_RNDN);
    mpfr_sqrt(a, a, MPFR_RNDN);
  }
  Set& ref = *set;
  sets_.emplace(prec, std::move(set));
  return ref;
}

mpfr_ptr RopeReference::FreqAt(Set& set, uint32_t i) {
  if (set.freq[i] != nullptr) return *set.freq[i];
  const mpfr_prec_t p = set.p;
  const RopeScaling& r = rope_;
  const uint32_t m = r.original_max_position_embeddings;
  Num& b = set.b;
  Num& low = set.low;
  Num& high = set.high;
  // f_i = b^(-2i/d) by mpfr_pow.
  auto f = std::make_unique<Num>(p);
  Num e(p);
  mpfr_set_si(e, -2 * static_cast<long>(i), MPFR_RNDN);
  mpfr_div_ui(e, e, d_, MPFR_RNDN);
  mpfr_pow(*f, b, e, MPFR_RNDN);
  switch (r.type) {
    case RopeType::kDefault:
    case RopeType::kDynamic:
      break;
    case RopeType::kLinear:
      mpfr_div_d(*f, *f, r.factor, MPFR_RNDN);
      break;
    case RopeType::kYarn: {
      // r_i = clamp((i - low) / (high - low), 0, 1);
      // f'_i = f_i (1 - r_i) + (f_i / factor) r_i.
      Num ramp(p), t(p), g(p);
      mpfr_ui_sub(ramp, i, low, MPFR_RNDN);
      mpfr_sub(t, high, low, MPFR_RNDN);
      mpfr_div(ramp, ramp, t, MPFR_RNDN);
      if (mpfr_sgn(ramp.get()) < 0) mpfr_set_ui(ramp, 0, MPFR_RNDN);
      if (mpfr_cmp_ui(ramp, 1) > 0) mpfr_set_ui(ramp, 1, MPFR_RNDN);
      mpfr_ui_sub(t, 1, ramp, MPFR_RNDN);
      mpfr_mul(t, t, *f, MPFR_RNDN);
      mpfr_div_d(g, *f, r.factor, MPFR_RNDN);
      mpfr_mul(g, g, ramp, MPFR_RNDN);
      mpfr_add(*f, t, g, MPFR_RNDN);
      break;
    }
    case RopeType::kLlama3: {
      // w_i = 2 pi / f_i; bands at M / high_freq_factor, M / low_freq_factor.
      Num w(p), lim(p), s(p), t(p);
      mpfr_const_pi(w, MPFR_RNDN);
      mpfr_mul_2ui(w, w, 1, MPFR_RNDN);
      mpfr_div(w, w, *f, MPFR_RNDN);
      mpfr_set_ui(lim, m, MPFR_RNDN);
      mpfr_div_d(lim, lim, r.high_freq_factor, MPFR_RNDN);
      if (mpfr_less_p(w, lim)) break;  // high frequencies: f_i
      mpfr_set_ui(lim, m, MPFR_RNDN);
      mpfr_div_d(lim, lim, r.low_freq_factor, MPFR_RNDN);
      if (mpfr_greater_p(w, lim)) {  // low frequencies: f_i / factor
        mpfr_div_d(*f, *f, r.factor, MPFR_RNDN);
        break;
      }
      // s = (M / w - low) / (high - low); f' = (1 - s) f / factor + s f.
      mpfr_ui_div(s, m, w, MPFR_RNDN);
      mpfr_sub_d(s, s, r.low_freq_factor, MPFR_RNDN);
      mpfr_set_d(t, r.high_freq_factor, MPFR_RNDN);
      mpfr_sub_d(t, t, r.low_freq_factor, MPFR_RNDN);
      mpfr_div(s, s, t, MPFR_RNDN);
      mpfr_ui_sub(t, 1, s, MPFR_RNDN);
      mpfr_mul(t, t, *f, MPFR_RNDN);
      mpfr_div_d(t, t, r.factor, MPFR_RNDN);
      mpfr_mul(s, s, *f, MPFR_RNDN);
      mpfr_add(*f, t, s, MPFR_RNDN);
      break;
    }
    case RopeType::kLongRope: {
      const std::vector<double>& e_list =
          r.seq_len > m ? r.long_factor : r.short_factor;
      mpfr_div_d(*f, *f, e_list[i], MPFR_RNDN);
      break;
    }
  }
  set.freq[i] = std::move(f);
  return *set.freq[i];
}

std::array<uint64_t, 4> RopeReference::Bits(uint32_t i, uint32_t pos,
                                            bool is_sin) {
  std::array<uint64_t, 4> out{};
  for (mpfr_prec_t prec = kFirstPrecision;; prec *= 2) {
    Set& s = SetAt(prec);
    Num x(prec + 64), v(prec);
    if (pos == 0) {
      // sin 0 = +0 exactly, cos 0 = 1: the value is +0 or a.
      if (is_sin) {
        mpfr_set_zero(v, 1);
      } else {
        mpfr_set(v, *s.attention, MPFR_RNDN);
      }
      for (int k = 0; k < 4; ++k) {
        out[k] = RoundMpfrToBits(v, static_cast<DType>(k));
      }
      return out;
    }
    mpfr_mul_ui(x, FreqAt(s, i), pos, MPFR_RNDN);
    if (is_sin) {
      mpfr_sin(v, x, MPFR_RNDN);
    } else {
      mpfr_cos(v, x, MPFR_RNDN);
    }
    mpfr_mul(v, v, *s.attention, MPFR_RNDN);
    // f' and a are within ~2^(20 - prec) relative; pos * f' < 2^25 rad, so
    // the value is within ~2^(50 - prec) absolute. Trust the rounding only
    // when it is decided with 128 bits to spare below that.
    bool ok = true;
    for (int k = 0; k < 4 && ok; ++k) {
      ok = mpfr_can_round(
               v, prec - 128 - std::max<mpfr_exp_t>(0, -mpfr_get_exp(v)),
               MPFR_RNDN, MPFR_RNDZ,
               DTypePrecision(static_cast<DType>(k)) + 1) != 0;
    }
    if (ok) {
      for (int k = 0; k < 4; ++k) {
        out[k] = RoundMpfrToBits(v, static_cast<DType>(k));
      }
      return out;
    }
    ++retries_;
    if (prec >= 8192) {  // never expected; fall through with what we have
      for (int k = 0; k < 4; ++k) {
        out[k] = RoundMpfrToBits(v, static_cast<DType>(k));
      }
      return out;
    }
  }
}

double RopeReference::Frequency(uint32_t i) {
  return mpfr_get_d(FreqAt(SetAt(kFirstPrecision), i), MPFR_RNDN);
}

void RopeReference::FrequencyMpfr(uint32_t i, mpfr_ptr out) {
  mpfr_set(out, FreqAt(SetAt(kFirstPrecision), i), MPFR_RNDN);
}

double RopeReference::AttentionFactor() {
  return mpfr_get_d(*SetAt(kFirstPrecision).attention, MPFR_RNDN);
}

}  // namespace posenc::testing
