#include "client/cli_args.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/hf_config.h"

namespace posenc {

absl::StatusOr<CliArgs> CliArgs::Parse(
    int argc, const char* const* argv, const std::vector<std::string>& allowed,
    const std::vector<std::string>& switches) {
  CliArgs args;
  if (argc < 2) return absl::InvalidArgumentError("missing command");
  args.command_ = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    std::string name, value;
    bool has_value = false;
    if (arg == "-o") {
      name = "output";
    } else if (arg.size() > 2 && arg.compare(0, 2, "--") == 0) {
      name = arg.substr(2);
      if (size_t eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_value = true;
      }
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument '", arg, "'"));
    }
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown option --", name, " for '", args.command_,
                       "' (accepted: --", absl::StrJoin(allowed, " --"), ")"));
    }
    const bool is_switch =
        std::find(switches.begin(), switches.end(), name) != switches.end();
    if (!has_value && is_switch) {
      value = "true";
    } else if (!has_value) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(
            absl::StrCat("option --", name, " needs a value"));
      }
      value = argv[++i];
    }
    if (name == "arg") {
      const size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--arg '", value, "' is not name=value (e.g. embedding_dim=320)"));
      }
      if (!args.library_arguments_
               .emplace(value.substr(0, eq), value.substr(eq + 1))
               .second) {
        return absl::InvalidArgumentError(
            absl::StrCat("--arg ", value.substr(0, eq), " is given twice"));
      }
    }
    args.values_[name] = value;
  }
  return args;
}

absl::StatusOr<DType> CliArgs::GetDType() const {
  TableSpec holder;
  if (absl::Status s = ParseDTypeAndLayout("interleaved", &holder); !s.ok()) {
    return s;
  }
  return holder.dtype;
}

std::string CliArgs::GetString(const std::string& name,
                               const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

absl::StatusOr<uint32_t> CliArgs::GetUint32(const std::string& name,
                                            uint32_t fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  uint32_t v;
  if (!absl::SimpleAtoi(it->second, &v)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", name, " must be a non-negative integer, got '", it->second, "'"));
  }
  return v;
}

absl::StatusOr<double> CliArgs::GetDouble(const std::string& name,
                                          double fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  double v;
  if (!absl::SimpleAtod(it->second, &v)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " must be a number, got '", it->second, "'"));
  }
  return v;
}

absl::StatusOr<bool> CliArgs::GetBool(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return false;
  if (it->second == "true" || it->second == "1") return true;
  if (it->second == "false" || it->second == "0") return false;
  return absl::InvalidArgumentError(
      absl::StrCat("--", name, " takes no value, or =true or =false; got '",
                   it->second, "'"));
}

absl::StatusOr<std::vector<uint32_t>> CliArgs::GetUint32List(
    const std::string& name) const {
  std::vector<uint32_t> out;
  for (absl::string_view part :
       absl::StrSplit(GetString(name, ""), ',', absl::SkipWhitespace())) {
    uint32_t v;
    if (!absl::SimpleAtoi(part, &v)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", name, " must be comma-separated integers, got '", part, "'"));
    }
    out.push_back(v);
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " is required, e.g. --", name, " 0,5,9"));
  }
  return out;
}

absl::StatusOr<std::vector<double>> CliArgs::GetDoubleList(
    const std::string& name) const {
  std::vector<double> out;
  for (absl::string_view part :
       absl::StrSplit(GetString(name, ""), ',', absl::SkipWhitespace())) {
    double v;
    if (!absl::SimpleAtod(part, &v)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", name, " must be comma-separated numbers, got '", part, "'"));
    }
    out.push_back(v);
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " is required, e.g. --", name, " 999.5,0.25"));
  }
  return out;
}

