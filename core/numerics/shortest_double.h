// ShortestDouble: a double as the shortest decimal that reads back as the
// same double ("0.1", "2.0000000000000004", "65536", "1e-07", "nan", "inf"),
// for error messages that compare a value against a limit: a value one ulp
// past a limit never prints as the limit itself (absl::StrCat's six digits
// print 2 + 2^-51 as "2").
//
// Pure function; thread-safe.
#ifndef POSENC_CORE_NUMERICS_SHORTEST_DOUBLE_H_
#define POSENC_CORE_NUMERICS_SHORTEST_DOUBLE_H_

#include <charconv>
#include <string>

namespace posenc {

inline std::string ShortestDouble(double v) {
  char buf[32];  // the longest shortest form is 24 characters
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace posenc

#endif  // POSENC_CORE_NUMERICS_SHORTEST_DOUBLE_H_
