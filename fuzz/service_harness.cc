#include "fuzz/service_harness.h"

#include <grpc/grpc.h>
#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/channel_arguments.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "convert/routing_key.h"
#include "core/runtime/buffer_reserve.h"
#include "core/spec/encoding_spec.h"
#include "core/spec/rope.h"
#include "core/spec/table_spec.h"
#include "posenc/v1/posenc.grpc.pb.h"
#include "posenc/v1/posenc.pb.h"
#include "server/posenc_server.h"
#include "tests/numerics/grid_reference.h"
#include "tests/numerics/mpfr_reference.h"
#include "tests/numerics/multi_axis_reference.h"
#include "tests/numerics/real_reference.h"
#include "tests/numerics/rope_reference.h"

namespace posenc::fuzz {
namespace {

// A call slower than this is a finding (libFuzzer's -timeout is the outer
// bound per input).
constexpr absl::Duration kCallDeadline = absl::Seconds(20);
// After a call, the server must be idle again within this.
constexpr absl::Duration kIdleTimeout = absl::Seconds(20);
// A stream is read up to this many messages or bytes, then cancelled.
constexpr size_t kStreamMaxMessages = 256;
constexpr uint64_t kStreamMaxBytes = uint64_t{1} << 20;
// Values compared with the reference: a reply of at most kCheckAll elements
// whole; else its first and last element and kRandomSamples random ones,
// and at most kMaxSamplesPerCall in all.
constexpr uint64_t kCheckAll = 48;
constexpr int kRandomSamples = 6;
constexpr int kMaxSamplesPerCall = 64;
// The fast mode's server is replaced after this many inputs (a fresh cache
// and counters); POSENC_FUZZ_RESTART_EVERY overrides it.
constexpr uint64_t kRestartEvery = 2000;

constexpr const char* kMethodNames[kFuzzMethodCount] = {
    "/posenc.v1.PositionalEncoding/GetTable",
    "/posenc.v1.PositionalEncoding/StreamRows",
    "/posenc.v1.PositionalEncoding/StreamBatches",
    "/posenc.v1.PositionalEncoding/GetRows",
    "/posenc.v1.PositionalEncoding/Encode"};

HarnessCounters counters;

// Wall time by phase of RunInput, for fuzz/speed.sh (POSENC_FUZZ_PHASES=1
// appends them to CountersLine).
struct PhaseTimes {
  absl::Duration read, start, call_a, check, call_b, hostile, idle, stop;
};
PhaseTimes phases;
// Adds the time since *since to *total and restarts *since.
void Lap(absl::Time* since, absl::Duration* total) {
  const absl::Time now = absl::Now();
  *total += now - *since;
  *since = now;
}
// The first call's code of the last input (RecordCode).
grpc::StatusCode last_code = grpc::StatusCode::UNKNOWN;

// ---------------------------------------------------------------------------
// The request as the harness reads it, from the proto's documentation only
// (not server/request_handler.cc nor convert/proto_conversion.cc).

struct Request {
  bool parsed = false;  // the bytes parse as the method's request
  v1::TableSpec proto;
  TableSpec spec;  // d is the rotary dimension
  // Why the harness reads the request as invalid; "" when it reads it as
  // valid. An OK answer to a request read as invalid is a finding.
  std::string invalid;
  uint32_t start = 0, end = 0;  // range methods; end resolved
  uint32_t rows_per_batch = 0;
  std::vector<uint32_t> positions;
  // Encode: the spec as sent and as the harness resolves it, the points.
  v1::EncodingSpec encoding_proto;
  EncodingSpec encoding;
  std::vector<double> real_positions;
  uint32_t points = 0;
  // Encode: the code a request read as invalid must get (INVALID_ARGUMENT
  // for the spec and the count, OUT_OF_RANGE for a position's value;
  // RESOURCE_EXHAUSTED is always allowed); and whether it lies within
  // 10^-9 of a bound the harness decides in floating point (see
  // service_harness.h), or sets max_period = 10000 with octaves, which
  // the server cannot tell from unset: then OK and a refusal both pass.
  grpc::StatusCode want_code = grpc::StatusCode::INVALID_ARGUMENT;
  bool borderline = false;
};

// The proto's DType and Layout values and what they name, by its
// documentation (UNSPECIFIED first: float32, interleaved).
constexpr std::pair<v1::DType, DType> kProtoDTypes[] = {
    {v1::DTYPE_UNSPECIFIED, DType::kFloat32},
    {v1::DTYPE_FLOAT32, DType::kFloat32},
    {v1::DTYPE_FLOAT64, DType::kFloat64},
    {v1::DTYPE_FLOAT16, DType::kFloat16},
    {v1::DTYPE_BFLOAT16, DType::kBFloat16}};
constexpr std::pair<v1::Layout, Layout> kProtoLayouts[] = {
    {v1::LAYOUT_UNSPECIFIED, Layout::kInterleaved},
    {v1::LAYOUT_INTERLEAVED, Layout::kInterleaved},
    {v1::LAYOUT_CONCAT_SIN_COS, Layout::kConcatSinCos},
    {v1::LAYOUT_CONCAT_COS_SIN, Layout::kConcatCosSin},
    {v1::LAYOUT_ROTATE_HALF, Layout::kRotateHalf},
    {v1::LAYOUT_INTERLEAVED_PAIRS, Layout::kInterleavedPairs},
    {v1::LAYOUT_ROTATION_MATRIX, Layout::kRotationMatrix}};

// False for a value the proto does not define.
bool ReadDType(v1::DType p, DType* out) {
  for (const auto& [proto, dtype] : kProtoDTypes) {
    if (proto == p) {
      *out = dtype;
      return true;
    }
  }
  return false;
}

// nullopt for a value the proto does not define.
std::optional<Layout> ReadLayout(v1::Layout p) {
  for (const auto& [proto, layout] : kProtoLayouts) {
    if (proto == p) return layout;
  }
  return std::nullopt;
}

// The layouts of one sin and one cos per frequency (not RoPE's doubled
// rows nor rotation matrices).
bool IsSinCosLayout(Layout layout) {
  return layout == Layout::kInterleaved || layout == Layout::kConcatSinCos ||
         layout == Layout::kConcatCosSin;
}

// True when `r` sets anything (RoPE scaling applies).
bool RopeSetsAnything(const v1::RopeScaling& r) {
  return (r.type() != v1::ROPE_TYPE_UNSPECIFIED &&
          r.type() != v1::ROPE_TYPE_DEFAULT) ||
         r.factor() != 0 || r.original_max_position_embeddings() != 0 ||
         r.seq_len() != 0 || r.beta_fast() != 0 || r.beta_slow() != 0 ||
         r.mscale() != 0 || r.mscale_all_dim() != 0 || r.has_truncate() ||
         r.attention_factor() != 0 || r.low_freq_factor() != 0 ||
         r.high_freq_factor() != 0 || r.short_factor_size() > 0 ||
         r.long_factor_size() > 0;
}

// A grid table (TableSpec.grid), by the proto's GridSpec documentation:
// the reason it is invalid, or "". Sets *borderline within a hair of the
// rules the harness decides in floating point (the angle and frequency
// bounds).
std::string ResolveGrid(const v1::TableSpec& p, const ServerOptions& limits,
                        TableSpec* out, bool* borderline) {
  if (p.partial_rotary_factor() != 0) return "partial_rotary_factor with grid";
  if (p.has_rope() && RopeSetsAnything(p.rope())) return "rope with grid";
  if (p.frequency() != v1::FREQUENCY_UNSPECIFIED &&
      p.frequency() != v1::FREQUENCY_PAPER) {
    return "frequency with grid";
  }
  if (!ReadDType(p.dtype(), &out->dtype)) return "dtype";
  const std::optional<Layout> layout = ReadLayout(p.layout());
  if (!layout.has_value() || !IsSinCosLayout(*layout)) return "grid layout";
  out->layout = *layout;
  const v1::GridSpec& g = p.grid();
  const int n = g.axes_size();
  if (n < 1 || n > 3) return "grid axes count";
  auto grid = std::make_shared<GridSpec>();
  uint64_t channels = 0;
  unsigned __int128 points = 1;
  for (const v1::GridSpecAxis& a : g.axes()) {
    GridSpecAxis axis;
    axis.size = a.size();
    axis.channels = a.channels();
    axis.first_index = a.first_index();
    axis.numerator = a.position_numerator() == 0 ? 1 : a.position_numerator();
    axis.denominator =
        a.position_denominator() == 0 ? 1 : a.position_denominator();
    // The proto's positions are index * p / q in lowest terms (10/70 is 1/7):
    // the frequency bound below divides by the reduced q.
    const uint32_t common = std::gcd(axis.numerator, axis.denominator);
    axis.numerator /= common;
    axis.denominator /= common;
    if (axis.size == 0) return "grid axis size";
    if (axis.channels < 2 || axis.channels % 2 != 0 ||
        axis.channels > limits.max_d) {
      return "grid axis channels";
    }
    channels += axis.channels;
    points *= axis.size;
    // The largest position (first_index + size - 1) * p / q below 2^24,
    // with (first_index + size - 1) * p <= 2^53.
    const unsigned __int128 top =
        (static_cast<unsigned __int128>(axis.first_index) + axis.size - 1) *
        axis.numerator;
    const unsigned __int128 limit =
        static_cast<unsigned __int128>(axis.denominator) << 24;
    if (top > static_cast<unsigned __int128>(1) << 53 || top >= limit) {
      return "grid position past 2^24";
    }
    if (top + 512 >= limit) *borderline = true;
    // The smallest frequency base^(-(half - 1) / half) / q.
    const double half = axis.channels / 2;
    const double log2_min = -(half - 1) / half * std::log2(out->base) -
                            std::log2(static_cast<double>(axis.denominator));
    if (std::fabs(log2_min + 790) < 1) *borderline = true;
    if (log2_min < -790) return "grid frequency below 2^-790";
    grid->axes.push_back(axis);
  }
  if (g.channel_order_size() == 0) {
    for (int a = 0; a < n; ++a) grid->channel_order.push_back(a);
  } else {
    if (g.channel_order_size() != n) return "grid channel_order length";
    std::vector<bool> seen(n, false);
    for (uint32_t a : g.channel_order()) {
      if (a >= static_cast<uint32_t>(n) || seen[a]) {
        return "grid channel_order not a permutation";
      }
      seen[a] = true;
      grid->channel_order.push_back(a);
    }
  }
  switch (g.sin_cos()) {
    case v1::GRID_SIN_COS_UNSPECIFIED:
    case v1::GRID_SIN_COS_PER_AXIS:
      grid->sin_cos = GridSinCos::kPerAxis;
      break;
    case v1::GRID_SIN_COS_GROUPED:
      if (out->layout == Layout::kInterleaved) return "grouped interleaved";
      grid->sin_cos = GridSinCos::kGrouped;
      break;
    default:
      return "grid sin_cos";
  }
  grid->extra_zero_rows = g.extra_zero_rows();
  if (p.d() != channels || p.d() > limits.max_d) return "grid d";
  const unsigned __int128 rows = points + g.extra_zero_rows();
  if (rows > limits.max_len_limit) return "grid rows past max_len_limit";
  if (p.max_len() != 0 && p.max_len() != rows) return "grid max_len";
  out->d = p.d();
  out->max_len = static_cast<uint32_t>(rows);
  out->frequency = Frequency::kPaper;
  out->grid = std::move(grid);
  return "";
}

std::string ResolveSpec(const v1::TableSpec& p, const ServerOptions& limits,
                        TableSpec* out, bool* borderline) {
  out->base = p.base() == 0 ? 10000.0 : p.base();
  if (!(std::isfinite(out->base) && out->base > 1)) return "base";
  if (p.has_grid()) return ResolveGrid(p, limits, out, borderline);
  // With a partial_rotary_factor, d is the head size and only the rotary
  // dimension floor(d * factor) is held to the rules on d.
  uint32_t d = p.d();
  if (p.partial_rotary_factor() != 0) {
    const double f = p.partial_rotary_factor();
    if (!(f > 0 && f <= 1)) return "partial_rotary_factor";
    d = static_cast<uint32_t>(std::floor(static_cast<double>(d) * f));
  }
  if (d < 2 || d % 2 != 0 || d > limits.max_d) return "d odd or out of range";
  out->d = d;
  if (p.max_len() < 1 || p.max_len() > limits.max_len_limit) return "max_len";
  out->max_len = p.max_len();
  if (!ReadDType(p.dtype(), &out->dtype)) return "dtype";
  // Every layout but the rotation matrix (multi-axis encodings only).
  const std::optional<Layout> layout = ReadLayout(p.layout());
  if (!layout.has_value() || *layout == Layout::kRotationMatrix) {
    return "layout";
  }
  out->layout = *layout;
  switch (p.frequency()) {
    case v1::FREQUENCY_UNSPECIFIED:
    case v1::FREQUENCY_PAPER:
      out->frequency = Frequency::kPaper;
      break;
    case v1::FREQUENCY_T2T:
      out->frequency = Frequency::kT2T;
      if (d < 4) return "t2t with d < 4";
      break;
    default:
      return "frequency";
  }
  if (p.has_rope() && RopeSetsAnything(p.rope())) {
    const v1::RopeScaling& r = p.rope();
    if (out->frequency != Frequency::kPaper) return "rope without paper";
    if (r.type() < 0 || r.type() > v1::ROPE_TYPE_LONGROPE) return "rope.type";
    if (r.type() == v1::ROPE_TYPE_UNSPECIFIED ||
        r.type() == v1::ROPE_TYPE_DEFAULT) {
      return "rope default with a parameter";
    }
    auto rope = std::make_shared<RopeScaling>();
    rope->type = static_cast<RopeType>(r.type() - 1);  // kDefault is 1
    rope->factor = r.factor();
    rope->original_max_position_embeddings =
        r.original_max_position_embeddings();
    rope->seq_len = r.seq_len();
    rope->beta_fast = r.beta_fast();
    rope->beta_slow = r.beta_slow();
    rope->mscale = r.mscale();
    rope->mscale_all_dim = r.mscale_all_dim();
    if (r.has_truncate()) rope->truncate = r.truncate();
    rope->attention_factor = r.attention_factor();
    rope->low_freq_factor = r.low_freq_factor();
    rope->high_freq_factor = r.high_freq_factor();
    rope->short_factor.assign(r.short_factor().begin(), r.short_factor().end());
    rope->long_factor.assign(r.long_factor().begin(), r.long_factor().end());
    out->rope = std::move(rope);
  }
  return "";
}

// ---------------------------------------------------------------------------
// Encode, from the EncodingSpec and EncodeRequest documentation.

// Whether a and b are within 10^-9 of each other, relative to the larger.
bool Near(double a, double b) {
  return std::fabs(a - b) <= 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)});
}

