// What posenc_server --version prints: posenc's version, the git commit it
// was built from, and the gRPC it links with its patch set (the patched gRPC
// of scripts/build-grpc.sh, docs/grpc.md).
#ifndef POSENC_SERVER_BUILD_INFO_H_
#define POSENC_SERVER_BUILD_INFO_H_

#include <string>

namespace posenc {

// Several lines, e.g.
//   posenc_server 0.1.0 (git 5e0331e48926)
//   gRPC 1.51.1 + posenc patch set 7e71cab822098fd2: CVE-2023-4785-..., ...
std::string BuildInfo();

}  // namespace posenc

#endif  // POSENC_SERVER_BUILD_INFO_H_
