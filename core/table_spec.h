// TableSpec: the value that names one positional-encoding table, and the
// checks that keep a request inside the server's limits.
//
// Pure value types; no gRPC. Thread-compatible.
#ifndef POSENC_CORE_TABLE_SPEC_H_
#define POSENC_CORE_TABLE_SPEC_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "core/grid_spec.h"
#include "core/rope.h"

namespace posenc {

// Element type of a table. Values are rounded once from the exact real value.
enum class DType : uint8_t { kFloat32, kFloat64, kFloat16, kBFloat16 };

// Channel order within a row; pair i has frequency f_i.
enum class Layout : uint8_t {
  kInterleaved,   // sin at 2i, cos at 2i+1 (the paper)
  kConcatSinCos,  // sin at i, cos at d/2+i (tensor2tensor, fairseq)
  kConcatCosSin,  // cos at i, sin at d/2+i (ggml, diffusers, vLLM's RoPE)
  // The RoPE layouts hold every value twice (rows of 2d channels):
  kRotateHalf,        // cos at i and d/2+i, sin at d+i and 3d/2+i (HF)
  kInterleavedPairs,  // cos at 2i and 2i+1, sin at d+2i and d+2i+1 (GPT-J)
  // Multi-axis RoPE encodings only (EncodingSpec, never a table): pair i's
  // 2x2 rotation [cos, -sin, sin, cos] at 4i..4i+3 (FLUX EmbedND).
  kRotationMatrix,
};

// Channels per row of a table of dimension d in `layout`: d, or 2d for the
// RoPE layouts.
inline uint32_t RowWidth(uint32_t d, Layout layout) {
  return layout == Layout::kRotateHalf || layout == Layout::kInterleavedPairs ||
                 layout == Layout::kRotationMatrix
             ? 2 * d
             : d;
}

// Definition of f_i for 0 <= i < d/2.
enum class Frequency : uint8_t {
  kPaper,  // base^(-2i/d)
  kT2T,    // base^(-i/(d/2-1)); needs d >= 4
};

inline constexpr double kDefaultBase = 10000.0;

// Bytes per element of `dtype`.
size_t DTypeSize(DType dtype);
const char* DTypeName(DType dtype);
const char* LayoutName(Layout layout);
const char* FrequencyName(Frequency frequency);

// A fully resolved table spec: defaults are already applied (base is never 0,
// d is the rotary dimension when the request had a partial_rotary_factor).
struct TableSpec {
  uint32_t d = 0;
  double base = kDefaultBase;
  uint32_t max_len = 0;
  DType dtype = DType::kFloat32;
  Layout layout = Layout::kInterleaved;
  Frequency frequency = Frequency::kPaper;
  // RoPE scaling; null means none (the plain sinusoid, also RoPE's
  // "default" scheme). Shared and immutable: specs are copied freely.
  std::shared_ptr<const RopeScaling> rope;
  // A grid table (core/grid_spec.h): rows are the points of a 1-3 axis
  // grid, d the sum of the axes' channels, max_len the grid's row count.
  // Null means the plain table of positions 0..max_len-1. Shared and
  // immutable like rope.
  std::shared_ptr<const GridSpec> grid;

  uint32_t width() const { return RowWidth(d, layout); }
  size_t row_bytes() const { return size_t{width()} * DTypeSize(dtype); }
  uint64_t table_bytes() const { return uint64_t{max_len} * row_bytes(); }

  // Same table family: every field but max_len. Rows of a family do not
  // depend on max_len, so a longer table serves any shorter one. (A grid
  // fixes max_len: its family has one table.)
  bool SameFamily(const TableSpec& o) const {
    return d == o.d && base == o.base && dtype == o.dtype &&
           layout == o.layout && frequency == o.frequency &&
           (rope == o.rope ||
            (rope != nullptr && o.rope != nullptr && *rope == *o.rope)) &&
           (grid == o.grid ||
            (grid != nullptr && o.grid != nullptr && *grid == *o.grid));
  }
  bool operator==(const TableSpec& o) const {
    return SameFamily(o) && max_len == o.max_len;
  }
  template <typename H>
  friend H AbslHashValue(H h, const TableSpec& s) {
    h = H::combine(std::move(h), s.d, s.base, s.max_len, s.dtype, s.layout,
                   s.frequency, s.rope != nullptr);
    if (s.rope != nullptr) h = H::combine(std::move(h), *s.rope);
    h = H::combine(std::move(h), s.grid != nullptr);
    if (s.grid != nullptr) h = H::combine(std::move(h), *s.grid);
    return h;
  }

  // "d=512 base=10000 max_len=8192 dtype=float32 layout=interleaved ..."
  std::string DebugString() const;
};

// Server-side limits a spec and a request must respect.
struct SpecLimits {
  uint32_t max_d = 65536;
  uint32_t max_len_limit = 16777216;  // 2^24: every position exact in float32
};

// OK, or INVALID_ARGUMENT naming the field, the value and the limit:
// d odd / zero / over max_d, d < 4 with kT2T, base not finite or <= 1,
// max_len zero or over max_len_limit, rope with kT2T or failing
// ValidateRope; a grid table by ValidateGridTable (core/grid_spec.h).
absl::Status ValidateSpec(const TableSpec& spec, const SpecLimits& limits);

// Checks a half-open row range [start, end) of a table with `max_len` rows:
// OUT_OF_RANGE when start >= max_len or end > max_len, else
// INVALID_ARGUMENT when start >= end.
absl::Status ValidateRange(uint32_t start, uint32_t end, uint32_t max_len);

}  // namespace posenc

#endif  // POSENC_CORE_TABLE_SPEC_H_
