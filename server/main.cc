// posenc_server: parses flags into ServerOptions, runs the server until
// SIGTERM or SIGINT, then drains gracefully and exits 0.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "server/build_info.h"
#include "server/log.h"
#include "server/posenc_server.h"
#include "server/server_options.h"

// One flag per ServerOptions field, from the table in server_options.h: the
// field's default, its help with the valid range.
namespace {
const posenc::ServerOptions kDefaults;
}  // namespace
// The table's ranges, read at global scope (flags must be defined there).
using posenc::AnyValue;
using posenc::AtLeast;
using posenc::Between;
using posenc::HostPort;
using posenc::HostPortOrEmpty;
using posenc::kMaxGrpcSeconds;
using posenc::kProvenMaxD;
using posenc::kProvenMaxLen;
using posenc::kUnbounded;
using posenc::OneOf;
using posenc::Seconds;
using posenc::ZeroOrBetween;
using posenc::ZeroOrSeconds;
#define POSENC_DEFINE_FLAG(type, name, default_value, rule, help) \
  ABSL_FLAG(type, name, kDefaults.name, posenc::OptionHelp(help, rule));
POSENC_SERVER_OPTIONS(POSENC_DEFINE_FLAG)
#undef POSENC_DEFINE_FLAG

namespace {

constexpr char kUsage[] =
    "Serves sinusoidal positional-encoding tables over gRPC "
    "(posenc.v1.PositionalEncoding).\nUsage: posenc_server [--flags]\n"
    "--help lists posenc_server's flags; --helpfull adds Abseil's; "
    "--version prints the build.";

// posenc's own flags are the ones defined in the project's server/ directory:
// --help lists those, with their defaults; --helpfull lists Abseil's too.
bool IsPosencServerFlagFile(absl::string_view file) {
  return absl::StrContains(absl::StrCat("/", file), "/server/");
}

// "server/main.cc" rather than the build machine's absolute path.
std::string ShortFlagFileName(absl::string_view file) {
  const size_t at = absl::StrCat("/", file).rfind("/server/");
  return std::string(at == std::string::npos ? file : file.substr(at));
}

// Prints the usage and the flags, grouped by the file that defines them
// ("Flags from server/main.cc:") and sorted by name, in Abseil's layout
// ("--name (help); default: value;"), to stdout. Abseil's own --help
// handler exits 1; a help a user asked for is a success, so main prints it.
void PrintHelp(bool full) {
  std::vector<absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (full || IsPosencServerFlagFile(flag->Filename())) {
      flags.push_back(flag);
    }
  }
  std::sort(flags.begin(), flags.end(), [](auto* a, auto* b) {
    return std::make_pair(ShortFlagFileName(a->Filename()), a->Name()) <
           std::make_pair(ShortFlagFileName(b->Filename()), b->Name());
  });
  std::cout << kUsage << "\n";
  std::string file;
  for (const absl::CommandLineFlag* flag : flags) {
    if (ShortFlagFileName(flag->Filename()) != file) {
      file = ShortFlagFileName(flag->Filename());
      std::cout << "\n  Flags from " << file << ":\n";
    }
    const bool quoted = flag->IsOfType<std::string>();
    std::cout << "    --" << flag->Name() << " (" << flag->Help()
              << "); default: " << (quoted ? "\"" : "") << flag->DefaultValue()
              << (quoted ? "\"" : "") << ";\n";
  }
}

// --help / --helpshort / -h: 1; --helpfull: 2; else 0. Stops at "--".
int HelpRequested(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--helpfull" || arg == "-helpfull") return 2;
    if (arg == "--help" || arg == "-help" || arg == "--helpshort" ||
        arg == "-helpshort" || arg == "-h") {
      return 1;
    }
  }
  return 0;
}

posenc::ServerOptions OptionsFromFlags() {
  posenc::ServerOptions options;
#define POSENC_READ_FLAG(type, name, default_value, rule, help) \
  options.name = absl::GetFlag(FLAGS_##name);
  POSENC_SERVER_OPTIONS(POSENC_READ_FLAG)
#undef POSENC_READ_FLAG
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = IsPosencServerFlagFile;
  usage_config.contains_helpshort_flags = IsPosencServerFlagFile;
  usage_config.normalize_filename = ShortFlagFileName;
  usage_config.version_string = posenc::BuildInfo;
  absl::SetFlagsUsageConfig(usage_config);
  absl::SetProgramUsageMessage(kUsage);
  if (const int help = HelpRequested(argc, argv); help != 0) {
    PrintHelp(help == 2);
    return 0;
  }
  absl::ParseCommandLine(argc, argv);  // --version prints BuildInfo, exits 0
  // Debian's Abseil is built without NDEBUG, so every absl::Mutex lock --
  // gRPC's included -- runs the deadlock detector (a lock graph): ~12% of
  // the server's CPU per 1-row GetRows (bench: 41-47 -> 36-41 us per call).
  // The tests keep it on.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);

  // Block the stop signals in every thread (gRPC's threads inherit the
  // mask) and take them synchronously below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  // Create validates the options (an invalid one: exit 2 naming its flag).
  const posenc::ServerOptions options = OptionsFromFlags();
  absl::StatusOr<std::unique_ptr<posenc::PosencServer>> server =
      posenc::PosencServer::Create(options);
  if (!server.ok()) {
    posenc::Log("ERROR", "posenc_server cannot start: %s",
                server.status().ToString());
    return 2;
  }
  posenc::Log("INFO",
              "posenc_server listening on %s (port %d) pid=%d cache_bytes=%u "
              "max_message_bytes=%u grace_seconds=%g",
              options.listen, (*server)->port(), static_cast<int>(getpid()),
              options.cache_bytes, options.max_message_bytes,
              options.grace_seconds);
  posenc::Log("INFO", "transport: %s",
              options.tls_cert.empty()        ? "plaintext"
              : options.tls_client_ca.empty() ? "TLS"
                                              : "mutual TLS");
  if (!(*server)->shm_directory().empty()) {
    posenc::Log("INFO", "shared-memory tables in %s",
                (*server)->shm_directory());
  }
  if ((*server)->metrics_port() != 0) {
    posenc::Log("INFO", "metrics at http://%s/metrics (metrics_port %d)",
                options.metrics_listen, (*server)->metrics_port());
  }

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  const absl::Time stop_start = absl::Now();
  posenc::Log("INFO",
              "received %s: draining for up to %gs (health NOT_SERVING, "
              "serving on for lame_duck_seconds=%g first)",
              signal_number == SIGTERM ? "SIGTERM" : "SIGINT",
              options.grace_seconds, options.lame_duck_seconds);
  (*server)->Shutdown();
  posenc::Log("INFO", "posenc_server stopped after %.3fs",
              absl::ToDoubleSeconds(absl::Now() - stop_start));
  // Every call has ended. Skip the destructors: grpc::Server's calls
  // grpc_shutdown, which can sit up to ~10 s joining an executor thread that
  // polls for a pending timer, and would stretch `docker stop` for nothing.
  std::fflush(nullptr);
  std::_Exit(0);
}
