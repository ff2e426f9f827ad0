// posenc: command-line client of a posenc server.
//
//   posenc table  --d 512 --max-len 1024 [-o pe.npy|pe.csv|pe.bin]
//   posenc rows   --d 512 --max-len 1024 [--start 0] [--end N]
//                 [--rows-per-batch R] [-o FILE]
//   posenc gather --d 512 --max-len 1024 --positions 0,5,9 [-o FILE]
//   posenc plot   --d 512 --max-len 1024 -o pe.png [--scale N]
//   posenc table  --grid 14x14 --d 768 --grid-order 1,0 --grid-extra 1
//   posenc encode --dim 320 --positions 999.5,0.25 [--layout L] [--dtype T]
//                 [--frequency exponential|octaves] [--max-period X]
//                 [--shift X] [--scale X] [--pad-odd-dim]
//                 [--num-frequencies N --min-freq-exp X --max-freq-exp X]
//                 [--coordinates N] [--include-input] [-o FILE]
//   posenc table|rows|gather|plot|encode --preset LIBRARY.FUNCTION
//                 [--arg name=value ...] [--diffusers-config FILE]
//                 [--dtype T] [...]   (encode also: --hf-config FILE)
//   posenc stats
//   posenc health
//
// Every command takes --target host:port (default 127.0.0.1:50051),
// --timeout seconds (default 30) and, for a TLS server, --tls-ca FILE
// (the CA that signed the server's certificate), --tls-cert FILE and
// --tls-key FILE (a client certificate, for mutual TLS) and
// --tls-server-name NAME (when the certificate does not name the target's
// host). Spec options: --base, --dtype, --layout,
// --frequency, --hf-config, --seq-len (the same for table, rows, gather and
// plot: CliArgs::GetSpec; `encode` has its own, CliArgs::GetEncodingSpec).
// --preset names a library call with its own arguments (docs/presets.md);
// --diffusers-config (and, for encode, --hf-config) sends a model's
// config.json, whose class picks the preset when --preset is not given.
// The server resolves it (ResolvePreset); spec options cannot be added.
// Without -o, values are printed as CSV on stdout.
// `plot` draws the table as a PNG heat map (client/png_plot.h). `rows` and
// `plot` stream the table and, when stderr is a terminal, show a progress
// line there (client/download_progress.h); in a pipe or a file, nothing.
// Exit status: 0 on success, 1 on any RPC or I/O error (the status is printed
// on stderr), 2 on a usage error; `health` exits 1 unless SERVING.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/cli_args.h"
#include "client/download_progress.h"
#include "client/png_plot.h"
#include "client/posenc_client.h"
#include "client/tensor_file_writer.h"

