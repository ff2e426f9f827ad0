// libFuzzer target: the CLI's Hugging Face config.json reader
// (client/hf_config.h), which reads whatever file the user points it at.
// An input is the JSON text; its FNV-1a picks the options (dtype, layout,
// max_len and seq_len set or not). The answer must be OK or
// INVALID_ARGUMENT with a message; an OK spec that ValidateSpec accepts
// goes to the server as a TableSpec, so it must come back from
// SpecToProto / SpecFromProto equal, and the same text must give the same
// spec again.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/hf_config.h"
#include "convert/proto_conversion.h"

namespace {

[[noreturn]] void Fail(const std::string& what, const std::string& json) {
  const std::string line =
      absl::StrCat("posenc fuzz (hf_config): ", what, "\n  config: ", json);
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "%s\n", line.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string json(reinterpret_cast<const char*>(data), size);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t k = 0; k < size; ++k) h = (h ^ data[k]) * 0x100000001b3ull;
  posenc::HfConfigOptions options;
  options.dtype = static_cast<posenc::DType>(h % 4);
  if ((h >> 2) % 2 == 0) options.layout = posenc::Layout::kInterleaved;
  if ((h >> 3) % 4 == 0) options.max_len = static_cast<uint32_t>(h >> 40);
  if ((h >> 5) % 4 == 0) options.seq_len = static_cast<uint32_t>(h >> 16);

  const absl::StatusOr<posenc::TableSpec> spec =
      posenc::SpecFromHfConfig(json, options);
  if (!spec.ok()) {
    if (spec.status().code() != absl::StatusCode::kInvalidArgument) {
      Fail("status " + spec.status().ToString(), json);
    }
    if (spec.status().message().empty()) Fail("no message", json);
    return 0;
  }
  // (Compared once valid: an invalid spec may hold a NaN.)
  if (!posenc::ValidateSpec(*spec, posenc::SpecLimits()).ok()) return 0;
  const absl::StatusOr<posenc::TableSpec> again =
      posenc::SpecFromHfConfig(json, options);
  if (!again.ok() || !(*again == *spec)) {
    Fail("the same config read differently", json);
  }
  const absl::StatusOr<posenc::TableSpec> back =
      posenc::SpecFromProto(posenc::SpecToProto(*spec));
  if (!back.ok()) {
    Fail("a valid spec's proto does not convert back: " +
             back.status().ToString(),
         json);
  }
  if (!(*back == *spec)) {
    Fail("a valid spec changed through its proto: " +
             posenc::SpecToProto(*back).ShortDebugString() + " vs " +
             posenc::SpecToProto(*spec).ShortDebugString(),
         json);
  }
  return 0;
}
