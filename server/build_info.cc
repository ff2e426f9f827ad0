#include "server/build_info.h"

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "server/git_commit.h"  // generated: POSENC_GIT_COMMIT

namespace posenc {

std::string BuildInfo() {
  // POSENC_GRPC_PATCH_SET is scripts/build-grpc.sh's stamp (a hash of the
  // gRPC source, the patches and the script); POSENC_GRPC_PATCHES the
  // patches' names, in the order applied. Both are read at configure time.
  return absl::StrCat("posenc_server ", POSENC_VERSION, " (git ",
                      POSENC_GIT_COMMIT, ")\ngRPC ", grpc::Version(),
                      " + posenc patch set ", POSENC_GRPC_PATCH_SET, ": ",
                      POSENC_GRPC_PATCHES, "\n");
}

}  // namespace posenc