namespace posenc {
namespace {

constexpr char kUsage[] =
    "usage: posenc <command> [options]\n"
    "commands:\n"
    "  table    the whole table, d x max-len\n"
    "  rows     rows [start, end) streamed in batches, in constant memory\n"
    "  gather   the rows at --positions\n"
    "  plot     the whole table as a PNG heat map (-o FILE.png)\n"
    "  encode   rows of real-valued points (timesteps, coordinates), "
    "Encode\n"
    "  stats    the server's counters (GetStats)\n"
    "  health   grpc.health.v1 Check; exits 1 unless SERVING\n"
    "options of every command:\n"
    "  --target host:port       server address (default: 127.0.0.1:50051)\n"
    "  --timeout seconds        deadline of each call (default: 30)\n"
    "  --tls-ca FILE            CA of the server's certificate; enables TLS "
    "(default: plaintext)\n"
    "  --tls-cert FILE --tls-key FILE\n"
    "                           client certificate, for mutual TLS "
    "(default: none)\n"
    "  --tls-server-name NAME   name the server's certificate must have "
    "(default: the target's host)\n"
    "table only:\n"
    "  --shared-memory          map the table from the server's --shm_dir "
    "(same host;\n"
    "                           falls back to the bytes; says which on "
    "stderr)\n"
    "table, rows, gather and plot (the table spec):\n"
    "  --d N                    model dimension (required)\n"
    "  --max-len N              table length (required)\n"
    "  --base X                 frequency base (default: 10000)\n"
    "  --dtype T                float32|float64|float16|bfloat16 "
    "(default: float32)\n"
    "  --layout L               interleaved|concat_sin_cos|concat_cos_sin|\n"
    "                           rotate_half|interleaved_pairs "
    "(default: interleaved)\n"
    "  --frequency F            paper|t2t (default: paper)\n"
    "  --hf-config FILE         the RoPE table of a Hugging Face config.json\n"
    "                           (rope_theta, head_dim, "
    "partial_rotary_factor,\n"
    "                           max_position_embeddings, rope_scaling); "
    "replaces\n"
    "                           --d/--base/--frequency; --layout defaults "
    "to\n"
    "                           rotate_half, --max-len to "
    "max_position_embeddings\n"
    "  --seq-len N              with --hf-config: the sequence length of "
    "dynamic\n"
    "                           NTK and LongRoPE (default: unset, as HF at "
    "init)\n"
    "  --grid SIZES             a grid table (MAE, diffusers, timm, "
    "CogVideoX):\n"
    "                           axis sizes in row order, e.g. 14x14 or "
    "13x30x45;\n"
    "                           --d and --max-len default to the grid's, "
    "--layout\n"
    "                           to concat_sin_cos (docs/cli.md)\n"
    "  --grid-channels C,C      channels per axis (default: --d split "
    "evenly)\n"
    "  --grid-positions P/Q,..  position step per axis, exact rationals "
    "(default: 1/1)\n"
    "  --grid-first F,F         index of each axis's first point (default: "
    "0)\n"
    "  --grid-order A,A         axes in channel order (default: row order; "
    "MAE 1,0)\n"
    "  --grid-sin-cos S         per_axis|grouped (default: per_axis)\n"
    "  --grid-extra N           zero rows first, cls tokens (default: 0)\n"
    "  -o, --output FILE        .npy, .csv or .bin (default: CSV on stdout)\n"
    "rows:\n"
    "  --start S                first position (default: 0)\n"
    "  --end E                  one past the last position "
    "(default: max-len)\n"
    "  --rows-per-batch R       rows per streamed message "
    "(default: 0, the server's choice)\n"
    "gather:\n"
    "  --positions 0,5,9        positions to return (required)\n"
    "plot:\n"
    "  -o, --output FILE.png    the PNG to write (required; - for stdout)\n"
    "  --scale N                pixels per value, an N x N square "
    "(default: 1)\n"
    "                           rows = positions, columns = channels;\n"
    "                           colours -1 blue (0,0,255), 0 white "
    "(255,255,255),\n"
    "                           +1 red (255,0,0), linear between\n"
    "encode (docs/encodings.md; -o as above):\n"
    "  --positions 999.5,0.25   the points, --coordinates values each "
    "(required)\n"
    "  --frequency F            exponential|octaves (default: exponential)\n"
    "  --dim N                  exponential: channels per coordinate "
    "(required);\n"
    "                           octaves: the row width, optional\n"
    "  --max-period X           exponential: the base (default: 10000)\n"
    "  --shift X                exponential: diffusers' "
    "downscale_freq_shift (default: 0)\n"
    "  --pad-odd-dim            exponential: a zero column after an odd "
    "--dim\n"
    "  --num-frequencies N      octaves: frequencies (required)\n"
    "  --min-freq-exp X --max-freq-exp X\n"
    "                           octaves: exponents of 2 (default: 0)\n"
    "  --scale X                every frequency times X (default: 1)\n"
    "  --coordinates N          values per point (default: 1)\n"
    "  --include-input          the point's values appended to its row\n"
    "  --dtype T, --layout L    as above; layout interleaved|concat_sin_cos|"
    "\n"
    "                           concat_cos_sin (default: interleaved)\n"
    "  --axes-dim 16,56,56      multi-axis RoPE: each axis's channels (FLUX)\n"
    "  --mrope-section 16,24,24 multi-axis RoPE: Qwen2-VL's sections "
    "(--dim = head_dim)\n"
    "  --mrope-interleaved      Qwen3-VL's interleaved sections\n"
    "                           (multi-axis also takes --layout rotate_half|"
    "\n"
    "                           interleaved_pairs|rotation_matrix)\n"
    "  --grid 0,0:64,0:64       instead of --positions: start:count per "
    "coordinate,\n"
    "                           the integer points row-major\n"
    "presets, for table, rows, gather, plot and encode (docs/presets.md):\n"
    "  --preset LIB.FUNCTION    a library call, e.g. "
    "diffusers.get_timestep_embedding\n"
    "  --arg name=value         one of its arguments, by the library's own "
    "name\n"
    "                           (repeat: --arg embedding_dim=320 --arg "
    "flip_sin_to_cos=True)\n"
    "  --diffusers-config FILE  a diffusers unet/ or transformer/config.json: "
    "its\n"
    "                           settings fill the arguments (the class picks "
    "the\n"
    "                           preset when --preset is not given)\n"
    "  --hf-config FILE         encode: a Hugging Face config.json, the same "
    "way\n"
    "                           (--dtype may be added; other spec options "
    "not)\n"
    "rows and plot show progress on stderr when it is a terminal\n"
    "exit status: 0 success, 1 RPC or I/O error, 2 usage error\n";

bool IsHelp(const std::string& arg) {
  return arg == "--help" || arg == "-h" || arg == "--helpfull" || arg == "help";
}

const std::vector<std::string> kCommon = {
    "target", "timeout", "tls-ca", "tls-cert", "tls-key", "tls-server-name"};
const std::vector<std::string> kSpec = {"d",
                                        "max-len",
                                        "base",
                                        "dtype",
                                        "layout",
                                        "frequency",
                                        "output",
                                        "hf-config",
                                        "seq-len",
                                        "grid",
                                        "grid-channels",
                                        "grid-positions",
                                        "grid-first",
                                        "grid-order",
                                        "grid-sin-cos",
                                        "grid-extra",
                                        "preset",
                                        "arg",
                                        "diffusers-config"};

const std::vector<std::string> kEncodeOptions = {"positions",
                                                 "dim",
                                                 "dtype",
                                                 "layout",
                                                 "frequency",
                                                 "scale",
                                                 "max-period",
                                                 "shift",
                                                 "output",
                                                 "coordinates",
                                                 "num-frequencies",
                                                 "min-freq-exp",
                                                 "max-freq-exp",
                                                 "axes-dim",
                                                 "mrope-section",
                                                 "grid",
                                                 "preset",
                                                 "arg",
                                                 "diffusers-config",
                                                 "hf-config"};
// Options of `encode` that take no value.
const std::vector<std::string> kEncodeSwitches = {
    "pad-odd-dim", "include-input", "mrope-interleaved"};

// Options that take no value.
std::vector<std::string> Switches() {
  std::vector<std::string> switches = kEncodeSwitches;
  switches.push_back("shared-memory");
  return switches;
}

std::vector<std::string> Allowed(const std::string& command) {
  std::vector<std::string> allowed = kCommon;
  if (command == "table" || command == "rows" || command == "gather" ||
      command == "plot") {
    allowed.insert(allowed.end(), kSpec.begin(), kSpec.end());
  }
  if (command == "plot") allowed.push_back("scale");
  if (command == "rows") {
    allowed.insert(allowed.end(), {"start", "end", "rows-per-batch"});
  }
  if (command == "gather") allowed.push_back("positions");
  if (command == "table") allowed.push_back("shared-memory");
  if (command == "encode") {
    allowed.insert(allowed.end(), kEncodeOptions.begin(), kEncodeOptions.end());
    allowed.insert(allowed.end(), kEncodeSwitches.begin(),
                   kEncodeSwitches.end());
  }
  return allowed;
}

// The server's messages name the RPC a program calls instead ("use
// StreamBatches"); a CLI user needs the command that does it.
std::string CliWayOut(absl::string_view message) {
  return absl::StrReplaceAll(
      message, {{"use StreamBatches to receive it in parts",
                 "use `posenc rows` (same options) to receive it streamed in "
                 "parts"}});
}

int Fail(const absl::Status& status) {
  std::cerr << "posenc: " << absl::StatusCodeToString(status.code()) << ": "
            << CliWayOut(status.message()) << "\n";
  return 1;
}

int Usage(const absl::Status& status) {
  std::cerr << "posenc: " << status.message() << "\n" << kUsage;
  return 2;
}

// Whether to show a download's progress on stderr: only on a terminal, and
// not when the data itself goes to that terminal (CSV or PNG on stdout).
bool ShowProgress(const std::string& output) {
  const bool to_stdout = output.empty() || output == "-";
  return DownloadProgress::IsTerminal(stderr) &&
         !(to_stdout && DownloadProgress::IsTerminal(stdout));
}

// The whole table, streamed in batches into a PNG (client/png_plot.h). A
// failed plot leaves no file behind.
int Plot(PosencClient& client, const TableSpec& spec, const CliArgs& args) {
  const std::string output = args.GetString("output", "");
  if (output.empty()) {
    return Usage(absl::InvalidArgumentError(
        "plot needs -o FILE.png (or -o - for stdout)"));
  }
  absl::StatusOr<uint32_t> scale = args.GetUint32("scale", 1);
  if (!scale.ok()) return Usage(scale.status());
  absl::StatusOr<std::unique_ptr<PngPlotWriter>> png =
      PngPlotWriter::Open(output, spec.max_len, spec.width(), *scale);
  if (!png.ok()) {
    return png.status().code() == absl::StatusCode::kInvalidArgument
               ? Usage(png.status())
               : Fail(png.status());
  }
  DownloadProgress progress(stderr, ShowProgress(output), spec.max_len,
                            spec.row_bytes());
  absl::Status s = client.StreamBatches(spec, 0, std::nullopt, 0,
                                        [&](uint32_t, const Tensor& batch) {
                                          progress.Add(batch.shape[0]);
                                          return (*png)->Append(batch);
                                        });
  progress.Finish();
  if (s.ok()) s = (*png)->Close();
  if (s.ok()) return 0;
  png->reset();
  if (output != "-") std::remove(output.c_str());
  return Fail(s);
}

absl::Status WriteTensor(const std::string& path, DType dtype, uint32_t width,
                         const Tensor& tensor) {
  absl::StatusOr<std::unique_ptr<TensorFileWriter>> writer =
      TensorFileWriter::Open(path, dtype, tensor.shape[0], width);
  if (!writer.ok()) return writer.status();
  if (absl::Status s = (*writer)->Append(tensor); !s.ok()) return s;
  return (*writer)->Close();
}

// Options that define a spec themselves, so they cannot be combined with
// --preset (the preset defines it); --dtype can.
const std::vector<std::string> kSpecDefining = {"d",
                                                "max-len",
                                                "base",
                                                "layout",
                                                "frequency",
                                                "seq-len",
                                                "dim",
                                                "max-period",
                                                "shift",
                                                "scale",
                                                "coordinates",
                                                "num-frequencies",
                                                "min-freq-exp",
                                                "max-freq-exp",
                                                "pad-odd-dim",
                                                "include-input",
                                                "grid",
                                                "grid-channels",
                                                "grid-positions",
                                                "grid-first",
                                                "grid-order",
                                                "grid-sin-cos",
                                                "grid-extra",
                                                "axes-dim",
                                                "mrope-section",
                                                "mrope-interleaved"};

bool WantsPreset(const CliArgs& args) {
  return args.Has("preset") || args.Has("diffusers-config") ||
         (args.command() == "encode" && args.Has("hf-config"));
}

// The spec of --preset NAME with its --arg name=value (and a model's
// config.json from --diffusers-config, or --hf-config for encode),
// resolved by the server's ResolvePreset. Usage errors come back as
// INVALID_ARGUMENT with `*usage` set.
absl::StatusOr<std::variant<TableSpec, EncodingSpec>> ResolvePresetSpec(
    PosencClient& client, const CliArgs& args, bool* usage) {
  *usage = true;
  for (const std::string& option : kSpecDefining) {
    // plot's --scale is its pixel size and encode's --grid its points, not
    // spec options.
    if (args.Has(option) && !(option == "scale" && args.command() == "plot") &&
        !(option == "grid" && args.command() == "encode")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", option,
          " cannot be combined with --preset or a model "
          "config: the preset defines the spec (pass the library's own "
          "arguments with --arg name=value)"));
    }
  }
  if (!args.Has("preset") && !args.library_arguments().empty()) {
    return absl::InvalidArgumentError("--arg needs --preset");
  }
  absl::StatusOr<DType> dtype = args.GetDType();
  if (!dtype.ok()) return dtype.status();
  std::string config;
  for (const char* option : {"diffusers-config", "hf-config"}) {
    if (!args.Has(option)) continue;
    std::ifstream in(args.GetString(option, ""), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in || text.str().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", option, ": cannot read '", args.GetString(option, ""), "'"));
    }
    config = text.str();
  }
  *usage = false;
  absl::StatusOr<PosencClient::Preset> preset = client.ResolvePreset(
      args.GetString("preset", ""), args.library_arguments(), config, *dtype);
  if (!preset.ok()) return preset.status();
  return preset->spec;
}

