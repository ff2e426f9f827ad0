#include "convert/proto_conversion.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/numerics/shortest_double.h"

namespace posenc {

namespace {

absl::StatusOr<Layout> LayoutFromProto(v1::Layout layout) {
  switch (layout) {
    case v1::LAYOUT_UNSPECIFIED:
    case v1::LAYOUT_INTERLEAVED:
      return Layout::kInterleaved;
    case v1::LAYOUT_CONCAT_SIN_COS:
      return Layout::kConcatSinCos;
    case v1::LAYOUT_CONCAT_COS_SIN:
      return Layout::kConcatCosSin;
    case v1::LAYOUT_ROTATE_HALF:
      return Layout::kRotateHalf;
    case v1::LAYOUT_INTERLEAVED_PAIRS:
      return Layout::kInterleavedPairs;
    case v1::LAYOUT_ROTATION_MATRIX:
      return Layout::kRotationMatrix;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "spec.layout ", static_cast<int>(layout), " is not a known Layout"));
  }
}

v1::Layout LayoutToProto(Layout layout) {
  switch (layout) {
    case Layout::kInterleaved:
      return v1::LAYOUT_INTERLEAVED;
    case Layout::kConcatSinCos:
      return v1::LAYOUT_CONCAT_SIN_COS;
    case Layout::kConcatCosSin:
      return v1::LAYOUT_CONCAT_COS_SIN;
    case Layout::kRotateHalf:
      return v1::LAYOUT_ROTATE_HALF;
    case Layout::kInterleavedPairs:
      return v1::LAYOUT_INTERLEAVED_PAIRS;
    case Layout::kRotationMatrix:
      return v1::LAYOUT_ROTATION_MATRIX;
  }
  return v1::LAYOUT_UNSPECIFIED;
}

// The dtype and layout of a TableSpec or an EncodingSpec (the same two
// fields in both messages and both core specs).
template <typename Proto, typename Spec>
absl::Status DTypeAndLayoutFromProto(const Proto& proto, Spec* spec) {
  absl::StatusOr<DType> dtype = DTypeFromProto(proto.dtype());
  if (!dtype.ok()) return dtype.status();
  absl::StatusOr<Layout> layout = LayoutFromProto(proto.layout());
  if (!layout.ok()) return layout.status();
  spec->dtype = *dtype;
  spec->layout = *layout;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DType> DTypeFromProto(v1::DType dtype) {
  switch (dtype) {
    case v1::DTYPE_UNSPECIFIED:
    case v1::DTYPE_FLOAT32:
      return DType::kFloat32;
    case v1::DTYPE_FLOAT64:
      return DType::kFloat64;
    case v1::DTYPE_FLOAT16:
      return DType::kFloat16;
    case v1::DTYPE_BFLOAT16:
      return DType::kBFloat16;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "spec.dtype ", static_cast<int>(dtype), " is not a known DType"));
  }
}

v1::DType DTypeToProto(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return v1::DTYPE_FLOAT32;
    case DType::kFloat64:
      return v1::DTYPE_FLOAT64;
    case DType::kFloat16:
      return v1::DTYPE_FLOAT16;
    case DType::kBFloat16:
      return v1::DTYPE_BFLOAT16;
  }
  return v1::DTYPE_UNSPECIFIED;
}

std::optional<uint32_t> RotaryDimension(const v1::TableSpec& proto) {
  const double prf = proto.partial_rotary_factor();
  if (!(prf > 0 && prf <= 1)) return std::nullopt;  // NaN too
  // As HF: int(head_dim * partial_rotary_factor), the double product.
  return static_cast<uint32_t>(proto.d() * prf);
}