absl::StatusOr<PositionGrid> CliArgs::GetGrid(const std::string& name) const {
  PositionGrid grid;
  for (absl::string_view part :
       absl::StrSplit(GetString(name, ""), ',', absl::SkipWhitespace())) {
    const std::vector<absl::string_view> fields = absl::StrSplit(part, ':');
    int32_t start = 0;
    uint32_t count = 1;
    if (fields.size() > 2 || !absl::SimpleAtoi(fields[0], &start) ||
        (fields.size() == 2 && !absl::SimpleAtoi(fields[1], &count))) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name,
                       " takes start:count (or start) per coordinate, "
                       "comma-separated integers; got '",
                       part, "'"));
    }
    grid.start.push_back(start);
    grid.count.push_back(count == 0 ? 1 : count);
  }
  if (grid.start.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " is empty; e.g. --", name, " 0,0:64,0:64"));
  }
  return grid;
}

absl::StatusOr<EncodingSpec> CliArgs::GetEncodingSpec() const {
  EncodingSpec spec;
  const std::string frequency = GetString("frequency", "exponential");
  std::vector<const char*> other_scheme;
  if (frequency == "exponential") {
    spec.scheme = FrequencyScheme::kExponential;
    other_scheme = {"num-frequencies", "min-freq-exp", "max-freq-exp"};
  } else if (frequency == "octaves") {
    spec.scheme = FrequencyScheme::kOctaves;
    other_scheme = {"max-period", "shift", "pad-odd-dim"};
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "--frequency must be exponential or octaves, got '", frequency, "'"));
  }
  for (const char* name : other_scheme) {
    if (Has(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", name, " does not apply to --frequency ", frequency, " (",
          frequency == "octaves"
              ? "--max-period, --shift and --pad-odd-dim are "
                "exponential's"
              : "--num-frequencies, --min-freq-exp and "
                "--max-freq-exp are octaves'",
          ")"));
    }
  }
  absl::StatusOr<uint32_t> dim = GetUint32("dim", 0);
  if (!dim.ok()) return dim.status();
  spec.dim = *dim;
  absl::StatusOr<double> scale = GetDouble("scale", 1);
  if (!scale.ok()) return scale.status();
  spec.scale = *scale;
  if (Has("axes-dim")) {
    absl::StatusOr<std::vector<uint32_t>> axes = GetUint32List("axes-dim");
    if (!axes.ok()) return axes.status();
    spec.axes_dim = *axes;
  }
  if (Has("mrope-section")) {
    absl::StatusOr<std::vector<uint32_t>> sections =
        GetUint32List("mrope-section");
    if (!sections.ok()) return sections.status();
    spec.mrope_section = *sections;
  }
  absl::StatusOr<bool> interleaved = GetBool("mrope-interleaved");
  if (!interleaved.ok()) return interleaved.status();
  spec.mrope_interleaved = *interleaved;
  // Multi-axis: one coordinate per axis unless --coordinates says otherwise
  // (the server checks that they agree).
  const size_t axes = std::max(spec.axes_dim.size(), spec.mrope_section.size());
  absl::StatusOr<uint32_t> coordinates =
      GetUint32("coordinates", axes != 0 ? static_cast<uint32_t>(axes) : 1);
  if (!coordinates.ok()) return coordinates.status();
  spec.coordinates = *coordinates;
  absl::StatusOr<bool> include_input = GetBool("include-input");
  if (!include_input.ok()) return include_input.status();
  spec.include_input = *include_input;
  if (spec.scheme == FrequencyScheme::kExponential) {
    if (!Has("dim") && spec.axes_dim.empty()) {
      return absl::InvalidArgumentError(
          "--dim is required (channels per coordinate), e.g. --dim 320");
    }
    absl::StatusOr<double> max_period = GetDouble("max-period", kDefaultBase);
    if (!max_period.ok()) return max_period.status();
    spec.max_period = *max_period;
    absl::StatusOr<double> shift = GetDouble("shift", 0);
    if (!shift.ok()) return shift.status();
    spec.shift = *shift;
    absl::StatusOr<bool> pad = GetBool("pad-odd-dim");
    if (!pad.ok()) return pad.status();
    spec.pad_odd_dim = *pad;
  } else {
    if (!Has("num-frequencies")) {
      return absl::InvalidArgumentError(
          "--num-frequencies is required with --frequency octaves");
    }
    absl::StatusOr<uint32_t> n = GetUint32("num-frequencies", 0);
    if (!n.ok()) return n.status();
    spec.num_frequencies = *n;
    absl::StatusOr<double> lo = GetDouble("min-freq-exp", 0);
    if (!lo.ok()) return lo.status();
    spec.min_freq_exp = *lo;
    absl::StatusOr<double> hi = GetDouble("max-freq-exp", 0);
    if (!hi.ok()) return hi.status();
    spec.max_freq_exp = *hi;
  }
  TableSpec holder;
  if (absl::Status s = ParseDTypeAndLayout("interleaved", &holder); !s.ok()) {
    return s;
  }
  if (!spec.multi_axis() && (holder.layout == Layout::kRotateHalf ||
                             holder.layout == Layout::kInterleavedPairs ||
                             holder.layout == Layout::kRotationMatrix)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--layout ", GetString("layout", ""),
        " is a RoPE layout: it needs --axes-dim or --mrope-section; else "
        "encode takes interleaved, concat_sin_cos or concat_cos_sin"));
  }
  spec.dtype = holder.dtype;
  spec.layout = holder.layout;
  return spec;
}

