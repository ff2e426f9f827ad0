// TableSpec: the value that names one positional-encoding table, and the
// checks that keep a request inside the server's limits.
//
//   posenc::TableSpec spec;            // the paper's table, d = 512
//   spec.d = 512;
//   spec.max_len = 2048;
//   spec.dtype = posenc::DType::kBFloat16;
//   absl::Status ok = posenc::ValidateSpec(spec, posenc::SpecLimits{});
//
// Pure value types; no gRPC. Thread-compatible.
#ifndef POSENC_CORE_SPEC_TABLE_SPEC_H_
#define POSENC_CORE_SPEC_TABLE_SPEC_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "core/numerics/dtype.h"
#include "core/spec/grid_spec.h"
#include "core/spec/rope.h"

namespace posenc {

// Definition of f_i for 0 <= i < d/2.
enum class Frequency : uint8_t {
  kPaper,  // base^(-2i/d)
  kT2T,    // base^(-i/(d/2-1)); needs d >= 4
};

inline constexpr double kDefaultBase = 10000.0;

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
  // A grid table (core/spec/grid_spec.h): rows are the points of a 1-3 axis
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
// ValidateRope; a grid table by ValidateGridTable (core/spec/grid_spec.h).
absl::Status ValidateSpec(const TableSpec& spec, const SpecLimits& limits);

// Checks a half-open row range [start, end) of a table with `max_len` rows:
// OUT_OF_RANGE when start >= max_len or end > max_len, else
// INVALID_ARGUMENT when start >= end.
absl::Status ValidateRange(uint32_t start, uint32_t end, uint32_t max_len);

}  // namespace posenc

#endif  // POSENC_CORE_SPEC_TABLE_SPEC_H_
