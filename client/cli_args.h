// CliArgs: the command line of the `posenc` CLI: a command word followed by
// `--name value`, `--name=value` or `-o FILE` options, and switches (`--name`
// alone, or `--name=true|false`). Typed getters report a bad or unknown
// option as INVALID_ARGUMENT naming it.
#ifndef POSENC_CLIENT_CLI_ARGS_H_
#define POSENC_CLIENT_CLI_ARGS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/spec/encoding_spec.h"
#include "core/spec/position_grid.h"
#include "core/spec/table_spec.h"

namespace posenc {

class CliArgs {
 public:
  // `allowed` lists the option names (without dashes) the command accepts;
  // those also in `switches` take no value (`--name` means true).
  static absl::StatusOr<CliArgs> Parse(
      int argc, const char* const* argv,
      const std::vector<std::string>& allowed,
      const std::vector<std::string>& switches = {});

  const std::string& command() const { return command_; }
  // The library call's own arguments of --preset: each `--arg name=value`
  // (repeatable, one value per name; docs/presets.md).
  const std::map<std::string, std::string>& library_arguments() const {
    return library_arguments_;
  }
  // --dtype alone (default float32), for --preset.
  absl::StatusOr<DType> GetDType() const;
  bool Has(const std::string& name) const { return values_.contains(name); }
  std::string GetString(const std::string& name,
                        const std::string& fallback) const;
  absl::StatusOr<uint32_t> GetUint32(const std::string& name,
                                     uint32_t fallback) const;
  absl::StatusOr<double> GetDouble(const std::string& name,
                                   double fallback) const;
  // A switch: false when absent; `--name` or `--name=true` (or 1) is true,
  // `--name=false` (or 0) false.
  absl::StatusOr<bool> GetBool(const std::string& name) const;
  // Comma-separated non-negative integers, e.g. "0,5,9".
  absl::StatusOr<std::vector<uint32_t>> GetUint32List(
      const std::string& name) const;
  // Comma-separated numbers (any double: "999.5,-0.25,1e-3"); required.
  absl::StatusOr<std::vector<double>> GetDoubleList(
      const std::string& name) const;
  // --d, --max-len, --base, --dtype, --layout, --frequency; or, with
  // --hf-config FILE, the RoPE table of a Hugging Face config.json
  // (client/hf_config.h) with --dtype, --layout (default rotate_half),
  // --max-len and --seq-len; or, with --grid SIZES (e.g. 14x14), a grid
  // table (GetGridSpec).
  absl::StatusOr<TableSpec> GetSpec() const;
  // A grid table (docs/cli.md "Grid tables"): --grid sizes in row order
  // ("14x14", "13x30x45"); --grid-channels per axis (default --d split
  // evenly); --grid-positions steps p/q (default 1/1), --grid-first
  // first indices (default 0), each one per axis or one for all;
  // --grid-order the axes' channel order (default row order);
  // --grid-sin-cos per_axis|grouped; --grid-extra zero rows; --d and
  // --max-len default to the grid's; --layout defaults to concat_sin_cos.
  // Syntax errors are INVALID_ARGUMENT naming the option; the values are
  // the server's to check.
  absl::StatusOr<TableSpec> GetGridSpec() const;
  // The EncodingSpec of `posenc encode` (docs/encodings.md): --frequency
  // exponential (default: --dim required, --max-period, --shift,
  // --pad-odd-dim) or octaves (--num-frequencies required, --min-freq-exp,
  // --max-freq-exp; --dim optional); and --scale, --coordinates,
  // --include-input, --dtype, --layout (interleaved, concat_sin_cos or
  // concat_cos_sin); multi-axis RoPE: --axes-dim or --mrope-section (with
  // --mrope-interleaved), which also allow --layout rotate_half,
  // interleaved_pairs and rotation_matrix, --coordinates defaulting to the
  // axes. An option of the other scheme is an error naming it; the values
  // themselves are the server's to check.
  absl::StatusOr<EncodingSpec> GetEncodingSpec() const;
  // `--grid S:N,S,...`: one start:count (start alone: count 1) per
  // coordinate, start an int32, count a uint32 (0 is 1, as the proto).
  // INVALID_ARGUMENT naming the option when an entry does not parse.
  absl::StatusOr<PositionGrid> GetGrid(const std::string& name) const;

 private:
  absl::StatusOr<TableSpec> GetHfConfigSpec() const;
  absl::Status ParseDTypeAndLayout(const std::string& default_layout,
                                   TableSpec* spec) const;

  std::string command_;
  absl::flat_hash_map<std::string, std::string> values_;
  std::map<std::string, std::string> library_arguments_;
};

}  // namespace posenc

#endif  // POSENC_CLIENT_CLI_ARGS_H_
