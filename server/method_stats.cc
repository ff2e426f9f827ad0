#include "server/method_stats.h"

namespace posenc {

const char* MethodName(Method method) {
  switch (method) {
    case Method::kGetTable:
      return "/posenc.v1.PositionalEncoding/GetTable";
    case Method::kStreamRows:
      return "/posenc.v1.PositionalEncoding/StreamRows";
    case Method::kStreamBatches:
      return "/posenc.v1.PositionalEncoding/StreamBatches";
    case Method::kGetRows:
      return "/posenc.v1.PositionalEncoding/GetRows";
    case Method::kGetStats:
      return "/posenc.v1.PositionalEncoding/GetStats";
  }
  return "?";
}

}  // namespace posenc