// Multi-axis RoPE (axes_dim or mrope_section set), from the EncodingSpec
// documentation: the frequency sets' ends, every other rule. e's dtype,
// layout, scheme and scale are resolved.
std::string ResolveMultiAxis(const v1::EncodingSpec& p,
                             const ServerOptions& limits, Request* req) {
  EncodingSpec& e = req->encoding;
  const bool axes = p.axes_dim_size() > 0;
  if (axes && p.mrope_section_size() > 0) return "axes_dim and mrope_section";
  if (e.scheme != FrequencyScheme::kExponential || p.num_frequencies() != 0 ||
      p.min_freq_exp() != 0 || p.max_freq_exp() != 0) {
    return "multi-axis with octaves";
  }
  if (p.shift() != 0 || p.pad_odd_dim() || p.include_input()) {
    return "multi-axis with shift, pad_odd_dim or include_input";
  }
  e.max_period = p.max_period() == 0 ? 10000.0 : p.max_period();
  if (!(std::isfinite(e.max_period) && e.max_period > 1)) {
    return "spec.max_period";
  }
  // The frequencies of n channels: scale * max_period^(-2i/n), i < n/2; the
  // smallest at i = n/2 - 1.
  std::vector<uint64_t> set_dims;
  uint64_t n_axes = 0;
  if (axes) {
    uint64_t sum = 0;
    for (uint32_t n : p.axes_dim()) {
      if (n < 2 || n % 2 != 0) return "spec.axes_dim[a] odd or < 2";
      sum += n;
      set_dims.push_back(n);
    }
    if (sum > limits.max_d) return "spec.axes_dim over max_d";
    if (p.dim() != 0 && p.dim() != sum) return "spec.dim != sum(axes_dim)";
    n_axes = p.axes_dim_size();
    e.axes_dim.assign(p.axes_dim().begin(), p.axes_dim().end());
  } else {
    if (p.dim() == 0 || p.dim() % 2 != 0 || p.dim() > limits.max_d) {
      return "spec.dim with mrope_section";
    }
    uint64_t sum = 0;
    for (uint32_t n : p.mrope_section()) {
      if (n == 0) return "spec.mrope_section[s] = 0";
      sum += n;
    }
    if (sum != p.dim() / 2) return "spec.mrope_section sum != dim / 2";
    if (p.mrope_interleaved() && p.mrope_section_size() != 3) {
      return "mrope_interleaved without 3 sections";
    }
    set_dims.push_back(p.dim());
    n_axes = p.mrope_section_size();
    e.mrope_section.assign(p.mrope_section().begin(), p.mrope_section().end());
    e.mrope_interleaved = p.mrope_interleaved();
  }
  e.dim = p.dim();
  if (p.coordinates() != 0 && p.coordinates() != n_axes) {
    return "spec.coordinates != the axes";
  }
  e.coordinates = static_cast<uint32_t>(n_axes);
  for (uint64_t n : set_dims) {
    const double h = static_cast<double>(n / 2);
    const double log2_min =
        std::log2(e.scale) - (h - 1) / h * std::log2(e.max_period);
    if (Near(log2_min, -800)) {
      req->borderline = true;
    } else if (!(log2_min >= -800)) {
      return "a frequency below 2^-800";
    }
  }
  return "";
}

