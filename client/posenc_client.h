// PosencClient: the reference C++ client of posenc.v1.PositionalEncoding.
//
// Wraps the generated stub: takes core TableSpecs, returns Tensors (raw
// little-endian bytes plus shape) and maps every gRPC status to an
// absl::Status with the same code and message. Each call gets the
// configured deadline, and every table call carries the `x-posenc-table`
// routing key (convert/routing_key.h) for consistent-hash proxies.
//
//   posenc::PosencClient::Options options;
//   options.target = "127.0.0.1:50051";
//   posenc::PosencClient client(options);
//   posenc::TableSpec spec;              // core/spec/table_spec.h
//   spec.d = 512;
//   spec.max_len = 2048;
//   absl::StatusOr<posenc::Tensor> table = client.GetTable(spec);
//   if (!table.ok()) return table.status();  // the server's code + message
//   absl::Span<const float> values = table->values<float>();  // 2048 x 512
//
// Thread-safe: one client (one channel) can serve many threads; reuse it.
//
// Example (link posenc::client: find_package(posenc CONFIG), or pkg-config
// posenc; docs/cpp-package.md):
//
//   #include "client/posenc_client.h"
//
//   // Prints row 2 of the d=4 table: 0.9093 -0.4161 0.0200 0.9998.
//   absl::Status PrintRow2(const std::string& target) {
//     posenc::PosencClient::Options options;
//     options.target = target;               // e.g. "127.0.0.1:50051"
//     posenc::PosencClient client(options);  // one channel: reuse it
//     posenc::TableSpec spec;
//     spec.d = 4;
//     spec.max_len = 8;
//     absl::StatusOr<posenc::Tensor> table = client.GetTable(spec);
//     if (!table.ok()) return table.status();  // the server's code
//     absl::Span<const float> row =
//         table->values<float>().subspan(2 * spec.width(), spec.width());
//     std::printf("%.4f %.4f %.4f %.4f\n", row[0], row[1], row[2], row[3]);
//     return absl::OkStatus();
//   }
//
// tests/packaging/cpp_consumer/main.cc holds this example verbatim; the
// CppPackage test builds it against an install prefix and runs it.
#ifndef POSENC_CLIENT_POSENC_CLIENT_H_
#define POSENC_CLIENT_POSENC_CLIENT_H_

#include <grpcpp/channel.h>
#include <grpcpp/security/credentials.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "client/mapping_cache.h"
#include "client/tensor.h"
#include "core/spec/encoding_spec.h"
#include "core/spec/position_grid.h"
#include "core/spec/table_spec.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "posenc/v1/posenc.grpc.pb.h"

namespace posenc {

// TLS channel credentials from PEM files. `ca_path` verifies the server
// (empty: the system's roots); `cert_path` and `key_path` present a client
// certificate for mutual TLS (both or neither). INVALID_ARGUMENT naming the
// file when one cannot be read.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> TlsCredentials(
    const std::string& ca_path, const std::string& cert_path,
    const std::string& key_path);

class PosencClient {
 public:
  struct Options {
    // gRPC target: "host:port", "ipv4:h1:p1,h2:p2", "dns:///name:port"...
    std::string target = "127.0.0.1:50051";
    // Deadline of each call (a whole stream counts as one call).
    absl::Duration timeout = absl::Seconds(30);
    // Largest response message accepted; tables can be large.
    int max_receive_bytes = 1 << 30;
    // Channel credentials; null means plaintext. See TlsCredentials.
    std::shared_ptr<grpc::ChannelCredentials> credentials;
    // With TLS: the name the server's certificate must carry, when it is
    // not the host of `target` (e.g. target 127.0.0.1, certificate for
    // posenc.internal). Empty checks against the target's host.
    std::string tls_server_name;
    // gRPC load-balancing policy ("round_robin"); empty keeps pick_first.
    std::string lb_policy;
    // Wait for a ready connection instead of failing fast when none is up.
    bool wait_for_ready = false;
    // Send the `x-posenc-table` routing key (convert/routing_key.h) with
    // every table call, so a proxy can route each table family to one
    // replica. Off only to test a proxy's fallback for clients without it.
    bool send_routing_key = true;
    // GetTable asks for the table as a file of the server's shared-memory
    // directory and maps it (docs/shared_memory.md): same host only. When
    // the file cannot be opened, the bytes come over gRPC instead, with no
    // error; after the directory itself could not be opened once, this
    // client stops asking.
    bool shared_memory = false;
    // With shared_memory: how many verified mappings the client keeps for
    // reuse (docs/shared_memory.md, step 6; client/mapping_cache.h): a table
    // read again is neither mapped nor hashed again. 0 keeps none.
    size_t kept_mappings = MappingCache::kDefaultCapacity;
  };