// `encode`: one Encode call, its [points, width] rows written as the table
// commands write theirs. Options are checked before the call (exit 2).
int Encode(PosencClient& client, const CliArgs& args) {
  absl::StatusOr<EncodingSpec> spec = args.GetEncodingSpec();
  if (WantsPreset(args)) {
    bool usage = false;
    auto resolved = ResolvePresetSpec(client, args, &usage);
    if (!resolved.ok()) {
      return usage ? Usage(resolved.status()) : Fail(resolved.status());
    }
    if (!std::holds_alternative<EncodingSpec>(*resolved)) {
      return Usage(absl::InvalidArgumentError(
          "that preset is a table: use table, rows or gather"));
    }
    spec = std::get<EncodingSpec>(*resolved);
  }
  if (!spec.ok()) return Usage(spec.status());
  absl::StatusOr<Tensor> rows;
  if (args.Has("grid")) {
    if (args.Has("positions")) {
      return Usage(absl::InvalidArgumentError(
          "--positions and --grid: give the points one way"));
    }
    absl::StatusOr<PositionGrid> grid = args.GetGrid("grid");
    if (!grid.ok()) return Usage(grid.status());
    rows = client.EncodeGrid(*spec, *grid);
  } else {
    absl::StatusOr<std::vector<double>> positions =
        args.GetDoubleList("positions");
    if (!positions.ok()) return Usage(positions.status());
    rows = client.Encode(*spec, *positions);
  }
  if (!rows.ok()) return Fail(rows.status());
  // [points, width], or [points, K, 2, 2] (rotation_matrix): written as
  // [points, 4K].
  if (rows->shape.size() < 2) {
    return Fail(absl::InternalError(
        absl::StrCat("Encode answered a tensor of ", rows->shape.size(),
                     " dimensions, want [points, width]")));
  }
  uint64_t width = 1;
  for (size_t k = 1; k < rows->shape.size(); ++k) width *= rows->shape[k];
  absl::Status s = WriteTensor(args.GetString("output", ""), spec->dtype,
                               static_cast<uint32_t>(width), *rows);
  return s.ok() ? 0 : Fail(s);
}