// Resolves p into req->encoding; returns why it is invalid ("" when
// valid). Sets req->borderline where the harness cannot decide.
std::string ResolveEncoding(const v1::EncodingSpec& p,
                            const ServerOptions& limits, Request* req) {
  EncodingSpec& e = req->encoding;
  if (!ReadDType(p.dtype(), &e.dtype)) return "spec.dtype";
  const bool multi_axis = p.axes_dim_size() > 0 || p.mrope_section_size() > 0;
  const std::optional<Layout> layout = ReadLayout(p.layout());
  if (!layout.has_value()) return "spec.layout";  // unknown values
  // The RoPE layouts and rotation matrices: multi-axis RoPE only.
  if (!multi_axis && !IsSinCosLayout(*layout)) return "spec.layout";
  e.layout = *layout;
  switch (p.frequency()) {
    case v1::FREQUENCY_SCHEME_UNSPECIFIED:
    case v1::FREQUENCY_SCHEME_EXPONENTIAL:
      e.scheme = FrequencyScheme::kExponential;
      break;
    case v1::FREQUENCY_SCHEME_OCTAVES:
      e.scheme = FrequencyScheme::kOctaves;
      break;
    default:
      return "spec.frequency";
  }
  // Unset is 0 (proto3; -0 reads as 0 too).
  e.scale = p.scale() == 0 ? 1.0 : p.scale();
  if (!(std::isfinite(e.scale) && e.scale >= 0x1p-24 && e.scale <= 0x1p24)) {
    return "spec.scale";
  }
  if (p.mrope_interleaved() && p.mrope_section_size() == 0) {
    return "spec.mrope_interleaved without mrope_section";
  }
  if (multi_axis) return ResolveMultiAxis(p, limits, req);
  e.coordinates = p.coordinates() == 0 ? 1 : p.coordinates();
  if (e.coordinates > limits.max_d) return "spec.coordinates";
  e.include_input = p.include_input();
  e.pad_odd_dim = p.pad_odd_dim();
  e.dim = p.dim();
  // log2 of the smallest and largest frequency, scale included.
  double log2_min = 0, log2_max = 0;
  uint64_t half = 0;
  if (e.scheme == FrequencyScheme::kExponential) {
    if (p.num_frequencies() != 0 || p.min_freq_exp() != 0 ||
        p.max_freq_exp() != 0) {
      return "octaves' field with exponential";
    }
    if (e.dim < 2) return "spec.dim";
    if (e.dim > limits.max_d) return "spec.dim over max_d";
    if (e.dim % 2 == 1 && !(e.pad_odd_dim && e.coordinates == 1)) {
      return "odd spec.dim without pad_odd_dim and one coordinate";
    }
    if (e.dim % 2 == 0 && e.pad_odd_dim) return "pad_odd_dim with even dim";
    half = e.dim / 2;
    e.max_period = p.max_period() == 0 ? 10000.0 : p.max_period();
    if (!(std::isfinite(e.max_period) && e.max_period > 1)) {
      return "spec.max_period";
    }
    e.shift = p.shift();
    if (!(std::isfinite(e.shift) && e.shift < static_cast<double>(half))) {
      return "spec.shift";
    }
    // f_i = max_period^(-i / (half - shift)): 1 at i = 0, decreasing.
    log2_max = std::log2(e.scale);
    log2_min = log2_max - static_cast<double>(half - 1) /
                              (static_cast<double>(half) - e.shift) *
                              std::log2(e.max_period);
  } else {
    if (p.max_period() == 10000) {
      req->borderline = true;  // indistinguishable from unset
    } else if (p.max_period() != 0) {
      return "spec.max_period with octaves";
    }
    if (p.shift() != 0 || p.pad_odd_dim()) return "exponential's field";
    e.num_frequencies = p.num_frequencies();
    if (e.num_frequencies == 0) return "spec.num_frequencies";
    e.min_freq_exp = p.min_freq_exp();
    e.max_freq_exp = p.max_freq_exp();
    if (!(std::isfinite(e.min_freq_exp) && std::isfinite(e.max_freq_exp) &&
          e.min_freq_exp <= e.max_freq_exp)) {
      return "spec.min_freq_exp, spec.max_freq_exp";
    }
    half = e.num_frequencies;
    // 2 pi 2^e scale, e from min_freq_exp (to max_freq_exp when n > 1).
    const double base = std::log2(e.scale) + std::log2(2 * M_PI);
    log2_min = base + e.min_freq_exp;
    log2_max = base + (half > 1 ? e.max_freq_exp : e.min_freq_exp);
  }
  const uint64_t channels =
      2 * uint64_t{e.coordinates} * half + (e.pad_odd_dim ? 1 : 0);
  if (channels > limits.max_d) return "sin/cos channels over max_d";
  if (e.scheme == FrequencyScheme::kOctaves && e.dim != 0 &&
      e.dim != e.width()) {
    return "spec.dim differs from the octaves' width";
  }
  // Every frequency in [2^-800, 2^24]. (Exponential's largest is scale
  // itself, within the bound by scale's own rule.)
  if (Near(log2_min, -800) ||
      (e.scheme == FrequencyScheme::kOctaves && Near(log2_max, 24))) {
    req->borderline = true;
  } else if (!(log2_min >= -800 && log2_max <= 24)) {
    return "a frequency outside [2^-800, 2^24]";
  }
  return "";
}

void ReadEncode(const v1::EncodeRequest& m, const ServerOptions& limits,
                Request* req) {
  req->encoding_proto = m.spec();
  req->real_positions.assign(m.positions().begin(), m.positions().end());
  req->invalid = ResolveEncoding(m.spec(), limits, req);
  if (!req->invalid.empty()) return;
  const EncodingSpec& e = req->encoding;
  if (m.has_grid()) {
    // EncodeRequest.grid: exclusive with positions, one axis per
    // coordinate, at most max_rows_per_request points (counts 0 are 1).
    if (!req->real_positions.empty()) {
      req->invalid = "positions and grid";
      return;
    }
    if (static_cast<uint64_t>(m.grid().axes_size()) != e.coordinates) {
      req->invalid = "grid: not one axis per coordinate";
      return;
    }
    uint64_t points = 1;
    for (const v1::GridAxis& a : m.grid().axes()) {
      points *= a.count() == 0 ? 1 : a.count();
      if (points > limits.max_rows_per_request) {
        req->invalid = "grid: over max_rows_per_request points";
        return;
      }
    }
    req->points = static_cast<uint32_t>(points);
    if (uint64_t{req->points} * e.row_bytes() > limits.max_message_bytes) {
      req->invalid = "answer over the message limit";
      req->want_code = grpc::StatusCode::RESOURCE_EXHAUSTED;
      return;
    }
    // The points, row-major (bounded: the answer fits the message limit
    // and a row has at least 2 values per coordinate).
    std::vector<uint64_t> index(e.coordinates, 0);
    for (uint64_t k = 0; k < points; ++k) {
      for (int c = 0; c < m.grid().axes_size(); ++c) {
        req->real_positions.push_back(
            static_cast<double>(int64_t{m.grid().axes(c).start()} +
                                static_cast<int64_t>(index[c])));
      }
      for (int c = m.grid().axes_size() - 1; c >= 0; --c) {
        const uint32_t count = std::max(1u, m.grid().axes(c).count());
        if (++index[c] < count) break;
        index[c] = 0;
      }
    }
  }
  const size_t n = req->real_positions.size();
  if (n == 0 || n % e.coordinates != 0) {
    req->invalid = "positions: not a whole, non-zero number of points";
    return;
  }
  if (n / e.coordinates > limits.max_rows_per_request) {
    req->invalid = "positions: over max_rows_per_request points";
    return;
  }
  req->points = static_cast<uint32_t>(n / e.coordinates);
  if (uint64_t{req->points} * e.row_bytes() > limits.max_message_bytes) {
    req->invalid = "answer over the message limit";
    req->want_code = grpc::StatusCode::RESOURCE_EXHAUSTED;
    return;
  }
  // |x| F_max <= 2^24, F_max as in ResolveEncoding: exponential's is scale
  // (the exact product of two doubles, decided exactly with an fma);
  // octaves' 2 pi scale 2^e, in logarithms.
  const bool octaves = e.scheme == FrequencyScheme::kOctaves;
  const double log2_fmax =
      std::log2(e.scale) +
      (octaves ? std::log2(2 * M_PI) +
                     (e.num_frequencies > 1 ? e.max_freq_exp : e.min_freq_exp)
               : 0);
  for (double x : req->real_positions) {
    const double a = std::fabs(x);
    if (!std::isfinite(x) || (a != 0 && a < 0x1p-64)) {
      req->invalid = "a position not finite, or nonzero below 2^-64";
      req->want_code = grpc::StatusCode::OUT_OF_RANGE;
      return;
    }
    if (a == 0) continue;
    bool over = false;
    if (!octaves) {
      const double p = a * e.scale;  // a * scale = p + err exactly
      const double err = std::fma(a, e.scale, -p);
      over = p > 0x1p24 || (p == 0x1p24 && err > 0);
    } else {
      const double log2_angle = std::log2(a) + log2_fmax;
      if (Near(log2_angle, 24)) req->borderline = true;
      over = !Near(log2_angle, 24) && log2_angle > 24;
    }
    if (over) {
      req->invalid = "a position over 2^24 / F_max";
      req->want_code = grpc::StatusCode::OUT_OF_RANGE;
      return;
    }
  }
}