  explicit PosencClient(Options options);

  // The whole table in one message (RESOURCE_EXHAUSTED past the server's
  // --max_message_bytes: use StreamBatches). With Options::shared_memory the
  // tensor may instead be a checked mapping of the server's file
  // (tensor.mapping set); DATA_LOSS when the file is not what the server
  // described. When the bytes came although shared memory was asked for,
  // `bytes_because` (if given) says why; else it is cleared.
  absl::StatusOr<Tensor> GetTable(const TableSpec& spec,
                                  std::string* bytes_because = nullptr);

  // Called once per received message with its first position and rows.
  // Returning non-OK cancels the stream and becomes the call's result.
  using RowsCallback =
      std::function<absl::Status(uint32_t first, const Tensor& rows)>;

  // Rows [start, end) one per message; `end` unset means spec.max_len.
  absl::Status StreamRows(const TableSpec& spec, uint32_t start,
                          std::optional<uint32_t> end,
                          const RowsCallback& on_row);

  // Rows [start, end) in batches; rows_per_batch 0 lets the server pick.
  absl::Status StreamBatches(const TableSpec& spec, uint32_t start,
                             std::optional<uint32_t> end,
                             uint32_t rows_per_batch,
                             const RowsCallback& on_batch);

  // Rows at `positions`, in that order, as one [n, d] tensor.
  absl::StatusOr<Tensor> GetRows(const TableSpec& spec,
                                 absl::Span<const uint32_t> positions);

  // Rows of real-valued points (timesteps, coordinates): positions holds
  // spec.coordinates values per point; one [points, width] tensor.
  absl::StatusOr<Tensor> Encode(const EncodingSpec& spec,
                                absl::Span<const double> positions);

  // Rows of the points of an integer grid (EncodeRequest.grid: one axis
  // per coordinate, row-major, the last axis fastest; count 0 or 1 holds
  // the coordinate at start), e.g. a FLUX image's (0, row, col) ids.
  absl::StatusOr<Tensor> EncodeGrid(const EncodingSpec& spec,
                                    const PositionGrid& grid);

  absl::StatusOr<v1::GetStatsResponse> GetStats();

  // A library call named with its own arguments (docs/presets.md), e.g.
  // ("diffusers.get_timestep_embedding", {{"embedding_dim", "320"}}),
  // optionally with a model's config.json text, resolved by the server.
  struct Preset {
    std::variant<TableSpec, EncodingSpec> spec;
    std::string name;        // the preset resolved
    std::string reproduces;  // library, version, function
  };
  absl::StatusOr<Preset> ResolvePreset(
      const std::string& preset,
      const std::map<std::string, std::string>& arguments,
      const std::string& config_json = "", DType dtype = DType::kFloat32);

  // grpc.health.v1 Check of `service` ("" = the whole server): true when
  // SERVING, false when NOT_SERVING.
  absl::StatusOr<bool> CheckHealth(const std::string& service = "");

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

 private:
  // Sets the deadline and, for a table call (`spec` set), the routing key
  // metadata (convert/routing_key.h).
  void Prepare(grpc::ClientContext* context,
               const v1::TableSpec* spec = nullptr) const;
  template <typename Response>
  absl::Status ReadStream(grpc::ClientContext& context,
                          grpc::ClientReader<Response>& reader,
                          const RowsCallback& callback);

  // GetTable with or without accept_shared_memory.
  absl::StatusOr<v1::GetTableResponse> CallGetTable(const TableSpec& spec,
                                                    bool shared_memory);

  const Options options_;
  // The shared-memory directory could not be opened: not the server's host.
  std::atomic<bool> shm_unreachable_{false};
  MappingCache mappings_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::PositionalEncoding::Stub> stub_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
};

}  // namespace posenc

#endif  // POSENC_CLIENT_POSENC_CLIENT_H_
