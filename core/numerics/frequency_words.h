// FrequencyWords: a frequency held as three doubles whose sum is within
// 2^-158 relative of the exact real (core/spec/exact_frequency.h computes
// them), the input of the double and double-double sin/cos kernels.
//
// Pure value type; thread-compatible.
#ifndef POSENC_CORE_NUMERICS_FREQUENCY_WORDS_H_
#define POSENC_CORE_NUMERICS_FREQUENCY_WORDS_H_

namespace posenc {

// f_i ~= w0 + w1 + w2 with |f_i - (w0 + w1 + w2)| <= 2^-158 * f_i, provided
// w0 >= 2^-900 (otherwise the words may lose bits to underflow; callers
// must treat such columns with the MPFR path). w0 = RN(f_i) unless f_i lies
// within 2^-164 relative of a rounding boundary of double.
struct FrequencyWords {
  double w0 = 0, w1 = 0, w2 = 0;
};

}  // namespace posenc

#endif  // POSENC_CORE_NUMERICS_FREQUENCY_WORDS_H_