Request ReadRequest(FuzzMethod method, const uint8_t* data, size_t size,
                    const ServerOptions& limits) {
  Request req;
  bool end_unset = false;
  const int n = static_cast<int>(size);
  switch (method) {
    case FuzzMethod::kEncode: {
      v1::EncodeRequest m;
      if (!m.ParseFromArray(data, n)) return req;
      req.parsed = true;
      ReadEncode(m, limits, &req);
      return req;
    }
    case FuzzMethod::kGetTable: {
      v1::GetTableRequest m;
      if (!m.ParseFromArray(data, n)) return req;
      req.proto = m.spec();
      break;
    }
    case FuzzMethod::kStreamRows: {
      v1::StreamRowsRequest m;
      if (!m.ParseFromArray(data, n)) return req;
      req.proto = m.spec();
      req.start = m.start();
      req.end = m.has_end() ? m.end() : m.spec().max_len();
      end_unset = !m.has_end();
      break;
    }
    case FuzzMethod::kStreamBatches: {
      v1::StreamBatchesRequest m;
      if (!m.ParseFromArray(data, n)) return req;
      req.proto = m.spec();
      req.start = m.start();
      req.end = m.has_end() ? m.end() : m.spec().max_len();
      end_unset = !m.has_end();
      req.rows_per_batch = m.rows_per_batch();
      break;
    }
    case FuzzMethod::kGetRows: {
      v1::GetRowsRequest m;
      if (!m.ParseFromArray(data, n)) return req;
      req.proto = m.spec();
      req.positions.assign(m.positions().begin(), m.positions().end());
      break;
    }
  }
  req.parsed = true;
  req.invalid = ResolveSpec(req.proto, limits, &req.spec, &req.borderline);
  if (!req.invalid.empty()) return req;
  // An unset end is the table's last row: a grid's resolved row count.
  if (end_unset) req.end = req.spec.max_len;
  const uint64_t max_message = limits.max_message_bytes;
  switch (method) {
    case FuzzMethod::kEncode:
      break;  // read above
    case FuzzMethod::kGetTable:
      if (req.spec.table_bytes() > max_message) req.invalid = "table too big";
      break;
    case FuzzMethod::kStreamRows:
    case FuzzMethod::kStreamBatches:
      if (!(req.start < req.end && req.end <= req.spec.max_len)) {
        req.invalid = "range";
      } else if (req.spec.row_bytes() > max_message) {
        // One row a message at the least, whatever rows_per_batch says.
        req.invalid = "one row too big";
      } else if (uint64_t{req.rows_per_batch} * req.spec.row_bytes() >
                 max_message) {
        req.invalid = "rows_per_batch too big";
      }
      break;
    case FuzzMethod::kGetRows:
      if (req.positions.empty() ||
          req.positions.size() > limits.max_rows_per_request) {
        req.invalid = "positions count";
      } else if (req.positions.size() * req.spec.row_bytes() > max_message) {
        req.invalid = "answer too big";
      }
      for (uint32_t p : req.positions) {
        if (p >= req.spec.max_len) req.invalid = "position >= max_len";
      }
      break;
  }
  return req;
}

std::string Describe(FuzzMethod method, const Request& req, const uint8_t* data,
                     size_t size) {
  if (method == FuzzMethod::kEncode && req.parsed) {
    return absl::StrCat(
        "request bytes (", size, "): ",
        absl::CEscape(std::string(reinterpret_cast<const char*>(data), size)),
        "\n  spec: ", req.encoding_proto.ShortDebugString(),
        "\n  resolved: ", req.encoding.DebugString(), "\n  positions (",
        req.real_positions.size(), "): ",
        absl::StrJoin(req.real_positions.begin(),
                      req.real_positions.begin() +
                          std::min<size_t>(req.real_positions.size(), 16),
                      ", ",
                      [](std::string* out, double x) {
                        absl::StrAppend(out, absl::StrFormat("%.17g", x));
                      }),
        req.real_positions.size() > 16 ? ", ..." : "",
        req.invalid.empty() ? "" : "\n  harness reads it as invalid: ",
        req.invalid, req.borderline ? "\n  (borderline)" : "");
  }
  return absl::StrCat(
      "request bytes (", size, "): ",
      absl::CEscape(std::string(reinterpret_cast<const char*>(data), size)),
      req.parsed ? absl::StrCat("\n  spec: ", req.proto.ShortDebugString(),
                                "\n  resolved: ", req.spec.DebugString())
                 : "\n  (does not parse)");
}

// ---------------------------------------------------------------------------
// Values: the column of an element as (pair i, sin or cos), from the layout
// definitions in the proto, and the reference's bits.

void PairOf(Layout layout, uint32_t d, uint32_t col, uint32_t* i,
            bool* is_sin) {
  const uint32_t h = d / 2;
  switch (layout) {
    case Layout::kInterleaved:
      *i = col / 2;
      *is_sin = col % 2 == 0;
      return;
    case Layout::kConcatSinCos:
      *is_sin = col < h;
      *i = col < h ? col : col - h;
      return;
    case Layout::kConcatCosSin:
      *is_sin = col >= h;
      *i = col < h ? col : col - h;
      return;
    case Layout::kRotateHalf:
      *is_sin = col >= d;
      *i = (col % d) % h;
      return;
    case Layout::kInterleavedPairs:
      *is_sin = col >= d;
      *i = (col % d) / 2;
      return;
    case Layout::kRotationMatrix:  // never a table's (ValidateSpec)
      *is_sin = col % 4 == 1 || col % 4 == 2;
      *i = col / 4;
      return;
  }
}

size_t ElementSize(DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
      return 8;
    case DType::kFloat32:
      return 4;
    default:
      return 2;
  }
}

// The proto's value naming `dtype` (never UNSPECIFIED).
v1::DType ProtoDType(DType dtype) {
  for (const auto& [proto, named] : kProtoDTypes) {
    if (proto != v1::DTYPE_UNSPECIFIED && named == dtype) return proto;
  }
  return v1::DTYPE_UNSPECIFIED;
}

// The MPFR reference of one table family, built on first use.
class Reference {
 public:
  explicit Reference(const TableSpec& spec) : spec_(spec) {}
  uint64_t Bits(uint32_t i, uint32_t pos, bool is_sin) {
    if (spec_.rope != nullptr) {
      if (rope_ == nullptr) {
        rope_ = std::make_unique<testing::RopeReference>(spec_.rope.get(),
                                                         spec_.d, spec_.base);
      }
      return rope_->Bits(i, pos, is_sin)[static_cast<int>(spec_.dtype)];
    }
    if (plain_ == nullptr) {
      plain_ = std::make_unique<testing::ReferenceFamily>(spec_);
    }
    return plain_->Bits(i, pos, is_sin, spec_.dtype);
  }

 private:
  const TableSpec spec_;
  std::unique_ptr<testing::RopeReference> rope_;
  std::unique_ptr<testing::ReferenceFamily> plain_;
};

// Checks the rows of one tensor (rows x width elements in `data`) on a
// sample; `position_of(r)` is the table position of row r.
class ValueChecker {
 public:
  ValueChecker(const Request& req, uint64_t seed)
      : req_(req), reference_(req.spec), rng_(seed) {}