int Run(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  // `posenc --help`, `posenc help` and `posenc COMMAND --help`.
  for (int i = 1; i < argc; ++i) {
    if (IsHelp(argv[i]) && (i == 1 || std::string(argv[i]) != "help")) {
      std::cout << kUsage;
      return 0;
    }
  }
  const std::string command = argv[1];
  if (command != "table" && command != "rows" && command != "gather" &&
      command != "plot" && command != "encode" && command != "stats" &&
      command != "health") {
    return Usage(absl::InvalidArgumentError(
        absl::StrCat("unknown command '", command, "'")));
  }
  absl::StatusOr<CliArgs> args =
      CliArgs::Parse(argc, argv, Allowed(command), Switches());
  if (!args.ok()) return Usage(args.status());
  absl::StatusOr<double> timeout = args->GetDouble("timeout", 30);
  if (!timeout.ok()) return Usage(timeout.status());

  PosencClient::Options options;
  options.target = args->GetString("target", options.target);
  options.timeout = absl::Seconds(*timeout);
  if (args->Has("tls-ca") || args->Has("tls-cert") || args->Has("tls-key")) {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
        TlsCredentials(args->GetString("tls-ca", ""),
                       args->GetString("tls-cert", ""),
                       args->GetString("tls-key", ""));
    if (!credentials.ok()) return Usage(credentials.status());
    options.credentials = *credentials;
  }
  options.tls_server_name = args->GetString("tls-server-name", "");
  options.shared_memory = args->Has("shared-memory");
  PosencClient client(options);

  if (command == "health") {
    absl::StatusOr<bool> serving = client.CheckHealth();
    if (!serving.ok()) return Fail(serving.status());
    std::cout << (*serving ? "SERVING" : "NOT_SERVING") << "\n";
    return *serving ? 0 : 1;
  }
  if (command == "stats") {
    absl::StatusOr<v1::GetStatsResponse> stats = client.GetStats();
    if (!stats.ok()) return Fail(stats.status());
    std::cout << stats->DebugString();
    return 0;
  }

  if (command == "encode") return Encode(client, *args);

  absl::StatusOr<TableSpec> spec = args->GetSpec();
  if (WantsPreset(*args)) {
    bool usage = false;
    auto resolved = ResolvePresetSpec(client, *args, &usage);
    if (!resolved.ok()) {
      return usage ? Usage(resolved.status()) : Fail(resolved.status());
    }
    if (!std::holds_alternative<TableSpec>(*resolved)) {
      return Usage(absl::InvalidArgumentError(
          "that preset is an encoding of real-valued points: use encode "
          "--positions"));
    }
    spec = std::get<TableSpec>(*resolved);
  }
  if (!spec.ok()) return Usage(spec.status());
  if (command == "plot") return Plot(client, *spec, *args);
  const std::string output = args->GetString("output", "");

  if (command == "table") {
    std::string bytes_because;
    absl::StatusOr<Tensor> table = client.GetTable(*spec, &bytes_because);
    if (!table.ok()) return Fail(table.status());
    if (table->mapping != nullptr) {
      std::cerr << "shared memory: mapped " << table->mapping->path() << " ("
                << table->bytes().size() << " bytes, xxh64 verified)\n";
    } else if (options.shared_memory) {
      std::cerr << "shared memory: not available (" << bytes_because
                << "), received the bytes\n";
    }
    absl::Status s = WriteTensor(output, spec->dtype, spec->width(), *table);
    return s.ok() ? 0 : Fail(s);
  }
  if (command == "gather") {
    absl::StatusOr<std::vector<uint32_t>> positions =
        args->GetUint32List("positions");
    if (!positions.ok()) return Usage(positions.status());
    absl::StatusOr<Tensor> rows = client.GetRows(*spec, *positions);
    if (!rows.ok()) return Fail(rows.status());
    absl::Status s = WriteTensor(output, spec->dtype, spec->width(), *rows);
    return s.ok() ? 0 : Fail(s);
  }

  // rows: streamed in batches straight to the output, in constant memory.
  absl::StatusOr<uint32_t> start = args->GetUint32("start", 0);
  if (!start.ok()) return Usage(start.status());
  absl::StatusOr<uint32_t> end = args->GetUint32("end", spec->max_len);
  if (!end.ok()) return Usage(end.status());
  absl::StatusOr<uint32_t> per_batch = args->GetUint32("rows-per-batch", 0);
  if (!per_batch.ok()) return Usage(per_batch.status());
  const uint32_t rows = *end > *start ? *end - *start : 0;
  absl::StatusOr<std::unique_ptr<TensorFileWriter>> writer =
      TensorFileWriter::Open(output, spec->dtype, rows, spec->width());
  if (!writer.ok()) return Fail(writer.status());
  DownloadProgress progress(stderr, ShowProgress(output), rows,
                            spec->row_bytes());
  absl::Status s = client.StreamBatches(*spec, *start, *end, *per_batch,
                                        [&](uint32_t, const Tensor& batch) {
                                          progress.Add(batch.shape[0]);
                                          return (*writer)->Append(batch);
                                        });
  progress.Finish();
  if (!s.ok()) return Fail(s);
  s = (*writer)->Close();
  return s.ok() ? 0 : Fail(s);
}

}  // namespace
}  // namespace posenc

int main(int argc, char** argv) {
  // Debian's Abseil is built without NDEBUG: every absl::Mutex lock, gRPC's
  // included, would run the deadlock detector (see server/main.cc).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return posenc::Run(argc, argv);
}