namespace {

// "a,b,c" as one value per axis: n values, or one value for every axis.
absl::StatusOr<std::vector<std::string>> PerAxis(const std::string& name,
                                                 const std::string& text,
                                                 size_t n) {
  std::vector<std::string> parts =
      absl::StrSplit(text, ',', absl::SkipWhitespace());
  if (parts.size() == 1 && n > 1) parts.assign(n, parts[0]);
  if (parts.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " needs one value per --grid axis (", n,
                     ") or one for all, got '", text, "'"));
  }
  return parts;
}

}  // namespace

absl::StatusOr<TableSpec> CliArgs::GetGridSpec() const {
  for (const char* conflicting : {"hf-config", "frequency", "seq-len"}) {
    if (Has(conflicting)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", conflicting, " cannot be combined with --grid"));
    }
  }
  auto grid = std::make_shared<GridSpec>();
  const std::string sizes = GetString("grid", "");
  for (absl::string_view part : absl::StrSplit(sizes, 'x')) {
    uint32_t v;
    if (!absl::SimpleAtoi(part, &v)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--grid must be sizes in row order like 14x14 or 13x30x45, got '",
          sizes, "'"));
    }
    GridSpecAxis axis;
    axis.size = v;
    grid->axes.push_back(axis);
  }
  const size_t n = grid->axes.size();
  absl::StatusOr<uint32_t> d = GetUint32("d", 0);
  if (!d.ok()) return d.status();
  if (Has("grid-channels")) {
    absl::StatusOr<std::vector<std::string>> channels =
        PerAxis("grid-channels", GetString("grid-channels", ""), n);
    if (!channels.ok()) return channels.status();
    for (size_t a = 0; a < n; ++a) {
      if (!absl::SimpleAtoi((*channels)[a], &grid->axes[a].channels)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--grid-channels must be integers, got '", (*channels)[a], "'"));
      }
    }
  } else if (*d != 0 && *d % n == 0) {
    for (GridSpecAxis& axis : grid->axes) axis.channels = *d / n;
  } else {
    return absl::InvalidArgumentError(
        "--grid needs --grid-channels, or --d split evenly over the axes");
  }
  if (Has("grid-positions")) {
    absl::StatusOr<std::vector<std::string>> steps =
        PerAxis("grid-positions", GetString("grid-positions", ""), n);
    if (!steps.ok()) return steps.status();
    for (size_t a = 0; a < n; ++a) {
      std::vector<std::string> pq = absl::StrSplit((*steps)[a], '/');
      GridSpecAxis& axis = grid->axes[a];
      if (pq.empty() || pq.size() > 2 ||
          !absl::SimpleAtoi(pq[0], &axis.numerator) ||
          (pq.size() == 2 && !absl::SimpleAtoi(pq[1], &axis.denominator))) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--grid-positions must be steps like 1/3 or 16/24 (one per axis "
            "or one for all), got '",
            (*steps)[a], "'"));
      }
    }
  }
  if (Has("grid-first")) {
    absl::StatusOr<std::vector<std::string>> first =
        PerAxis("grid-first", GetString("grid-first", ""), n);
    if (!first.ok()) return first.status();
    for (size_t a = 0; a < n; ++a) {
      if (!absl::SimpleAtoi((*first)[a], &grid->axes[a].first_index)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--grid-first must be integers, got '", (*first)[a], "'"));
      }
    }
  }
  if (Has("grid-order")) {
    absl::StatusOr<std::vector<uint32_t>> order = GetUint32List("grid-order");
    if (!order.ok()) return order.status();
    grid->channel_order = *order;
  } else {
    for (uint32_t a = 0; a < n; ++a) grid->channel_order.push_back(a);
  }
  const std::string sin_cos = GetString("grid-sin-cos", "per_axis");
  if (sin_cos == "per_axis") {
    grid->sin_cos = GridSinCos::kPerAxis;
  } else if (sin_cos == "grouped") {
    grid->sin_cos = GridSinCos::kGrouped;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "--grid-sin-cos must be per_axis or grouped, got '", sin_cos, "'"));
  }
  absl::StatusOr<uint32_t> extra = GetUint32("grid-extra", 0);
  if (!extra.ok()) return extra.status();
  grid->extra_zero_rows = *extra;
  TableSpec spec;
  // d and max_len default to the grid's (the server checks them).
  spec.d = *d != 0 ? *d : static_cast<uint32_t>(grid->channels());
  absl::StatusOr<uint32_t> max_len = GetUint32("max-len", 0);
  if (!max_len.ok()) return max_len.status();
  spec.max_len = *max_len;
  if (spec.max_len == 0 && grid->rows() <= UINT32_MAX) {
    spec.max_len = static_cast<uint32_t>(grid->rows());
  }
  absl::StatusOr<double> base = GetDouble("base", kDefaultBase);
  if (!base.ok()) return base.status();
  spec.base = *base;
  if (absl::Status s = ParseDTypeAndLayout("concat_sin_cos", &spec); !s.ok()) {
    return s;
  }
  spec.grid = std::move(grid);
  return spec;
}