  std::string CheckRows(const std::string& data, uint32_t rows,
                        const std::function<uint32_t(uint32_t)>& position_of) {
    const uint32_t width = req_.spec.width();
    const uint64_t elements = uint64_t{rows} * width;
    if (elements == 0) return "";
    std::vector<uint64_t> picks;
    if (elements <= kCheckAll) {
      for (uint64_t e = 0; e < elements; ++e) picks.push_back(e);
    } else {
      picks = {0, elements - 1};
      std::uniform_int_distribution<uint64_t> any(0, elements - 1);
      for (int k = 0; k < kRandomSamples; ++k) picks.push_back(any(rng_));
    }
    const size_t size = ElementSize(req_.spec.dtype);
    for (uint64_t e : picks) {
      if (samples_ >= kMaxSamplesPerCall) break;
      ++samples_;
      const uint32_t r = static_cast<uint32_t>(e / width);
      const uint32_t col = static_cast<uint32_t>(e % width);
      const uint32_t pos = position_of(r);
      uint32_t i = 0;
      bool is_sin = false;
      uint64_t got = 0;
      std::memcpy(&got, data.data() + e * size, size);  // little-endian host
      uint64_t want;
      if (req_.spec.grid != nullptr) {
        // tests/numerics/grid_reference.h, from the GridSpec definition.
        if (grid_ == nullptr) {
          grid_ = std::make_unique<testing::LibraryTable>(
              testing::GridSpecTable(req_.spec));
        }
        const testing::GridElement g = grid_->element(pos, col);
        i = g.i;
        is_sin = g.is_sin;
        want = testing::GridElementBits(g, grid_->base, req_.spec.dtype);
      } else {
        PairOf(req_.spec.layout, req_.spec.d, col, &i, &is_sin);
        want = reference_.Bits(i, pos, is_sin);
      }
      ++counters.values_checked;
      if (got != want) {
        return absl::StrCat(
            "value differs from the MPFR reference at position ", pos,
            " column ", col, " (pair ", i, is_sin ? " sin" : " cos",
            "): got bits 0x", absl::Hex(got), " = ",
            testing::DecodeBits(got, req_.spec.dtype), ", want 0x",
            absl::Hex(want), " = ", testing::DecodeBits(want, req_.spec.dtype));
      }
    }
    return "";
  }

 private:
  const Request& req_;
  Reference reference_;
  std::unique_ptr<testing::LibraryTable> grid_;  // grid tables
  std::mt19937_64 rng_;
  int samples_ = 0;
};

// Checks a tensor's dtype, shape and size.
std::string CheckTensor(const v1::Tensor& t, const Request& req,
                        std::optional<uint32_t> rows) {
  const TableSpec& s = req.spec;
  if (t.dtype() != ProtoDType(s.dtype)) {
    return absl::StrCat("tensor dtype ", t.dtype());
  }
  std::vector<uint32_t> want;
  if (rows.has_value()) want.push_back(*rows);
  want.push_back(s.width());
  if (std::vector<uint32_t>(t.shape().begin(), t.shape().end()) != want) {
    return absl::StrCat("tensor shape [", absl::StrJoin(t.shape(), ","),
                        "], want [", absl::StrJoin(want, ","), "]");
  }
  const uint64_t elements = uint64_t{rows.value_or(1)} * s.width();
  if (t.data().size() != elements * ElementSize(s.dtype)) {
    return absl::StrCat("tensor data of ", t.data().size(), " bytes for ",
                        elements, " elements");
  }
  return "";
}

// Encode's answer: dtype, shape [points, width], size, and a sample of the
// values (as ValueChecker: all of a small answer, else the first, the last
// and kRandomSamples more) against real_reference.h: each sin/cos column
// mapped to (coordinate c, frequency i) by the EncodingSpec's definition,
// the pad column +0, an input column the coordinate rounded once (MPFR).
std::string CheckEncodeReply(const v1::Tensor& t, const Request& req,
                             uint64_t seed) {
  const EncodingSpec& e = req.encoding;
  const uint64_t width = e.width();
  if (t.dtype() != ProtoDType(e.dtype)) {
    return absl::StrCat("tensor dtype ", t.dtype());
  }
  const bool multi_axis = !e.axes_dim.empty() || !e.mrope_section.empty();
  if (multi_axis && e.layout == Layout::kRotationMatrix) {
    // [points, K, 2, 2]
    if (t.shape_size() != 4 || t.shape(0) != req.points ||
        uint64_t{t.shape(1)} * 4 != width || t.shape(2) != 2 ||
        t.shape(3) != 2) {
      return absl::StrCat("tensor shape [", absl::StrJoin(t.shape(), ","),
                          "], want [", req.points, ",", width / 4, ",2,2]");
    }
  } else if (t.shape_size() != 2 || t.shape(0) != req.points ||
             t.shape(1) != width) {
    return absl::StrCat("tensor shape [", absl::StrJoin(t.shape(), ","),
                        "], want [", req.points, ",", width, "]");
  }
  const size_t size = ElementSize(e.dtype);
  const uint64_t elements = uint64_t{req.points} * width;
  if (t.data().size() != elements * size) {
    return absl::StrCat("tensor data of ", t.data().size(), " bytes for ",
                        elements, " elements");
  }
  std::vector<uint64_t> picks;
  if (elements <= kCheckAll) {
    for (uint64_t k = 0; k < elements; ++k) picks.push_back(k);
  } else {
    std::mt19937_64 rng(seed);
    picks = {0, elements - 1};
    std::uniform_int_distribution<uint64_t> any(0, elements - 1);
    for (int k = 0; k < kRandomSamples; ++k) picks.push_back(any(rng));
  }
  if (multi_axis) {
    // Whole reference rows (multi_axis_reference.h), one per sampled row.
    std::map<uint64_t, std::vector<uint64_t>> rows;
    for (uint64_t k : picks) {
      const uint64_t row = k / width, col = k % width;
      auto it = rows.find(row);
      if (it == rows.end()) {
        it = rows.emplace(row, testing::MultiAxisReferenceRow(
                                   e, req.real_positions.data() +
                                          row * e.coordinates))
                 .first;
      }
      const uint64_t want = it->second[col];
      uint64_t got = 0;
      std::memcpy(&got, t.data().data() + k * size, size);  // little-endian
      ++counters.values_checked;
      if (got != want) {
        return absl::StrCat(
            "multi-axis value differs from the MPFR reference at point ", row,
            " column ", col, ": got bits 0x", absl::Hex(got), ", want 0x",
            absl::Hex(want));
      }
    }
    return "";
  }
  const uint64_t half = e.half();
  const uint64_t pairs = uint64_t{e.coordinates} * half;
  for (uint64_t k : picks) {
    const uint64_t row = k / width, col = k % width;
    const double* point = req.real_positions.data() + row * e.coordinates;
    uint64_t want = 0;
    std::string what;
    if (col < 2 * pairs) {
      uint64_t j = 0;
      bool is_sin = false;
      switch (e.layout) {
        case Layout::kConcatSinCos:
          is_sin = col < pairs;
          j = is_sin ? col : col - pairs;
          break;
        case Layout::kConcatCosSin:
          is_sin = col >= pairs;
          j = is_sin ? col - pairs : col;
          break;
        default:
          is_sin = col % 2 == 0;
          j = col / 2;
          break;
      }
      const uint32_t c = static_cast<uint32_t>(j / half);
      const uint32_t i = static_cast<uint32_t>(j % half);
      want = testing::RealReferenceBits(e, i, point[c], is_sin);
      what = absl::StrFormat("%s of coordinate %u = %.17g at frequency %u",
                             is_sin ? "sin" : "cos", c, point[c], i);
    } else if (e.pad_odd_dim && col == 2 * pairs) {
      want = 0;  // +0
      what = "the pad column";
    } else {
      const uint64_t c = col - 2 * pairs - (e.pad_odd_dim ? 1 : 0);
      mpfr_t x;
      mpfr_init2(x, 64);
      mpfr_set_d(x, point[c], MPFR_RNDN);  // exact
      want = testing::RoundMpfrToBits(x, e.dtype);
      mpfr_clear(x);
      what = absl::StrFormat("input column of coordinate %u = %.17g",
                             static_cast<uint32_t>(c), point[c]);
    }
    uint64_t got = 0;
    std::memcpy(&got, t.data().data() + k * size, size);  // little-endian
    ++counters.values_checked;
    if (got != want) {
      return absl::StrCat(
          "value differs from the MPFR reference at point ", row, " column ",
          col, " (", what, "): got bits 0x", absl::Hex(got), " = ",
          testing::DecodeBits(got, e.dtype), ", want 0x", absl::Hex(want),
          " = ", testing::DecodeBits(want, e.dtype));
    }
  }
  return "";
}

// ---------------------------------------------------------------------------
// Calls.

struct Reply {
  grpc::StatusCode code = grpc::StatusCode::UNKNOWN;
  std::string message;
  std::vector<std::string> messages;  // each response message's bytes
  bool cancelled_by_client = false;   // a stream read up to the cap
  std::optional<std::string> echoed_key;
};

