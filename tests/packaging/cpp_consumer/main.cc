// A C++ program using posenc from an install prefix (CMakeLists.txt here).
// PrintRow2 is client/posenc_client.h's usage example, verbatim
// (cpp_package_test.py checks): against a server it prints row 2 of the d=4
// table, 0.9093 -0.4161 0.0200 0.9998.
#include <cstdio>
#include <string>

#include "client/posenc_client.h"

// Prints row 2 of the d=4 table: 0.9093 -0.4161 0.0200 0.9998.
absl::Status PrintRow2(const std::string& target) {
  posenc::PosencClient::Options options;
  options.target = target;               // e.g. "127.0.0.1:50051"
  posenc::PosencClient client(options);  // one channel: reuse it
  posenc::TableSpec spec;
  spec.d = 4;
  spec.max_len = 8;
  absl::StatusOr<posenc::Tensor> table = client.GetTable(spec);
  if (!table.ok()) return table.status();  // the server's code
  absl::Span<const float> row =
      table->values<float>().subspan(2 * spec.width(), spec.width());
  std::printf("%.4f %.4f %.4f %.4f\n", row[0], row[1], row[2], row[3]);
  return absl::OkStatus();
}

int main(int argc, char** argv) {
  const absl::Status status = PrintRow2(argc > 1 ? argv[1] : "127.0.0.1:50051");
  if (!status.ok()) std::fprintf(stderr, "%s\n", status.ToString().c_str());
  return status.ok() ? 0 : 1;
}
