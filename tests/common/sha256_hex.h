// Sha256Hex: the lowercase hex SHA-256 of a byte string (OpenSSL), the digest
// every interop client prints and the golden generator writes.
#ifndef POSENC_TESTS_COMMON_SHA256_HEX_H_
#define POSENC_TESTS_COMMON_SHA256_HEX_H_

#include <openssl/sha.h>

#include <cstdio>
#include <string>

namespace posenc::testing {

inline std::string Sha256Hex(const std::string& bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
         digest);
  std::string hex;
  char buf[3];
  for (unsigned char b : digest) {
    std::snprintf(buf, sizeof(buf), "%02x", b);
    hex += buf;
  }
  return hex;
}

}  // namespace posenc::testing

#endif  // POSENC_TESTS_COMMON_SHA256_HEX_H_