std::string ToBytes(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buffer.Dump(&slices).ok()) return out;
  for (const grpc::Slice& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

// Waits for the one operation in flight on `cq`; false when it failed (the
// call ended, or no more messages).
bool Await(grpc::CompletionQueue& cq) {
  void* tag = nullptr;
  bool ok = false;
  return cq.Next(&tag, &ok) && ok;
}

// How a call ends early, on the client's side (call C, HostileCall).
struct Hostility {
  size_t cancel_after = 0;  // messages read, then cancelled; 0: never
  absl::Duration deadline = kCallDeadline;
};

// One call of `method` with the input's bytes as its request, through
// gRPC's public generic stub (the bytes go out as they are, valid or not).
// `cq` is the target's, idle between calls (every operation is awaited).
Reply Call(const std::shared_ptr<grpc::Channel>& channel,
           grpc::CompletionQueue& cq, FuzzMethod method, const uint8_t* data,
           size_t size, const std::string& key,
           const Hostility& hostility = Hostility()) {
  Reply reply;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + hostility.deadline));
  if (!key.empty()) context.AddMetadata(kRoutingKeyHeader, key);
  grpc::Slice slice(data, size);
  const grpc::ByteBuffer request(&slice, 1);
  const std::string name = kMethodNames[static_cast<int>(method)];
  grpc::GenericStub stub(channel);
  void* const tag = &reply;  // one operation at a time
  grpc::Status status;
  if (method == FuzzMethod::kGetTable || method == FuzzMethod::kGetRows ||
      method == FuzzMethod::kEncode) {
    grpc::ByteBuffer response;
    std::unique_ptr<grpc::GenericClientAsyncResponseReader> call =
        stub.PrepareUnaryCall(&context, name, request, &cq);
    call->StartCall();
    call->Finish(&response, &status, tag);
    Await(cq);
    if (status.ok()) reply.messages.push_back(ToBytes(response));
  } else {
    // A server-streaming method: one request message, then read.
    std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
        stub.PrepareCall(&context, name, &cq);
    call->StartCall(tag);
    if (Await(cq)) {
      call->WriteLast(request, grpc::WriteOptions(), tag);
      Await(cq);
    }
    grpc::ByteBuffer message;
    uint64_t bytes = 0;
    for (;;) {
      call->Read(&message, tag);
      if (!Await(cq)) break;
      if (reply.cancelled_by_client) continue;  // draining after the cap
      reply.messages.push_back(ToBytes(message));
      bytes += reply.messages.back().size();
      if (reply.messages.size() >= kStreamMaxMessages ||
          bytes >= kStreamMaxBytes ||
          reply.messages.size() == hostility.cancel_after) {
        reply.cancelled_by_client = true;
        context.TryCancel();
      }
    }
    call->Finish(&status, tag);
    Await(cq);
  }
  reply.code = status.error_code();
  reply.message = status.error_message();
  const auto& initial = context.GetServerInitialMetadata();
  auto it = initial.find(kRoutingKeyHeader);
  if (it != initial.end()) {
    reply.echoed_key = std::string(it->second.data(), it->second.size());
  }
  const int code = static_cast<int>(reply.code);
  if (code >= 0 && code < 17) ++counters.calls_by_code[code];
  if (reply.cancelled_by_client) ++counters.streams_cancelled_by_client;
  return reply;
}

std::string CodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

// Checks call A's reply (status, structure, sampled values).
std::string CheckReply(FuzzMethod method, const Request& req,
                       const Reply& reply, const std::string& key,
                       const ServerOptions& options, uint64_t seed) {
  using grpc::StatusCode;
  switch (reply.code) {
    case StatusCode::OK:
    case StatusCode::INVALID_ARGUMENT:
    case StatusCode::OUT_OF_RANGE:
    case StatusCode::RESOURCE_EXHAUSTED:
      break;
    case StatusCode::CANCELLED:
      if (reply.cancelled_by_client) break;
      [[fallthrough]];
    default:
      return absl::StrCat("status ", reply.code, " (", reply.message,
                          ") is not one the API documents for this call");
  }
  if (reply.code != StatusCode::OK) {
    // A refusal must say why, except a cancellation.
    if (reply.code != StatusCode::CANCELLED && reply.message.empty()) {
      return absl::StrCat("status ", reply.code, " without a message");
    }
    // Every rule but the RoPE parameters' is the harness's too (and
    // Encode's, but within 10^-9 of a bound).
    if ((reply.code == StatusCode::INVALID_ARGUMENT ||
         reply.code == StatusCode::OUT_OF_RANGE) &&
        req.parsed && req.invalid.empty() && req.spec.rope == nullptr &&
        !req.borderline) {
      return absl::StrCat(CodeName(reply.code), " (", reply.message,
                          ") for a request the harness reads as valid");
    }
    // Encode: a refusal's code follows the broken rule.
    if (method == FuzzMethod::kEncode && req.parsed && !req.invalid.empty() &&
        !req.borderline && reply.code != req.want_code &&
        reply.code != StatusCode::RESOURCE_EXHAUSTED) {
      return absl::StrCat(CodeName(reply.code), " (", reply.message,
                          ") for a request the harness reads as ",
                          CodeName(req.want_code), " (", req.invalid, ")");
    }
    if (!reply.cancelled_by_client) return "";
  }
  if (reply.code == StatusCode::OK || !reply.messages.empty()) {
    if (!req.parsed) return "an answer to bytes that are not the request";
    if (!req.invalid.empty() && !req.borderline) {
      return absl::StrCat(
          "an answer to a request the harness reads as "
          "invalid (",
          req.invalid, ")");
    }
  }
  if (!key.empty() && reply.code == StatusCode::OK && reply.echoed_key != key) {
    return absl::StrCat("routing key not echoed: sent '", key, "', got '",
                        reply.echoed_key.value_or("(none)"), "'");
  }
  if (method == FuzzMethod::kEncode) {
    v1::EncodeResponse r;
    if (reply.messages.size() != 1 || !r.ParseFromString(reply.messages[0])) {
      return "EncodeResponse does not parse";
    }
    return CheckEncodeReply(r.embeddings(), req, seed);
  }
  ValueChecker values(req, seed);
  switch (method) {
    case FuzzMethod::kEncode:
      return "";  // above
    case FuzzMethod::kGetTable: {
      v1::GetTableResponse r;
      if (reply.messages.size() != 1 || !r.ParseFromString(reply.messages[0])) {
        return "GetTableResponse does not parse";
      }
      if (std::string e = CheckTensor(r.table(), req, req.spec.max_len);
          !e.empty()) {
        return e;
      }
      return values.CheckRows(r.table().data(), req.spec.max_len,
                              [](uint32_t row) { return row; });
    }
    case FuzzMethod::kGetRows: {
      v1::GetRowsResponse r;
      if (reply.messages.size() != 1 || !r.ParseFromString(reply.messages[0])) {
        return "GetRowsResponse does not parse";
      }
      const uint32_t n = static_cast<uint32_t>(req.positions.size());
      if (std::string e = CheckTensor(r.rows(), req, n); !e.empty()) return e;
      return values.CheckRows(r.rows().data(), n, [&req](uint32_t row) {
        return req.positions[row];
      });
    }
    case FuzzMethod::kStreamRows:
    case FuzzMethod::kStreamBatches: {
      std::mt19937_64 pick(seed ^ 0x5851f42d4c957f2dull);
      uint32_t next = req.start;
      uint32_t batch_rows = 0;  // rows of every batch but the last
      const size_t count = reply.messages.size();
      for (size_t k = 0; k < count; ++k) {
        const std::string& bytes = reply.messages[k];
        uint32_t first = 0, rows = 1;
        const v1::Tensor* tensor = nullptr;
        v1::StreamRowsResponse row;
        v1::StreamBatchesResponse batch;
        if (method == FuzzMethod::kStreamRows) {
          if (!row.ParseFromString(bytes)) return "row does not parse";
          first = row.position();
          tensor = &row.row();
          if (std::string e = CheckTensor(*tensor, req, std::nullopt);
              !e.empty()) {
            return absl::StrCat("message ", k, ": ", e);
          }
        } else {
          if (!batch.ParseFromString(bytes)) return "batch does not parse";
          first = batch.start();
          tensor = &batch.batch();
          rows = tensor->shape_size() == 2 ? tensor->shape(0) : 0;
          if (rows == 0) return absl::StrCat("message ", k, ": empty batch");
          if (std::string e = CheckTensor(*tensor, req, rows); !e.empty()) {
            return absl::StrCat("message ", k, ": ", e);
          }
          if (uint64_t{rows} * req.spec.row_bytes() >
              options.max_message_bytes) {
            return absl::StrCat("message ", k, ": ", rows,
                                " rows exceed --max_message_bytes");
          }
          if (req.rows_per_batch != 0 &&
              rows != std::min(req.rows_per_batch, req.end - first)) {
            return absl::StrCat("message ", k, ": ", rows,
                                " rows, rows_per_batch ", req.rows_per_batch);
          }
          if (k > 0 && batch_rows != rows && first + rows != req.end) {
            return absl::StrCat("message ", k, ": ", rows, " rows after ",
                                batch_rows);
          }
          if (k == 0) batch_rows = rows;
        }
        if (first != next) {
          return absl::StrCat("message ", k, " starts at ", first, ", want ",
                              next);
        }
        if (uint64_t{first} + rows > req.end) {
          return absl::StrCat("message ", k, " passes end ", req.end);
        }
        // Values: every message of a short stream; else the first, the
        // last and a random eighth.
        if (k == 0 || k + 1 == count || count <= 8 || pick() % 8 == 0) {
          if (std::string e =
                  values.CheckRows(tensor->data(), rows,
                                   [first](uint32_t r) { return first + r; });
              !e.empty()) {
            return absl::StrCat("message ", k, ": ", e);
          }
        }
        next = first + rows;
      }
      if (reply.code == StatusCode::OK && next != req.end) {
        return absl::StrCat("stream ended OK at ", next, ", want ", req.end);
      }
      return "";
    }
  }
  return "";
}

