// MpfrValue: an RAII owner of one mpfr_t, for core's MPFR code.
//
// Thread-compatible (one value per thread); not copyable.
#ifndef POSENC_CORE_NUMERICS_MPFR_VALUE_H_
#define POSENC_CORE_NUMERICS_MPFR_VALUE_H_

#include <mpfr.h>

namespace posenc {

class MpfrValue {
 public:
  explicit MpfrValue(mpfr_prec_t prec) { mpfr_init2(v_, prec); }
  ~MpfrValue() { mpfr_clear(v_); }
  MpfrValue(const MpfrValue&) = delete;
  MpfrValue& operator=(const MpfrValue&) = delete;
  mpfr_ptr get() { return v_; }
  // Reads like MPFR's own API: mpfr_add(x, y, z, ...).
  operator mpfr_ptr() { return v_; }  // NOLINT(google-explicit-constructor)

 private:
  mpfr_t v_;
};

}  // namespace posenc

#endif  // POSENC_CORE_NUMERICS_MPFR_VALUE_H_
