// A structure-aware mutation of a fuzz input (libFuzzer's custom mutator;
// Debian 12 has no libprotobuf-mutator). Byte mutations alone make ~97% of
// the requests INVALID_ARGUMENT (an odd d, a max_len over 2^24, an unknown
// enum: one varint off breaks a spec), so the answers, and the values the
// harness checks, came from ~3% of the inputs. Half the mutations here are
// still libFuzzer's own on the raw bytes (malformed messages, unknown
// fields, wire-type games); the other half parse the request, change one
// to three fields to values that are mostly valid, near the limits or just
// past them (d even up to 65536, max_len up to 2^24, every enum and one
// past, RoPE parameters in and out of range, LongRoPE lists of d/2
// divisors, ranges and positions inside the table; for Encode, the
// EncodingSpec's fields, whole library shapes and real points near their
// bounds), and serialize it.
#ifndef POSENC_FUZZ_REQUEST_MUTATOR_H_
#define POSENC_FUZZ_REQUEST_MUTATOR_H_

#include <cstddef>
#include <cstdint>

#include "fuzz/service_harness.h"

namespace posenc::fuzz {

// libFuzzer's LLVMFuzzerMutate: mutates data[0, size) in place, at most
// max_size bytes, returns the new size.
using RawMutator = size_t (*)(uint8_t* data, size_t size, size_t max_size);

// One mutation of the request of `method` in data[0, size) (see above);
// returns the new size (<= max_size). Deterministic in `seed`.
size_t MutateRequest(FuzzMethod method, uint8_t* data, size_t size,
                     size_t max_size, unsigned int seed, RawMutator raw);

}  // namespace posenc::fuzz

#endif  // POSENC_FUZZ_REQUEST_MUTATOR_H_
