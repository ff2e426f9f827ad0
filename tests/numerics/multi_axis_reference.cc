#include "tests/numerics/multi_axis_reference.h"

#include <mpfr.h>

#include <stdexcept>

#include "tests/numerics/mpfr_reference.h"

namespace posenc::testing {
namespace {

// One frequency column: the coordinate it rotates by and its frequency
// theta^(-num / den) (before scale).
struct Column {
  uint32_t coordinate;
  uint32_t num;
  uint32_t den;
};

// The K frequency columns of a row (the "freqs" tensor's last axis).
std::vector<Column> FrequencyColumns(const EncodingSpec& spec) {
  std::vector<Column> cols;
  if (!spec.axes_dim.empty()) {
    // FLUX EmbedND: torch.cat([rope(ids[..., a], axes_dim[a], theta) for a],
    // dim=-3); rope's scale = arange(0, d, 2) / d.
    for (uint32_t a = 0; a < spec.axes_dim.size(); ++a) {
      const uint32_t d = spec.axes_dim[a];
      for (uint32_t k = 0; k < d; k += 2) cols.push_back({a, k, d});
    }
    return cols;
  }
  const uint32_t dim = spec.dim;
  const uint32_t half = dim / 2;
  const std::vector<uint32_t>& s = spec.mrope_section;
  if (spec.mrope_interleaved) {
    // freqs_t = freqs[0]; for dim, offset in enumerate((1, 2), start=1):
    //   freqs_t[..., offset:mrope_section[dim] * 3:3] = freqs[dim, ...].
    std::vector<uint32_t> coordinate(half, 0);
    for (uint32_t d = 1; d <= 2; ++d) {
      for (uint64_t idx = d; idx < uint64_t{s[d]} * 3 && idx < half; idx += 3) {
        coordinate[idx] = d;
      }
    }
    for (uint32_t i = 0; i < half; ++i) {
      cols.push_back({coordinate[i], 2 * i, dim});
    }
    return cols;
  }
  // apply_multimodal_rotary_pos_emb: emb = cat(freqs, freqs) (dim columns),
  // split by mrope_section * 2, chunk m from coordinate m % len(sections).
  std::vector<uint32_t> doubled(s);
  doubled.insert(doubled.end(), s.begin(), s.end());
  std::vector<uint32_t> coordinate;
  for (uint32_t m = 0; m < doubled.size(); ++m) {
    for (uint32_t k = 0; k < doubled[m]; ++k) {
      coordinate.push_back(m % static_cast<uint32_t>(s.size()));
    }
  }
  if (coordinate.size() != dim) {
    throw std::runtime_error("mrope_section does not cover dim");
  }
  for (uint32_t i = 0; i < half; ++i) {
    // Both halves of emb must rotate column i by the same coordinate, else
    // HF's cos would not be a rotate_half table.
    if (coordinate[i] != coordinate[half + i]) {
      throw std::runtime_error("the two halves of emb differ");
    }
    cols.push_back({coordinate[i], 2 * i, dim});
  }
  return cols;
}

// RNE_dtype(sin or cos(scale * x * theta^(-num / den))), of its negation
// when `negate`.
uint64_t ValueBits(const EncodingSpec& spec, const Column& col, double x,
                   bool is_sin, bool negate = false) {
  mpfr_t v;
  if (x == 0) {  // sin 0 = +0, cos 0 = 1
    mpfr_init2(v, 64);
    mpfr_set_ui(v, is_sin ? 0 : 1, MPFR_RNDN);
    const uint64_t bits = RoundMpfrToBits(v, spec.dtype);
    mpfr_clear(v);
    return bits;
  }
  for (mpfr_prec_t p = 320; p <= 20000; p *= 2) {
    mpfr_t e, f, a, lo, hi;
    mpfr_inits2(p + 64, e, f, a, v, lo, hi, static_cast<mpfr_ptr>(nullptr));
    mpfr_set_ui(e, col.num, MPFR_RNDN);
    mpfr_div_ui(e, e, col.den, MPFR_RNDN);
    mpfr_neg(e, e, MPFR_RNDN);
    mpfr_set_d(f, spec.max_period, MPFR_RNDN);
    mpfr_pow(f, f, e, MPFR_RNDN);  // omega = 1 / theta^(num / den)
    mpfr_mul_d(f, f, spec.scale, MPFR_RNDN);
    mpfr_div_ui(f, f, spec.scale_divisor, MPFR_RNDN);
    mpfr_mul_d(a, f, x, MPFR_RNDN);
    if (is_sin) {
      mpfr_sin(v, a, MPFR_RNDN);
    } else {
      mpfr_cos(v, a, MPFR_RNDN);
    }
    if (negate) mpfr_neg(v, v, MPFR_RNDN);
    // v is within ~2^(EXP(a) - p + 8) of the exact value: round both ends.
    mpfr_set_ui_2exp(lo, 1, mpfr_get_exp(a) - p + 16, MPFR_RNDN);
    mpfr_add(hi, v, lo, MPFR_RNDN);
    mpfr_sub(lo, v, lo, MPFR_RNDN);
    const uint64_t b0 = RoundMpfrToBits(lo, spec.dtype);
    const uint64_t b1 = RoundMpfrToBits(hi, spec.dtype);
    mpfr_clears(e, f, a, v, lo, hi, static_cast<mpfr_ptr>(nullptr));
    if (b0 == b1) return b0;
  }
  throw std::runtime_error("MultiAxisReferenceRow: undecided at 20000 bits");
}

// The sign bit of `dtype`.
uint64_t SignBit(DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
      return uint64_t{1} << 63;
    case DType::kFloat32:
      return uint64_t{1} << 31;
    default:
      return uint64_t{1} << 15;
  }
}

}  // namespace

