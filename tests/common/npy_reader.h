// ReadNpy: a minimal reader of NumPy .npy files (format 1.0, C order), for
// tests that check files written by posenc without depending on NumPy.
#ifndef POSENC_TESTS_COMMON_NPY_READER_H_
#define POSENC_TESTS_COMMON_NPY_READER_H_

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace posenc::testing {

struct NpyArray {
  std::string descr;  // e.g. "<f4"
  std::vector<uint64_t> shape;
  std::string data;  // raw element bytes
};

inline absl::StatusOr<NpyArray> ReadNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    return absl::DataLossError("not an .npy file: " + path);
  }
  if (bytes[6] != 1) return absl::DataLossError("not .npy version 1.x");
  const size_t header_len =
      static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
  if ((10 + header_len) % 64 != 0) {
    return absl::DataLossError("header is not 64-byte aligned");
  }
  const std::string header = bytes.substr(10, header_len);
  NpyArray array;
  size_t d = header.find("'descr': '");
  size_t s = header.find("'shape': (");
  if (d == std::string::npos || s == std::string::npos ||
      header.find("'fortran_order': False") == std::string::npos ||
      header.back() != '\n') {
    return absl::DataLossError("unexpected header: " + header);
  }
  array.descr = header.substr(d + 10, header.find('\'', d + 10) - d - 10);
  const std::string dims =
      header.substr(s + 10, header.find(')', s + 10) - s - 10);
  for (absl::string_view dim : absl::StrSplit(dims, ',', absl::SkipEmpty())) {
    uint64_t v;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(dim), &v)) {
      return absl::DataLossError("bad shape: " + dims);
    }
    array.shape.push_back(v);
  }
  array.data = bytes.substr(10 + header_len);
  return array;
}

}  // namespace posenc::testing

#endif  // POSENC_TESTS_COMMON_NPY_READER_H_