absl::StatusOr<TableSpec> CliArgs::GetSpec() const {
  if (Has("hf-config")) return GetHfConfigSpec();
  if (Has("grid")) return GetGridSpec();
  for (const char* grid_only : {"grid-channels", "grid-positions", "grid-first",
                                "grid-order", "grid-sin-cos", "grid-extra"}) {
    if (Has(grid_only)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", grid_only, " needs --grid"));
    }
  }
  TableSpec spec;
  absl::StatusOr<uint32_t> d = GetUint32("d", 0);
  if (!d.ok()) return d.status();
  absl::StatusOr<uint32_t> max_len = GetUint32("max-len", 0);
  if (!max_len.ok()) return max_len.status();
  absl::StatusOr<double> base = GetDouble("base", kDefaultBase);
  if (!base.ok()) return base.status();
  if (!Has("d")) {
    return absl::InvalidArgumentError(
        "--d is required (the model dimension), e.g. --d 512");
  }
  if (*d == 0) {
    return absl::InvalidArgumentError(
        "--d must be at least 2 (the model dimension, an even number), got 0");
  }
  if (!Has("max-len")) {
    return absl::InvalidArgumentError(
        "--max-len is required (the table's rows: positions 0..max-len-1), "
        "e.g. --max-len 2048");
  }
  if (*max_len == 0) {
    return absl::InvalidArgumentError(
        "--max-len must be at least 1 (the table's rows: positions "
        "0..max-len-1), got 0");
  }
  spec.d = *d;
  spec.max_len = *max_len;
  spec.base = *base;

  if (absl::Status s = ParseDTypeAndLayout("interleaved", &spec); !s.ok()) {
    return s;
  }
  if (spec.layout == Layout::kRotationMatrix) {
    return absl::InvalidArgumentError(
        "--layout rotation_matrix is encode's (multi-axis RoPE: --axes-dim or "
        "--mrope-section), not a table's");
  }
  const std::string frequency = GetString("frequency", "paper");
  if (frequency == "paper") {
    spec.frequency = Frequency::kPaper;
  } else if (frequency == "t2t") {
    spec.frequency = Frequency::kT2T;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "--frequency must be paper or t2t, got '", frequency, "'"));
  }
  return spec;
}