std::vector<uint64_t> MultiAxisReferenceRow(const EncodingSpec& spec,
                                            const double* point) {
  const std::vector<Column> cols = FrequencyColumns(spec);
  const size_t k = cols.size();
  std::vector<uint64_t> sin(k), cos(k), minus_sin(k);
  for (size_t j = 0; j < k; ++j) {
    const double x = point[cols[j].coordinate];
    sin[j] = ValueBits(spec, cols[j], x, true);
    cos[j] = ValueBits(spec, cols[j], x, false);
    // torch's -sin(0) is -0.0; any other angle has sin != 0.
    minus_sin[j] =
        x == 0 ? SignBit(spec.dtype) : ValueBits(spec, cols[j], x, true, true);
  }
  std::vector<uint64_t> row;
  switch (spec.layout) {
    case Layout::kInterleaved:  // the paper: sin, cos per pair
      for (size_t j = 0; j < k; ++j) {
        row.push_back(sin[j]);
        row.push_back(cos[j]);
      }
      break;
    case Layout::kConcatSinCos:
      row = sin;
      row.insert(row.end(), cos.begin(), cos.end());
      break;
    case Layout::kConcatCosSin:
      row = cos;
      row.insert(row.end(), sin.begin(), sin.end());
      break;
    case Layout::kRotateHalf:  // HF: cos(cat(freqs, freqs)), then sin
      for (int rep = 0; rep < 2; ++rep)
        row.insert(row.end(), cos.begin(), cos.end());
      for (int rep = 0; rep < 2; ++rep)
        row.insert(row.end(), sin.begin(), sin.end());
      break;
    case Layout::kInterleavedPairs:  // repeat_interleave(2): cos, then sin
      for (size_t j = 0; j < k; ++j) {
        row.push_back(cos[j]);
        row.push_back(cos[j]);
      }
      for (size_t j = 0; j < k; ++j) {
        row.push_back(sin[j]);
        row.push_back(sin[j]);
      }
      break;
    case Layout::kRotationMatrix:
      // FLUX: stack([cos, -sin, sin, cos]).reshape(2, 2).
      for (size_t j = 0; j < k; ++j) {
        row.push_back(cos[j]);
        row.push_back(minus_sin[j]);
        row.push_back(sin[j]);
        row.push_back(cos[j]);
      }
      break;
  }
  return row;
}

}  // namespace posenc::testing
