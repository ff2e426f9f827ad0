// Exact frequencies F_i = scale * f_i / scale_divisor of an EncodingSpec
// (see core/spec/encoding_spec.h), evaluated with MPFR, and the exact
// angles that are whole quarter turns.
//
// Thread-safe (MPFR's caches are thread-local); pure functions.
// Preconditions: ValidateEncodingSpec(spec) is OK and
// RealFrequencyRangeError(spec) is OK, except for RealFrequencyRangeError
// itself.
#ifndef POSENC_CORE_SPEC_REAL_FREQUENCIES_H_
#define POSENC_CORE_SPEC_REAL_FREQUENCIES_H_

#include <mpfr.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "core/spec/encoding_spec.h"
#include "core/spec/exact_frequency.h"

namespace posenc {

// INVALID_ARGUMENT naming the fields when a frequency F_i lies outside
// [2^-800, 2^24] (decided on the exact F_i), else OK. Cheap: a double
// estimate first, so a hostile exponent costs no MPFR work.
absl::Status RealFrequencyRangeError(const EncodingSpec& spec);

// Sets `out` (precision w = mpfr_get_prec(out) >= 64) to F_i with
// |out - F_i| <= 2^(12 - w) * F_i. i < spec.half().
void RealFrequencyMpfr(const EncodingSpec& spec, uint32_t i, mpfr_ptr out);

// All spec.half() frequencies as three words each, within 2^-158 * F_i
// (powers of one ratio at 256 bits: O(half) MPFR products).
std::vector<FrequencyWords> RealFrequencies(const EncodingSpec& spec);

// kOctaves: the exponent e_k when it is an integer (then x * F_k can be an
// exact multiple of pi / 2), else nullopt. Exact rational arithmetic, a few
// MPFR operations. (kExponential never needs it: x * F_i is never a nonzero
// multiple of pi / 2, as F_i / scale is algebraic and pi is not.)
std::optional<int32_t> IntegerOctaveExponent(const EncodingSpec& spec,
                                             uint32_t k);

// Whether x * scale * 2 pi * 2^e / divisor is exactly m * pi / 2 for an
// integer m (i.e. x * scale * 2^(e + 2) / divisor is an integer); sets *m.
// |x * F| <= 2^24, divisor >= 1.
bool WholeQuarterTurns(double x, double scale, uint32_t divisor, int32_t e,
                       int64_t* m);

}  // namespace posenc

#endif  // POSENC_CORE_SPEC_REAL_FREQUENCIES_H_