absl::StatusOr<TableSpec> SpecFromProto(const v1::TableSpec& proto) {
  TableSpec spec;
  spec.d = proto.d();
  spec.base = proto.base() == 0 ? kDefaultBase : proto.base();
  spec.max_len = proto.max_len();
  if (absl::Status s = DTypeAndLayoutFromProto(proto, &spec); !s.ok()) {
    return s;
  }
  switch (proto.frequency()) {
    case v1::FREQUENCY_UNSPECIFIED:
    case v1::FREQUENCY_PAPER:
      spec.frequency = Frequency::kPaper;
      break;
    case v1::FREQUENCY_T2T:
      spec.frequency = Frequency::kT2T;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("spec.frequency ", static_cast<int>(proto.frequency()),
                       " is not a known Frequency"));
  }
  if (const double prf = proto.partial_rotary_factor(); prf != 0) {
    const std::optional<uint32_t> dimension = RotaryDimension(proto);
    if (!dimension.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "spec.partial_rotary_factor must be in (0, 1] (0 means 1), got ",
          ShortestDouble(prf)));
    }
    const uint32_t rotary = *dimension;
    if (rotary < 2 || rotary % 2 != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec.partial_rotary_factor ", ShortestDouble(prf),
                       " gives a rotary dimension of ", rotary,
                       " for d=", proto.d(), "; it must be even and >= 2"));
    }
    spec.d = rotary;
  }
  if (proto.has_rope()) {
    absl::StatusOr<std::shared_ptr<const RopeScaling>> rope =
        RopeFromProto(proto.rope());
    if (!rope.ok()) return rope.status();
    spec.rope = *std::move(rope);
  }
  if (proto.has_grid()) {
    if (proto.partial_rotary_factor() != 0) {
      return absl::InvalidArgumentError(
          "spec.partial_rotary_factor: must be unset with spec.grid (a grid's "
          "channels are its axes')");
    }
    absl::StatusOr<std::shared_ptr<const GridSpec>> grid =
        GridFromProto(proto.grid());
    if (!grid.ok()) return grid.status();
    spec.grid = *std::move(grid);
    const uint64_t rows = spec.grid->rows();
    // Unset max_len means the grid's rows (a count past 2^32 stays 0 and
    // is refused by ValidateSpec against --max_len_limit).
    if (spec.max_len == 0 && rows <= UINT32_MAX) {
      spec.max_len = static_cast<uint32_t>(rows);
    }
  }
  return spec;
}

absl::StatusOr<std::shared_ptr<const GridSpec>> GridFromProto(
    const v1::GridSpec& proto) {
  // Bounded before anything is copied: ValidateSpec refuses 0 axes too.
  if (proto.axes_size() > static_cast<int>(kMaxGridAxes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.grid.axes: ", proto.axes_size(),
                     " axes; a grid has 1 to ", kMaxGridAxes));
  }
  auto grid = std::make_shared<GridSpec>();
  for (const v1::GridSpecAxis& a : proto.axes()) {
    GridSpecAxis axis;
    axis.size = a.size();
    axis.channels = a.channels();
    axis.first_index = a.first_index();
    axis.numerator = a.position_numerator() == 0 ? 1 : a.position_numerator();
    axis.denominator =
        a.position_denominator() == 0 ? 1 : a.position_denominator();
    const uint32_t common = std::gcd(axis.numerator, axis.denominator);
    axis.numerator /= common;
    axis.denominator /= common;
    grid->axes.push_back(axis);
  }
  if (proto.channel_order_size() == 0) {
    for (uint32_t a = 0; a < grid->axes.size(); ++a) {
      grid->channel_order.push_back(a);
    }
  } else if (proto.channel_order_size() > static_cast<int>(kMaxGridAxes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.grid.channel_order: ", proto.channel_order_size(),
        " entries for ", proto.axes_size(), " axes; list each axis once"));
  } else {
    grid->channel_order.assign(proto.channel_order().begin(),
                               proto.channel_order().end());
  }
  switch (proto.sin_cos()) {
    case v1::GRID_SIN_COS_UNSPECIFIED:
    case v1::GRID_SIN_COS_PER_AXIS:
      grid->sin_cos = GridSinCos::kPerAxis;
      break;
    case v1::GRID_SIN_COS_GROUPED:
      grid->sin_cos = GridSinCos::kGrouped;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("spec.grid.sin_cos: ", static_cast<int>(proto.sin_cos()),
                       " is not a known GridSinCos"));
  }
  grid->extra_zero_rows = proto.extra_zero_rows();
  return grid;
}