// Waits until the server has no call in progress, no compute task and no
// inflight byte; else describes what is left.
std::string WaitIdle(PosencServer& server) {
  const absl::Time deadline = absl::Now() + kIdleTimeout;
  for (;;) {
    const MetricsInput m = server.Metrics();
    const bool idle = m.inflight_bytes == 0 && m.compute.queued_tasks == 0 &&
                      m.compute.queued_bytes == 0 &&
                      m.compute.running_tasks == 0 &&
                      m.methods->TotalInFlight() == 0;
    if (idle) return "";
    if (absl::Now() > deadline) {
      return absl::StrCat("server not idle ",
                          absl::FormatDuration(kIdleTimeout),
                          " after the call: inflight_bytes=", m.inflight_bytes,
                          " queued_tasks=", m.compute.queued_tasks,
                          " queued_bytes=", m.compute.queued_bytes,
                          " running_tasks=", m.compute.running_tasks,
                          " calls_in_flight=", m.methods->TotalInFlight());
    }
    absl::SleepFor(absl::Microseconds(50));
  }
}

uint64_t Fnv1a(const uint8_t* data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t k = 0; k < size; ++k) h = (h ^ data[k]) * 0x100000001b3ull;
  return h;
}

// With POSENC_FUZZ_CODES=<file>: appends "<target> <FNV-1a of the input>
// <first call's code>" for each input, for fuzz/agree.sh to compare the
// fast and the fresh modes.
void RecordCode(FuzzMethod method, const uint8_t* data, size_t size) {
  static FILE* const out = [] {
    const char* path = std::getenv("POSENC_FUZZ_CODES");
    return path != nullptr ? std::fopen(path, "a") : nullptr;
  }();
  if (out == nullptr) return;
  std::fprintf(out, "%s %016llx %d\n", FuzzMethodName(method),
               static_cast<unsigned long long>(Fnv1a(data, size)),
               static_cast<int>(last_code));
  std::fflush(out);
}

// The server inputs go to and the channel to it: in the fast mode one for
// many inputs (in-process channel), in the fresh mode one per input (its
// own TCP connection on 127.0.0.1).
struct Target {
  std::unique_ptr<PosencServer> server;
  std::shared_ptr<grpc::Channel> channel;
  // The client's queue, kept for the target's life (one per call cost about
  // a quarter of a GetTable input under ASan).
  std::unique_ptr<grpc::CompletionQueue> cq;
  uint64_t inputs = 0;  // served so far
};
Target fast_target;
std::optional<HarnessMode> mode;

absl::StatusOr<Target> StartTarget(HarnessMode m) {
  absl::StatusOr<std::unique_ptr<PosencServer>> created =
      PosencServer::Create(HarnessServerOptions());
  if (!created.ok()) return created.status();
  Target t;
  t.server = std::move(*created);
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  if (m == HarnessMode::kFast) {
    t.channel = t.server->InProcessChannel(args);
  } else {
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    t.channel =
        grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", t.server->port()),
                                  grpc::InsecureChannelCredentials(), args);
  }
  t.cq = std::make_unique<grpc::CompletionQueue>();
  return t;
}

// Shuts the server down and checks the process keeps nothing of it.
std::string StopTarget(Target& t) {
  if (t.cq != nullptr) {
    t.cq->Shutdown();
    void* ignored_tag = nullptr;
    bool ignored_ok = false;
    while (t.cq->Next(&ignored_tag, &ignored_ok)) {
    }
    t.cq.reset();
  }
  t.channel.reset();
  t.server.reset();
  const BufferReserve::Stats reserve = WarmReserve().GetStats();
  if (reserve.held_bytes != 0) {
    return absl::StrCat("warm reserve holds ", reserve.held_bytes,
                        " bytes with a bound of 0");
  }
  return "";
}

uint64_t RestartEvery() {
  static const uint64_t every = [] {
    const char* env = std::getenv("POSENC_FUZZ_RESTART_EVERY");
    const uint64_t n = env != nullptr ? std::strtoull(env, nullptr, 10) : 0;
    return n != 0 ? n : kRestartEvery;
  }();
  return every;
}

// What the server's counters say about one method and the cache.
struct Counts {
  MethodStats::Counts method;
  TableCache::Stats cache;
};
Counts CountsOf(PosencServer& server, FuzzMethod method) {
  const MetricsInput m = server.Metrics();
  return {m.methods->Get(static_cast<Method>(method)), m.cache};
}

// Call C, for a quarter of the inputs (chosen by the input's FNV-1a, so
// the input alone reproduces it): the same request ended early by the
// client, a stream cancelled after 1-4 messages or any call under a
// deadline of 1-32 ms, so that the server's cancellation paths run
// mid-computation. It may end as call A did, or CANCELLED (the client
// cancelled) or DEADLINE_EXCEEDED; what it got is a prefix of A's
// messages; and the server must go idle again. Call A's code (what the
// modes compare) is not affected.
std::string HostileCall(FuzzMethod method, const uint8_t* data, size_t size,
                        const std::string& key, uint64_t seed, const Reply& a,
                        uint64_t counted_before, Target& target) {
  Hostility h;
  const bool stream =
      method == FuzzMethod::kStreamRows || method == FuzzMethod::kStreamBatches;
  switch ((seed >> 40) % 4) {
    case 0:
      if (!stream) return "";
      h.cancel_after = 1 + (seed >> 44) % 4;
      break;
    case 1:
      h.deadline = absl::Milliseconds(1 + (seed >> 44) % 32);
      break;
    default:
      return "";
  }
  ++counters.hostile_calls;
  const Reply c = Call(target.channel, *target.cq, method, data, size, key, h);
  if (c.code != a.code && c.code != grpc::StatusCode::DEADLINE_EXCEEDED &&
      !(c.code == grpc::StatusCode::CANCELLED && c.cancelled_by_client)) {
    return absl::StrCat(CodeName(c.code), " (", c.message, ") where call 1 ",
                        CodeName(a.code), ", cancel after ", h.cancel_after,
                        ", deadline ", absl::FormatDuration(h.deadline));
  }
  for (size_t k = 0; k < c.messages.size(); ++k) {
    if (k >= a.messages.size() || c.messages[k] != a.messages[k]) {
      return absl::StrCat("message ", k, " differs from call 1's");
    }
  }
  // A call whose deadline passed may reach the handler (and be counted)
  // after the client gave up, while the server looked idle: wait until it
  // is counted, so that it is not the next input's.
  const absl::Time until = absl::Now() + absl::Seconds(2);
  for (;;) {
    const MethodStats::Counts n =
        target.server->Metrics().methods->Get(static_cast<Method>(method));
    if (n.ok + n.errors >= counted_before + 3 || absl::Now() > until) break;
    absl::SleepFor(absl::Microseconds(50));
  }
  return WaitIdle(*target.server);
}

