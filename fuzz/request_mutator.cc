#include "fuzz/request_mutator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <type_traits>

#include "posenc/v1/posenc.pb.h"

namespace posenc::fuzz {
namespace {

constexpr uint32_t kMaxLen = 1u << 24;  // the server's default limits
constexpr uint32_t kMaxD = 65536;

using Rng = std::minstd_rand;

uint32_t Below(Rng& rng, uint64_t n) {  // uniform in [0, n), n >= 1
  return static_cast<uint32_t>(
      std::uniform_int_distribution<uint64_t>(0, n - 1)(rng));
}
bool OneIn(Rng& rng, uint32_t n) { return Below(rng, n) == 0; }
template <typename T>
T Pick(Rng& rng, std::initializer_list<T> values) {
  return *(values.begin() + Below(rng, values.size()));
}
double Uniform(Rng& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

uint32_t NewD(Rng& rng) {
  switch (Below(rng, 10)) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
      return 2 * (1 + Below(rng, 32));  // 2..64
    case 5:
      return 2u << Below(rng, 16);  // 2..65536
    case 6:
    case 7:
      return 2 * (1 + Below(rng, 2048));  // 2..4096
    case 8:
      return Pick<uint32_t>(rng, {kMaxD, kMaxD - 2, 32768, 16384, 4096});
    default:  // invalid
      return Pick<uint32_t>(rng, {0, 1, 3, 4097, kMaxD + 1, kMaxD + 2,
                                  0xffffffffu, static_cast<uint32_t>(rng())});
  }
}

uint32_t NewMaxLen(Rng& rng) {
  switch (Below(rng, 10)) {
    case 0:
    case 1:
    case 2:
    case 3:
      return 1 + Below(rng, 512);
    case 4:
    case 5:
      return 1 + Below(rng, 65536);
    case 6:
      return Pick<uint32_t>(rng, {1, 2, kMaxLen, kMaxLen - 1, kMaxLen / 2});
    case 7:
    case 8:
      return 1 + Below(rng, kMaxLen);
    default:  // invalid
      return Pick<uint32_t>(rng, {0, kMaxLen + 1, 0xffffffffu});
  }
}

double NewBase(Rng& rng) {
  return Pick<double>(rng, {0, 10000, 500000, 1e6, 2, 1.5, 1.0000001, 1e30,
                            1e300, Uniform(rng, 1, 1e7), 1, 0.5, -1,
                            std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN()});
}

// A rope parameter that is mostly in range.
double NewFactor(Rng& rng) {
  return Pick<double>(rng, {1, 2, 4, 8, 16, 32, 64, 65536, Uniform(rng, 1, 100),
                            0, 0.5, 65537, -2});
}

// Rows of the table as the request gives them (rotary dimension).
uint32_t RotaryD(const v1::TableSpec& spec) {
  const double prf = spec.partial_rotary_factor();
  if (prf > 0 && prf <= 1) return static_cast<uint32_t>(spec.d() * prf);
  return spec.d();
}

// LongRoPE lists longer than this would not fit in an input (-max_len is
// 4096 bytes by default); d is capped so, not the lists the server sees.
constexpr uint32_t kMaxListLength = 1024;

void FillList(Rng& rng, google::protobuf::RepeatedField<double>* list,
              uint32_t n, bool is_long) {
  n = std::min(n, kMaxListLength);
  list->Clear();
  for (uint32_t k = 0; k < n; ++k) {
    list->Add(is_long ? Pick<double>(rng, {1, 2, 4, 1.5, Uniform(rng, 1, 64)})
                      : Pick<double>(rng, {1, 1, 1.25, Uniform(rng, 1, 4)}));
  }
  if (n > 0 && OneIn(rng, 8)) {  // one out of range
    list->Set(Below(rng, n), Pick<double>(rng, {0.5, 65537, -1}));
  }
}

void MutateRope(Rng& rng, v1::TableSpec* spec) {
  v1::RopeScaling* r = spec->mutable_rope();
  switch (Below(rng, 12)) {
    case 0:
      spec->clear_rope();
      return;
    case 1:
      r->set_type(static_cast<v1::RopeType>(Below(rng, 8)));  // 7: unknown
      return;
    case 2:
      r->set_factor(NewFactor(rng));
      return;
    case 3:
      r->set_original_max_position_embeddings(
          Pick<uint32_t>(rng, {1, 2048, 4096, 8192, 32768,
                               1 + Below(rng, kMaxLen), 0, kMaxLen + 1}));
      return;
    case 4:
      r->set_seq_len(Pick<uint32_t>(
          rng, {0, 4096, 131072, 1 + Below(rng, kMaxLen), kMaxLen + 1}));
      return;
    case 5:
      r->set_beta_fast(Pick<double>(rng, {0, 32, 16, 1, Uniform(rng, 0, 64)}));
      r->set_beta_slow(Pick<double>(rng, {0, 1, 2, 0.5, Uniform(rng, 0, 4)}));
      return;
    case 6:
      r->set_mscale(Pick<double>(rng, {0, 1, 0.707, Uniform(rng, 0, 2), -1}));
      r->set_mscale_all_dim(Pick<double>(rng, {0, 1, 0.707, 0.7}));
      return;
    case 7:
      if (r->has_truncate() && OneIn(rng, 2)) {
        r->clear_truncate();
      } else {
        r->set_truncate(OneIn(rng, 2));
      }
      return;
    case 8:
      r->set_attention_factor(
          Pick<double>(rng, {0, 1, 0.5, 2, 1.00048828125, 1.0 / 65536,
                             Uniform(rng, 0.1, 2), 3, -1}));
      return;
    case 9:
      r->set_low_freq_factor(Pick<double>(rng, {1, 0.5, 2, 0, 4}));
      r->set_high_freq_factor(Pick<double>(rng, {4, 8, 2, 1, 0}));
      return;
    default: {  // LongRoPE: lists of d/2 divisors (or one off)
      const uint32_t half = RotaryD(*spec) / 2 + (OneIn(rng, 8) ? 1 : 0);
      FillList(rng, r->mutable_short_factor(), half, false);
      FillList(rng, r->mutable_long_factor(), half, true);
      return;
    }
  }
}

// A whole valid RoPE scheme, so the schemes' many parameters need not be
// found one by one.
void NewScheme(Rng& rng, v1::TableSpec* spec) {
  spec->set_frequency(v1::FREQUENCY_UNSPECIFIED);
  v1::RopeScaling* r = spec->mutable_rope();
  r->Clear();
  const uint32_t m =
      Pick<uint32_t>(rng, {2048, 4096, 8192, 1 + Below(rng, 65536)});
  switch (Below(rng, 5)) {
    case 0:
      r->set_type(v1::ROPE_TYPE_LINEAR);
      r->set_factor(NewFactor(rng));
      break;
    case 1:
      r->set_type(v1::ROPE_TYPE_DYNAMIC);
      r->set_factor(NewFactor(rng));
      r->set_original_max_position_embeddings(m);
      if (OneIn(rng, 2)) r->set_seq_len(m * (1 + Below(rng, 8)));
      break;
    case 2:
      r->set_type(v1::ROPE_TYPE_YARN);
      r->set_factor(NewFactor(rng));
      r->set_original_max_position_embeddings(m);
      if (OneIn(rng, 2)) MutateRope(rng, spec);
      break;
    case 3:
      r->set_type(v1::ROPE_TYPE_LLAMA3);
      r->set_factor(NewFactor(rng));
      r->set_original_max_position_embeddings(m);
      r->set_low_freq_factor(1);
      r->set_high_freq_factor(4);
      break;
    default:
      r->set_type(v1::ROPE_TYPE_LONGROPE);
      r->set_original_max_position_embeddings(m);
      if (OneIn(rng, 2)) r->set_seq_len(m * 2);
      FillList(rng, r->mutable_short_factor(), RotaryD(*spec) / 2, false);
      FillList(rng, r->mutable_long_factor(), RotaryD(*spec) / 2, true);
      break;
  }
}

// A whole valid grid table (MAE, diffusers, SD3, timm or CogVideoX-like,
// small), so the grid's many fields need not be found one by one; d and
// max_len follow it.
void NewGrid(Rng& rng, v1::TableSpec* spec) {
  spec->clear_rope();
  spec->clear_partial_rotary_factor();
  spec->set_frequency(v1::FREQUENCY_UNSPECIFIED);
  spec->set_layout(Pick<v1::Layout>(
      rng, {v1::LAYOUT_CONCAT_SIN_COS, v1::LAYOUT_CONCAT_COS_SIN,
            v1::LAYOUT_INTERLEAVED}));
  v1::GridSpec* g = spec->mutable_grid();
  g->Clear();
  const uint32_t n = 1 + Below(rng, 3);
  uint32_t d = 0;
  for (uint32_t a = 0; a < n; ++a) {
    v1::GridSpecAxis* axis = g->add_axes();
    axis->set_size(1 + Below(rng, n == 1 ? 300 : n == 2 ? 20 : 6));
    axis->set_channels(2 * (1 + Below(rng, 24)));
    d += axis->channels();
    if (OneIn(rng, 2)) {
      axis->set_position_numerator(1 + Below(rng, 64));
      axis->set_position_denominator(1 + Below(rng, 200));
    }
    if (OneIn(rng, 3)) axis->set_first_index(Below(rng, 100));
  }
  if (n > 1 && OneIn(rng, 2)) {
    for (uint32_t a = n; a-- > 0;) g->add_channel_order(a);
  }
  if (spec->layout() != v1::LAYOUT_INTERLEAVED && OneIn(rng, 3)) {
    g->set_sin_cos(v1::GRID_SIN_COS_GROUPED);
  }
  if (OneIn(rng, 3)) g->set_extra_zero_rows(Below(rng, 3));
  spec->set_d(d);
  spec->set_max_len(0);
}

// One grid field, mostly in range, sometimes just past a rule.
void MutateGrid(Rng& rng, v1::TableSpec* spec) {
  if (!spec->has_grid() || spec->grid().axes_size() == 0) {
    NewGrid(rng, spec);
    return;
  }
  v1::GridSpec* g = spec->mutable_grid();
  v1::GridSpecAxis* axis = g->mutable_axes(Below(rng, g->axes_size()));
  switch (Below(rng, 10)) {
    case 0:
      axis->set_size(Pick<uint32_t>(
          rng, {0, 1, 2, 64, 4096, 1u << 24, 1 + Below(rng, 100)}));
      return;
    case 1:
      axis->set_channels(Pick<uint32_t>(
          rng, {0, 1, 3, 2, 384, 65536, 2 * (1 + Below(rng, 64))}));
      return;
    case 2:
      axis->set_first_index(Pick<uint32_t>(
          rng,
          {0, 64, (1u << 24) - 1, 1u << 24, 0xFFFFFFFFu, Below(rng, 1000)}));
      return;
    case 3:
      axis->set_position_numerator(Pick<uint32_t>(
          rng, {0, 1, 3, 64, 1u << 20, 0xFFFFFFFFu, 1 + Below(rng, 1000)}));
      return;
    case 4:
      axis->set_position_denominator(Pick<uint32_t>(
          rng, {0, 1, 3, 15, 1u << 20, 0xFFFFFFFFu, 1 + Below(rng, 1000)}));
      return;
    case 5:
      g->add_channel_order(Below(rng, 4));
      if (OneIn(rng, 2)) g->clear_channel_order();
      return;
    case 6:
      g->set_sin_cos(static_cast<v1::GridSinCos>(Below(rng, 4)));  // 3: unknown
      return;
    case 7:
      g->set_extra_zero_rows(Pick<uint32_t>(rng, {0, 1, 2, 1u << 24}));
      return;
    case 8:
      g->add_axes()->set_size(1 + Below(rng, 4));  // a 4th axis, or 0 channels
      return;
    default:
      spec->set_max_len(Pick<uint32_t>(rng, {0, spec->max_len() + 1, 1}));
      return;
  }
}

void MutateSpec(Rng& rng, v1::TableSpec* spec) {
  if (OneIn(rng, 6)) {
    OneIn(rng, 3) ? NewGrid(rng, spec) : MutateGrid(rng, spec);
    return;
  }
  switch (Below(rng, 12)) {
    case 0:
    case 1:
      spec->set_d(NewD(rng));
      return;
    case 2:
    case 3:
      spec->set_max_len(NewMaxLen(rng));
      return;
    case 4:
      spec->set_dtype(static_cast<v1::DType>(Below(rng, 6)));  // 5: unknown
      return;
    case 5:
      spec->set_layout(static_cast<v1::Layout>(Below(rng, 7)));  // 6: unknown
      return;
    case 6:
      spec->set_frequency(static_cast<v1::Frequency>(Below(rng, 4)));
      return;
    case 7:
      spec->set_base(NewBase(rng));
      return;
    case 8:
      spec->set_partial_rotary_factor(Pick<double>(
          rng, {0, 0.25, 0.5, 0.4, 1, 0.001, Uniform(rng, 0, 1), 1.5, -0.5,
                std::numeric_limits<double>::quiet_NaN()}));
      return;
    case 9:
      NewScheme(rng, spec);
      return;
    default:
      MutateRope(rng, spec);
      return;
  }
}

// Back to a small valid spec (the next mutations start from there).
void Repair(Rng& rng, v1::TableSpec* spec) {
  spec->set_d(2 * (1 + Below(rng, 32)));
  spec->set_max_len(1 + Below(rng, 256));
  spec->set_dtype(static_cast<v1::DType>(Below(rng, 5)));
  spec->set_layout(static_cast<v1::Layout>(Below(rng, 6)));
  spec->set_frequency(v1::FREQUENCY_UNSPECIFIED);
  spec->clear_base();
  spec->clear_partial_rotary_factor();
  spec->clear_rope();
  spec->clear_grid();
}

uint32_t PositionIn(Rng& rng, uint32_t max_len) {
  if (max_len == 0) return Below(rng, 16);
  return Pick<uint32_t>(
      rng, {0, max_len - 1, Below(rng, max_len), Below(rng, max_len), max_len});
}

void MutateRange(Rng& rng, uint32_t max_len, uint32_t* start,
                 std::optional<uint32_t>* end) {
  if (OneIn(rng, 2)) {
    *start = Pick<uint32_t>(
        rng, {0, PositionIn(rng, max_len), max_len > 8 ? max_len - 8 : 0});
  } else {
    *end = Pick<std::optional<uint32_t>>(
        rng, {std::nullopt, *start + 1, *start + 1 + Below(rng, 64), max_len,
              PositionIn(rng, max_len), max_len + 1});
  }
}

template <typename Request>
void MutateMethodFields(Rng& rng, Request* req) {
  const uint32_t max_len = req->spec().max_len();
  if constexpr (std::is_same_v<Request, v1::GetRowsRequest>) {
    auto* positions = req->mutable_positions();
    switch (Below(rng, 4)) {
      case 0: {
        positions->Clear();
        const uint32_t n = 1 + Below(rng, 8);
        for (uint32_t k = 0; k < n; ++k)
          positions->Add(PositionIn(rng, max_len));
        return;
      }
      case 1:
        positions->Add(PositionIn(rng, max_len));
        return;
      case 2:
        if (!positions->empty()) {
          positions->Set(Below(rng, positions->size()),
                         PositionIn(rng, max_len));
        }
        return;
      default:
        if (!positions->empty()) positions->RemoveLast();
        return;
    }
  } else if constexpr (std::is_same_v<Request, v1::GetTableRequest>) {
    (void)max_len;
  } else {
    uint32_t start = req->start();
    std::optional<uint32_t> end;
    if (req->has_end()) end = req->end();
    if constexpr (std::is_same_v<Request, v1::StreamBatchesRequest>) {
      if (OneIn(rng, 3)) {
        req->set_rows_per_batch(Pick<uint32_t>(
            rng, {0, 1, 1 + Below(rng, 64), 1 + Below(rng, 4096), 100000}));
        return;
      }
    }
    MutateRange(rng, max_len, &start, &end);
    req->set_start(start);
    if (end.has_value()) {
      req->set_end(*end);
    } else {
      req->clear_end();
    }
  }
}

template <typename Request>
size_t MutateTyped(uint8_t* data, size_t size, size_t max_size, Rng& rng,
                   RawMutator raw) {
  Request req;
  if (!req.ParseFromArray(data, static_cast<int>(size))) {
    return raw(data, size, max_size);
  }
  const uint32_t steps = 1 + Below(rng, 3);
  for (uint32_t k = 0; k < steps; ++k) {
    const uint32_t what = Below(rng, 16);
    if (what == 0) {
      Repair(rng, req.mutable_spec());
    } else if (what < 10) {
      MutateSpec(rng, req.mutable_spec());
    } else {
      MutateMethodFields(rng, &req);
    }
  }
  std::string out;
  if (!req.SerializeToString(&out) || out.size() > max_size) {
    return raw(data, size, max_size);
  }
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

// ---------------------------------------------------------------------------
// Encode: EncodingSpec fields and the points, mostly valid, near the limits
// (dim up to 65536, scale 2^+-24, frequencies near 2^-800 and 2^24, points
// near 2^24 / F_max and 2^-64) or just past them.

double NewPoint(Rng& rng) {
  switch (Below(rng, 12)) {
    case 0:
    case 1:
      return Uniform(rng, 0, 1);  // flow-matching t
    case 2:
    case 3:
      return std::floor(Uniform(rng, 0, 1000)) + Pick<double>(rng, {0, 0.5});
    case 4:
      return Uniform(rng, -4, 4);  // a coordinate
    case 5:
      return Pick<double>(rng, {0, -0.0, 1, -1, 0.25, 999.5, 0.5, 2});
    case 6:
      return Pick<double>(
          rng, {0x1p-64, -0x1p-64, 0x1.fffffffffffffp-65, 0x1p-1074, 1e-300});
    case 7:
      return Pick<double>(
          rng, {0x1p24, 0x1p24 + 2, 16777215.5, 1e9, -1e30, 16777.216});
    case 8:
      return Pick<double>(rng, {std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN()});
    case 9:  // multiples of pi / 2^k (near zero crossings), of 2^-k
      return std::ldexp(static_cast<double>(Below(rng, 64)),
                        -static_cast<int>(Below(rng, 8))) *
             (OneIn(rng, 2) ? M_PI_2 : 1);
    default:  // any magnitude
      return std::ldexp(Uniform(rng, 1, 2),
                        static_cast<int>(Below(rng, 90)) - 64);
  }
}

void MutateEncodingSpec(Rng& rng, v1::EncodingSpec* spec) {
  switch (Below(rng, 14)) {
    case 0:
    case 1:
      spec->set_dim(OneIn(rng, 4) ? NewD(rng) - 1 : NewD(rng));  // odd
      return;
    case 2:
      spec->set_dtype(static_cast<v1::DType>(Below(rng, 6)));  // 5: unknown
      return;
    case 3:
      spec->set_layout(static_cast<v1::Layout>(Below(rng, 7)));  // RoPE too
      return;
    case 4:
      spec->set_frequency(static_cast<v1::FrequencyScheme>(Below(rng, 4)));
      return;
    case 5:
      spec->set_max_period(NewBase(rng));
      return;
    case 6: {
      const double half = spec->dim() / 2;
      spec->set_shift(
          Pick<double>(rng, {0, 1, -1, half - 0.5, half, half - 1,
                             Uniform(rng, -8, 8), -1e6, half - 1e-9}));
      return;
    }
    case 7:
      spec->set_scale(
          Pick<double>(rng, {0, 1, 1000, 0x1p-24, 0x1p24, 0x1p-25,
                             0x1p24 * 1.0000001, Uniform(rng, 0, 2000), -1}));
      return;
    case 8:
      spec->set_pad_odd_dim(!spec->pad_odd_dim());
      return;
    case 9:
      spec->set_num_frequencies(Pick<uint32_t>(
          rng, {0, 1, 2, 4, 10, 16, 1 + Below(rng, 64), 32768, 0xffffffffu}));
      return;
    case 10: {
      const double lo = Pick<double>(
          rng, {0, -1, -2, 1, -802, -803, 21, 24, Uniform(rng, -10, 10)});
      spec->set_min_freq_exp(lo);
      spec->set_max_freq_exp(
          Pick<double>(rng, {lo, lo + 1, lo + Below(rng, 12), 8, 21.3, 22,
                             lo - 1, std::numeric_limits<double>::infinity()}));
      return;
    }
    case 11:
      spec->set_coordinates(Pick<uint32_t>(rng, {0, 1, 2, 3, 4, 65537}));
      return;
    case 12:
      spec->set_include_input(!spec->include_input());
      return;
    default:  // a whole library shape
      spec->Clear();
      switch (Below(rng, 3)) {
        case 0:  // FLUX / GLIDE
          spec->set_dim(Pick<uint32_t>(rng, {256, 320, 321, 64}));
          spec->set_pad_odd_dim(spec->dim() % 2 == 1);
          spec->set_layout(v1::LAYOUT_CONCAT_COS_SIN);
          spec->set_scale(Pick<double>(rng, {1, 1000}));
          return;
        case 1:  // diffusers' default
          spec->set_dim(Pick<uint32_t>(rng, {32, 128, 320}));
          spec->set_layout(v1::LAYOUT_CONCAT_SIN_COS);
          spec->set_shift(1);
          return;
        default:  // nerfstudio
          spec->set_frequency(v1::FREQUENCY_SCHEME_OCTAVES);
          spec->set_layout(v1::LAYOUT_CONCAT_SIN_COS);
          spec->set_num_frequencies(Pick<uint32_t>(rng, {2, 4, 6, 10}));
          spec->set_max_freq_exp(spec->num_frequencies() - 1);
          spec->set_coordinates(3);
          spec->set_include_input(OneIn(rng, 2));
          return;
      }
  }
}

size_t MutateEncode(uint8_t* data, size_t size, size_t max_size, Rng& rng,
                    RawMutator raw) {
  v1::EncodeRequest req;
  if (!req.ParseFromArray(data, static_cast<int>(size))) {
    return raw(data, size, max_size);
  }
  const uint32_t steps = 1 + Below(rng, 3);
  for (uint32_t k = 0; k < steps; ++k) {
    auto* positions = req.mutable_positions();
    switch (Below(rng, 16)) {
      case 0:  // back to a small valid request
        req.mutable_spec()->Clear();
        req.mutable_spec()->set_dim(2 * (1 + Below(rng, 64)));
        req.mutable_spec()->set_dtype(static_cast<v1::DType>(Below(rng, 5)));
        req.mutable_spec()->set_layout(static_cast<v1::Layout>(Below(rng, 4)));
        positions->Clear();
        positions->Add(NewPoint(rng));
        break;
      case 1:
      case 2: {  // a new batch of points
        positions->Clear();
        const uint32_t coordinates =
            std::min(4u, std::max(1u, req.spec().coordinates()));
        const uint32_t n = coordinates * (1 + Below(rng, 16));
        for (uint32_t j = 0; j < n; ++j) positions->Add(NewPoint(rng));
        break;
      }
      case 3:
        positions->Add(NewPoint(rng));
        break;
      case 4:
        if (!positions->empty()) {
          positions->Set(Below(rng, positions->size()), NewPoint(rng));
        }
        break;
      case 5:
        if (!positions->empty()) positions->RemoveLast();
        break;
      default:
        MutateEncodingSpec(rng, req.mutable_spec());
        break;
    }
  }
  std::string out;
  if (!req.SerializeToString(&out) || out.size() > max_size) {
    return raw(data, size, max_size);
  }
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace

size_t MutateRequest(FuzzMethod method, uint8_t* data, size_t size,
                     size_t max_size, unsigned int seed, RawMutator raw) {
  Rng rng(seed);
  if (OneIn(rng, 2)) return raw(data, size, max_size);
  switch (method) {
    case FuzzMethod::kGetTable:
      return MutateTyped<v1::GetTableRequest>(data, size, max_size, rng, raw);
    case FuzzMethod::kStreamRows:
      return MutateTyped<v1::StreamRowsRequest>(data, size, max_size, rng, raw);
    case FuzzMethod::kStreamBatches:
      return MutateTyped<v1::StreamBatchesRequest>(data, size, max_size, rng,
                                                   raw);
    case FuzzMethod::kGetRows:
      return MutateTyped<v1::GetRowsRequest>(data, size, max_size, rng, raw);
    case FuzzMethod::kEncode:
      return MutateEncode(data, size, max_size, rng, raw);
  }
  return raw(data, size, max_size);
}

}  // namespace posenc::fuzz