v1::GridSpec GridToProto(const GridSpec& grid) {
  v1::GridSpec proto;
  for (const GridSpecAxis& a : grid.axes) {
    v1::GridSpecAxis* axis = proto.add_axes();
    axis->set_size(a.size);
    axis->set_channels(a.channels);
    axis->set_first_index(a.first_index);
    axis->set_position_numerator(a.numerator);
    axis->set_position_denominator(a.denominator);
  }
  for (uint32_t a : grid.channel_order) proto.add_channel_order(a);
  proto.set_sin_cos(grid.sin_cos == GridSinCos::kGrouped
                        ? v1::GRID_SIN_COS_GROUPED
                        : v1::GRID_SIN_COS_PER_AXIS);
  proto.set_extra_zero_rows(grid.extra_zero_rows);
  return proto;
}

absl::StatusOr<std::shared_ptr<const RopeScaling>> RopeFromProto(
    const v1::RopeScaling& proto) {
  auto rope = std::make_shared<RopeScaling>();
  switch (proto.type()) {
    case v1::ROPE_TYPE_UNSPECIFIED:
    case v1::ROPE_TYPE_DEFAULT:
      rope->type = RopeType::kDefault;
      break;
    case v1::ROPE_TYPE_LINEAR:
      rope->type = RopeType::kLinear;
      break;
    case v1::ROPE_TYPE_DYNAMIC:
      rope->type = RopeType::kDynamic;
      break;
    case v1::ROPE_TYPE_YARN:
      rope->type = RopeType::kYarn;
      break;
    case v1::ROPE_TYPE_LLAMA3:
      rope->type = RopeType::kLlama3;
      break;
    case v1::ROPE_TYPE_LONGROPE:
      rope->type = RopeType::kLongRope;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("spec.rope.type ", static_cast<int>(proto.type()),
                       " is not a known RopeType"));
  }
  rope->factor = proto.factor();
  rope->original_max_position_embeddings =
      proto.original_max_position_embeddings();
  rope->seq_len = proto.seq_len();
  rope->beta_fast = proto.beta_fast();
  rope->beta_slow = proto.beta_slow();
  rope->mscale = proto.mscale();
  rope->mscale_all_dim = proto.mscale_all_dim();
  if (proto.has_truncate()) rope->truncate = proto.truncate();
  rope->attention_factor = proto.attention_factor();
  rope->low_freq_factor = proto.low_freq_factor();
  rope->high_freq_factor = proto.high_freq_factor();
  rope->short_factor.assign(proto.short_factor().begin(),
                            proto.short_factor().end());
  rope->long_factor.assign(proto.long_factor().begin(),
                           proto.long_factor().end());
  // The default scheme with nothing set is the plain table: one cache
  // entry for both spellings. (With a parameter set, ValidateRope refuses.)
  if (*rope == RopeScaling{}) return nullptr;
  return rope;
}

v1::RopeScaling RopeToProto(const RopeScaling& rope) {
  v1::RopeScaling proto;
  proto.set_type(static_cast<v1::RopeType>(static_cast<int>(rope.type) + 1));
  proto.set_factor(rope.factor);
  proto.set_original_max_position_embeddings(
      rope.original_max_position_embeddings);
  proto.set_seq_len(rope.seq_len);
  proto.set_beta_fast(rope.beta_fast);
  proto.set_beta_slow(rope.beta_slow);
  proto.set_mscale(rope.mscale);
  proto.set_mscale_all_dim(rope.mscale_all_dim);
  if (rope.truncate.has_value()) proto.set_truncate(*rope.truncate);
  proto.set_attention_factor(rope.attention_factor);
  proto.set_low_freq_factor(rope.low_freq_factor);
  proto.set_high_freq_factor(rope.high_freq_factor);
  for (double v : rope.short_factor) proto.add_short_factor(v);
  for (double v : rope.long_factor) proto.add_long_factor(v);
  return proto;
}

v1::TableSpec SpecToProto(const TableSpec& spec) {
  v1::TableSpec proto;
  proto.set_d(spec.d);
  proto.set_base(spec.base);
  proto.set_max_len(spec.max_len);
  proto.set_dtype(DTypeToProto(spec.dtype));
  proto.set_layout(LayoutToProto(spec.layout));
  proto.set_frequency(spec.frequency == Frequency::kPaper ? v1::FREQUENCY_PAPER
                                                          : v1::FREQUENCY_T2T);
  if (spec.rope != nullptr) *proto.mutable_rope() = RopeToProto(*spec.rope);
  if (spec.grid != nullptr) *proto.mutable_grid() = GridToProto(*spec.grid);
  return proto;
}

