// libFuzzer target: the input is the serialized request of one method
// (POSENC_FUZZ_METHOD: 0 GetTable, 1 StreamRows, 2 StreamBatches, 3 GetRows,
// 4 Encode), sent to a real posenc server through gRPC and checked
// (fuzz/service_harness.h: one long-lived server on the in-process channel,
// or with POSENC_FUZZ_FRESH=1 a fresh server and TCP connection per input).
// A failed check prints what failed (stdout and stderr, so it survives
// -close_fd_mask=2) and aborts; the crash file alone reproduces it:
// ./fuzz_get_rows crash-...
// Mutations: half libFuzzer's own, half structure-aware (request_mutator.h).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz/request_mutator.h"
#include "fuzz/service_harness.h"

#ifndef POSENC_FUZZ_METHOD
#error \
    "define POSENC_FUZZ_METHOD: 0 GetTable, 1 StreamRows, 2 StreamBatches, 3 GetRows, 4 Encode"
#endif

namespace {

constexpr posenc::fuzz::FuzzMethod kMethod =
    static_cast<posenc::fuzz::FuzzMethod>(POSENC_FUZZ_METHOD);

void PrintSummary() {
  std::printf("posenc-fuzz %s: %s\n", posenc::fuzz::FuzzMethodName(kMethod),
              posenc::fuzz::CountersLine().c_str());
  std::fflush(stdout);
}

}  // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size,
                                          size_t max_size, unsigned int seed) {
  return posenc::fuzz::MutateRequest(kMethod, data, size, max_size, seed,
                                     &LLVMFuzzerMutate);
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  posenc::fuzz::InitHarness();
  std::atexit(PrintSummary);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string failure = posenc::fuzz::RunInput(kMethod, data, size);
  if (!failure.empty()) {
    std::printf("%s\n", failure.c_str());
    std::fflush(stdout);
    std::fprintf(stderr, "%s\n", failure.c_str());
    std::abort();
  }
  return 0;
}
