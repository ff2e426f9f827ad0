// Exact pair frequencies f_i of a table spec, evaluated with MPFR.
//
// f_i is the real number base^(-i/den), den = d/2 (kPaper, i.e.
// base^(-2i/d)) or d/2 - 1 (kT2T). It is never rounded to a double first: we
// evaluate it in MPFR with a proven error bound and split it into three
// doubles whose sum is within 2^-158 * f_i of the real value.
//
// Thread-safe (MPFR is built with thread-local caches). Preconditions:
// ValidateSpec(spec) is OK.
#ifndef POSENC_CORE_SPEC_EXACT_FREQUENCY_H_
#define POSENC_CORE_SPEC_EXACT_FREQUENCY_H_

#include <mpfr.h>

#include <cstdint>
#include <vector>

#include "core/numerics/frequency_words.h"
#include "core/spec/table_spec.h"

namespace posenc {

// Exponent of the frequency as a fraction: f_i = base^(-i / denominator).
uint32_t FrequencyDenominator(const TableSpec& spec);

// Sets `out` (whatever its precision w = mpfr_get_prec(out) >= 64) to f_i
// with |out - f_i| <= 2^(12 - w) * f_i. f_0 is exactly 1.
void FrequencyMpfr(const TableSpec& spec, uint32_t i, mpfr_ptr out);

// Splits f (at least 160 bits) into w0 + w1 + w2, each the nearest double to
// what is left, so |f - (w0 + w1 + w2)| <= 2^-159 |f| (words normal: f >=
// 2^-900). `rest` is scratch of f's precision.
FrequencyWords SplitIntoWords(mpfr_srcptr f, mpfr_ptr rest);

// All d/2 frequencies of `spec`, computed as f_i = g^i with g = f_1 at 192
// bits (O(d) multiplications; error i * 2^-180 < 2^-164.9 relative, so the
// three words are within 2^-158.9 of f_i).
std::vector<FrequencyWords> ExactFrequencies(const TableSpec& spec);

}  // namespace posenc

#endif  // POSENC_CORE_SPEC_EXACT_FREQUENCY_H_