absl::StatusOr<EncodingSpec> EncodingSpecFromProto(
    const v1::EncodingSpec& proto) {
  EncodingSpec spec;
  spec.dim = proto.dim();
  if (absl::Status s = DTypeAndLayoutFromProto(proto, &spec); !s.ok()) {
    return s;
  }
  switch (proto.frequency()) {
    case v1::FREQUENCY_SCHEME_UNSPECIFIED:
    case v1::FREQUENCY_SCHEME_EXPONENTIAL:
      spec.scheme = FrequencyScheme::kExponential;
      break;
    case v1::FREQUENCY_SCHEME_OCTAVES:
      spec.scheme = FrequencyScheme::kOctaves;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("spec.frequency ", static_cast<int>(proto.frequency()),
                       " is not a known FrequencyScheme"));
  }
  // Octaves has no max_period: a value sent with it is refused here, where
  // "unset" (0) can still be told from an explicit 10000, the default that
  // the core spec would not tell apart.
  if (spec.scheme == FrequencyScheme::kOctaves && proto.max_period() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.max_period: ", proto.max_period(),
        " is only for FREQUENCY_SCHEME_EXPONENTIAL; leave it unset (0) with "
        "FREQUENCY_SCHEME_OCTAVES"));
  }
  spec.max_period = proto.max_period() == 0 ? kDefaultBase : proto.max_period();
  spec.shift = proto.shift();
  spec.scale = proto.scale() == 0 ? 1.0 : proto.scale();
  spec.pad_odd_dim = proto.pad_odd_dim();
  spec.num_frequencies = proto.num_frequencies();
  spec.min_freq_exp = proto.min_freq_exp();
  spec.max_freq_exp = proto.max_freq_exp();
  spec.include_input = proto.include_input();
  spec.axes_dim.assign(proto.axes_dim().begin(), proto.axes_dim().end());
  spec.mrope_section.assign(proto.mrope_section().begin(),
                            proto.mrope_section().end());
  spec.mrope_interleaved = proto.mrope_interleaved();
  // Unset coordinates: one per axis of a multi-axis spec, else 1.
  const size_t axes =
      std::max(proto.axes_dim_size(), proto.mrope_section_size());
  spec.coordinates =
      proto.coordinates() != 0 ? proto.coordinates()
      : axes != 0 ? static_cast<uint32_t>(std::min<size_t>(axes, UINT32_MAX))
                  : 1;
  return spec;
}

v1::EncodingSpec EncodingSpecToProto(const EncodingSpec& spec) {
  v1::EncodingSpec proto;
  proto.set_dim(spec.dim);
  proto.set_dtype(DTypeToProto(spec.dtype));
  proto.set_layout(LayoutToProto(spec.layout));
  const bool octaves = spec.scheme == FrequencyScheme::kOctaves;
  proto.set_frequency(octaves ? v1::FREQUENCY_SCHEME_OCTAVES
                              : v1::FREQUENCY_SCHEME_EXPONENTIAL);
  if (!octaves) proto.set_max_period(spec.max_period);
  proto.set_shift(spec.shift);
  proto.set_scale(spec.scale);
  proto.set_pad_odd_dim(spec.pad_odd_dim);
  proto.set_num_frequencies(spec.num_frequencies);
  proto.set_min_freq_exp(spec.min_freq_exp);
  proto.set_max_freq_exp(spec.max_freq_exp);
  proto.set_coordinates(spec.coordinates);
  proto.set_include_input(spec.include_input);
  for (uint32_t n : spec.axes_dim) proto.add_axes_dim(n);
  for (uint32_t n : spec.mrope_section) proto.add_mrope_section(n);
  proto.set_mrope_interleaved(spec.mrope_interleaved);
  return proto;
}

PositionGrid GridFromProto(const v1::PositionGrid& proto) {
  PositionGrid grid;
  grid.start.reserve(proto.axes_size());
  grid.count.reserve(proto.axes_size());
  for (const v1::GridAxis& axis : proto.axes()) {
    grid.start.push_back(axis.start());
    grid.count.push_back(axis.count() == 0 ? 1 : axis.count());
  }
  return grid;
}

}  // namespace posenc