std::string RunChecked(FuzzMethod method, const uint8_t* data, size_t size,
                       const Request& req, Target& target) {
  const ServerOptions options = HarnessServerOptions();
  PosencServer& server = *target.server;
  // The idle invariants hold before the input too (a long-lived server
  // carries nothing of the last input but its cache).
  absl::Time t = absl::Now();
  if (std::string e = WaitIdle(server); !e.empty()) return "before: " + e;
  Lap(&t, &phases.idle);
  const Counts before = CountsOf(server, method);
  // What a posenc client sends with each call (when it has a spec).
  // (None with Encode: any replica answers it.)
  const std::string key =
      req.parsed && method != FuzzMethod::kEncode ? RoutingKey(req.proto) : "";
  const uint64_t seed = Fnv1a(data, size);

  const Reply a = Call(target.channel, *target.cq, method, data, size, key);
  Lap(&t, &phases.call_a);
  last_code = a.code;
  if (std::string e = CheckReply(method, req, a, key, options, seed);
      !e.empty()) {
    return absl::StrCat("call 1: ", CodeName(a.code), ": ", e);
  }
  Lap(&t, &phases.check);
  if (std::string e = WaitIdle(server); !e.empty()) return "call 1: " + e;
  Lap(&t, &phases.idle);

  const Reply b = Call(target.channel, *target.cq, method, data, size, key);
  if (b.code != a.code || b.cancelled_by_client != a.cancelled_by_client) {
    return absl::StrCat("call 2 ended ", CodeName(b.code), " (", b.message,
                        "), call 1 ", CodeName(a.code), " (", a.message, ")");
  }
  if (b.messages != a.messages) {
    size_t k = 0;
    while (k < a.messages.size() && k < b.messages.size() &&
           a.messages[k] == b.messages[k]) {
      ++k;
    }
    return absl::StrCat("call 2's messages differ from call 1's at message ", k,
                        " (", b.messages.size(), " vs ", a.messages.size(),
                        " messages)");
  }
  Lap(&t, &phases.call_b);
  if (std::string e = WaitIdle(server); !e.empty()) return "call 2: " + e;
  Lap(&t, &phases.idle);

  // The server counted both calls, by outcome (what GetStats reports).
  const Counts after = CountsOf(server, method);
  const uint64_t ok = after.method.ok - before.method.ok;
  const uint64_t errors = after.method.errors - before.method.errors;
  if (ok + errors != 2 || (!a.cancelled_by_client &&
                           ok != (a.code == grpc::StatusCode::OK ? 2u : 0u))) {
    return absl::StrCat("the server counts ", ok, " ok and ", errors,
                        " errors for two calls ending ", CodeName(a.code));
  }
  if (std::string e =
          HostileCall(method, data, size, key, seed, a,
                      before.method.ok + before.method.errors, target);
      !e.empty()) {
    return "call 3: " + e;
  }
  Lap(&t, &phases.hostile);
  const uint64_t computations =
      after.cache.computations - before.cache.computations;
  // A table over the cache budget is never computed whole: a few rows of
  // it cost a few rows (a whole 2^24 x 65536 table would be terabytes).
  if (method != FuzzMethod::kEncode && req.parsed && req.invalid.empty() &&
      req.spec.table_bytes() > options.cache_bytes && computations != 0) {
    return absl::StrCat("a table of ", req.spec.table_bytes(),
                        " bytes, over the cache budget, was computed whole");
  }
  // Encode is computed per call and never cached.
  if (method == FuzzMethod::kEncode &&
      (computations != 0 || after.cache.entries != before.cache.entries ||
       after.cache.misses != before.cache.misses)) {
    return absl::StrCat("Encode touched the cache: ", computations,
                        " computations, entries ", before.cache.entries, " -> ",
                        after.cache.entries);
  }
  if (after.cache.resident_bytes > after.cache.budget_bytes) {
    return absl::StrCat("cache holds ", after.cache.resident_bytes,
                        " bytes over its budget");
  }
  const BufferReserve::Stats reserve = WarmReserve().GetStats();
  if (reserve.held_bytes != 0) {
    return absl::StrCat("warm reserve holds ", reserve.held_bytes,
                        " bytes with a bound of 0");
  }
  return "";
}

}  // namespace

const char* FuzzMethodName(FuzzMethod method) {
  static constexpr const char* kNames[kFuzzMethodCount] = {
      "get_table", "stream_rows", "stream_batches", "get_rows", "encode"};
  return kNames[static_cast<int>(method)];
}

ServerOptions HarnessServerOptions() {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  // The real limits on requests (ServerOptions' defaults): d up to 65536,
  // max_len up to 2^24, 65536 positions per GetRows.
  // Small budgets, so that an input costs at most a few milliseconds under
  // ASan (at 4 MiB, answers of a million values halved GetRows' rate): an
  // answer of at most 512 KiB (one float64 row of d = 65536); a stream
  // holds up to 2.5 messages (so a stream of 512 KiB messages is refused by
  // --max_inflight_bytes); a table over 1 MiB is never cached, so a stream
  // over it computes its rows in chunks. (The compute queue
  // refuses only behind queued work, which one call at a time never has.)
  options.max_message_bytes = uint64_t{512} << 10;
  options.max_inflight_bytes = uint64_t{1280} << 10;
  options.max_queued_compute_bytes = uint64_t{1} << 20;
  options.cache_bytes = uint64_t{1} << 20;
  // One computation per connection: a slot that is not given back makes
  // the second call RESOURCE_EXHAUSTED, which the harness reports.
  options.max_misses_per_connection = 1;
  options.threads = 2;
  // Process-wide; 0 keeps nothing across inputs.
  options.warm_reserve_bytes = 0;
  options.failure_log_lines_per_second = 0;
  options.lame_duck_seconds = 0;
  options.grace_seconds = 5;
  return options;
}

void InitHarness() {
  static const bool initialised = [] {
    grpc_init();  // never shut down: one gRPC for the life of the process
    return true;
  }();
  (void)initialised;
}

HarnessMode CurrentMode() {
  if (!mode.has_value()) {
    const char* env = std::getenv("POSENC_FUZZ_FRESH");
    mode = env != nullptr && std::string(env) == "1" ? HarnessMode::kFresh
                                                     : HarnessMode::kFast;
  }
  return *mode;
}

void SetHarnessMode(HarnessMode m) { mode = m; }

grpc::StatusCode LastCode() { return last_code; }

std::string RestartServer() {
  std::string e = fast_target.server != nullptr ? StopTarget(fast_target) : "";
  fast_target = Target();
  return e;
}

std::string RunInput(FuzzMethod method, const uint8_t* data, size_t size) {
  InitHarness();
  ++counters.inputs;
  last_code = grpc::StatusCode::UNKNOWN;
  absl::Time t = absl::Now();
  const Request req = ReadRequest(method, data, size, HarnessServerOptions());
  Lap(&t, &phases.read);
  std::string failure;
  if (CurrentMode() == HarnessMode::kFresh) {
    absl::StatusOr<Target> started = StartTarget(HarnessMode::kFresh);
    Lap(&t, &phases.start);
    if (!started.ok()) {
      failure = "server did not start: " + started.status().ToString();
    } else {
      failure = RunChecked(method, data, size, req, *started);
      t = absl::Now();
      if (failure.empty()) failure = StopTarget(*started);
      Lap(&t, &phases.stop);
    }
  } else {
    if (fast_target.server != nullptr && fast_target.inputs >= RestartEvery()) {
      failure = RestartServer();
      Lap(&t, &phases.stop);
    }
    if (failure.empty() && fast_target.server == nullptr) {
      absl::StatusOr<Target> started = StartTarget(HarnessMode::kFast);
      Lap(&t, &phases.start);
      if (started.ok()) {
        fast_target = std::move(*started);
      } else {
        failure = "server did not start: " + started.status().ToString();
      }
    }
    if (failure.empty()) {
      ++fast_target.inputs;
      failure = RunChecked(method, data, size, req, fast_target);
    }
  }
  RecordCode(method, data, size);
  if (failure.empty()) return "";
  return absl::StrCat("posenc fuzz (", FuzzMethodName(method), ", ",
                      CurrentMode() == HarnessMode::kFast ? "fast" : "fresh",
                      " mode): ", failure, "\n  ",
                      Describe(method, req, data, size));
}

const HarnessCounters& Counters() { return counters; }

std::string CountersLine() {
  std::string line = absl::StrCat("inputs=", counters.inputs);
  for (int code = 0; code < 17; ++code) {
    if (counters.calls_by_code[code] == 0) continue;
    absl::StrAppend(&line, " ",
                    absl::AsciiStrToLower(absl::StatusCodeToString(
                        static_cast<absl::StatusCode>(code))),
                    "=", counters.calls_by_code[code]);
  }
  absl::StrAppend(&line, " hostile_calls=", counters.hostile_calls);
  absl::StrAppend(&line, " streams_cancelled_by_client=",
                  counters.streams_cancelled_by_client,
                  " values_checked=", counters.values_checked);
  if (const char* env = std::getenv("POSENC_FUZZ_PHASES");
      env != nullptr && std::string(env) == "1") {
    const auto ms = [](absl::Duration d) {
      return absl::StrFormat("%.0f", absl::ToDoubleMilliseconds(d));
    };
    absl::StrAppend(&line, " ms: read=", ms(phases.read),
                    " start=", ms(phases.start), " call_a=", ms(phases.call_a),
                    " check=", ms(phases.check), " call_b=", ms(phases.call_b),
                    " hostile=", ms(phases.hostile), " idle=", ms(phases.idle),
                    " stop=", ms(phases.stop));
  }
  return line;
}

}  // namespace posenc::fuzz