absl::StatusOr<TableSpec> CliArgs::GetHfConfigSpec() const {
  for (const char* conflicting : {"d", "base", "frequency"}) {
    if (Has(conflicting)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", conflicting,
                       " cannot be combined with --hf-config (the "
                       "config sets it)"));
    }
  }
  const std::string path = GetString("hf-config", "");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat("--hf-config: cannot read '", path, "'"));
  }
  std::stringstream json;
  json << in.rdbuf();
  TableSpec layout_holder;
  if (absl::Status s = ParseDTypeAndLayout("rotate_half", &layout_holder);
      !s.ok()) {
    return s;
  }
  HfConfigOptions options;
  options.dtype = layout_holder.dtype;
  options.layout = layout_holder.layout;
  if (Has("max-len")) {
    absl::StatusOr<uint32_t> max_len = GetUint32("max-len", 0);
    if (!max_len.ok()) return max_len.status();
    options.max_len = *max_len;
  }
  if (Has("seq-len")) {
    absl::StatusOr<uint32_t> seq_len = GetUint32("seq-len", 0);
    if (!seq_len.ok()) return seq_len.status();
    options.seq_len = *seq_len;
  }
  absl::StatusOr<TableSpec> spec = SpecFromHfConfig(json.str(), options);
  if (!spec.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--hf-config ", path, ": ", spec.status().message()));
  }
  return spec;
}

absl::Status CliArgs::ParseDTypeAndLayout(const std::string& default_layout,
                                          TableSpec* spec_out) const {
  TableSpec& spec = *spec_out;
  const std::string dtype = GetString("dtype", "float32");
  if (dtype == "float32") {
    spec.dtype = DType::kFloat32;
  } else if (dtype == "float64") {
    spec.dtype = DType::kFloat64;
  } else if (dtype == "float16") {
    spec.dtype = DType::kFloat16;
  } else if (dtype == "bfloat16") {
    spec.dtype = DType::kBFloat16;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "--dtype must be float32, float64, float16 or bfloat16, got '", dtype,
        "'"));
  }
  const std::string layout = GetString("layout", default_layout);
  if (layout == "interleaved") {
    spec.layout = Layout::kInterleaved;
  } else if (layout == "concat_sin_cos") {
    spec.layout = Layout::kConcatSinCos;
  } else if (layout == "concat_cos_sin") {
    spec.layout = Layout::kConcatCosSin;
  } else if (layout == "rotate_half") {
    spec.layout = Layout::kRotateHalf;
  } else if (layout == "interleaved_pairs") {
    spec.layout = Layout::kInterleavedPairs;
  } else if (layout == "rotation_matrix") {
    spec.layout = Layout::kRotationMatrix;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "--layout must be interleaved, concat_sin_cos, concat_cos_sin, "
        "rotate_half, interleaved_pairs or rotation_matrix, got '",
        layout, "'"));
  }
  return absl::OkStatus();
}

}  // namespace posenc
