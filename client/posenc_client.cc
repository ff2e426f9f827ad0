#include "client/posenc_client.h"

#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/support/channel_arguments.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "convert/grpc_status.h"
#include "convert/proto_conversion.h"
#include "convert/routing_key.h"

namespace posenc {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path,
                                     const char* what) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  if (!in || contents.str().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read the ", what, " file '", path, "'"));
  }
  return contents.str();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> TlsCredentials(
    const std::string& ca_path, const std::string& cert_path,
    const std::string& key_path) {
  if (cert_path.empty() != key_path.empty()) {
    return absl::InvalidArgumentError(
        "a client certificate needs both its certificate and its key file");
  }
  grpc::SslCredentialsOptions ssl;
  if (!ca_path.empty()) {
    absl::StatusOr<std::string> ca = ReadFile(ca_path, "TLS CA");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
  }
  if (!cert_path.empty()) {
    absl::StatusOr<std::string> cert =
        ReadFile(cert_path, "TLS client certificate");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadFile(key_path, "TLS client key");
    if (!key.ok()) return key.status();
    ssl.pem_cert_chain = *cert;
    ssl.pem_private_key = *key;
  }
  return grpc::SslCredentials(ssl);
}

PosencClient::PosencClient(Options options)
    : options_(std::move(options)), mappings_(options_.kept_mappings) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options_.max_receive_bytes);
  if (!options_.lb_policy.empty()) {
    args.SetLoadBalancingPolicyName(options_.lb_policy);
  }
  if (!options_.tls_server_name.empty()) {
    args.SetSslTargetNameOverride(options_.tls_server_name);
  }
  channel_ = grpc::CreateCustomChannel(options_.target,
                                       options_.credentials
                                           ? options_.credentials
                                           : grpc::InsecureChannelCredentials(),
                                       args);
  stub_ = v1::PositionalEncoding::NewStub(channel_);
  health_ = grpc::health::v1::Health::NewStub(channel_);
}

void PosencClient::Prepare(grpc::ClientContext* context,
                           const v1::TableSpec* spec) const {
  context->set_deadline(absl::ToChronoTime(absl::Now() + options_.timeout));
  context->set_wait_for_ready(options_.wait_for_ready);
  if (spec != nullptr && options_.send_routing_key) {
    context->AddMetadata(kRoutingKeyHeader, RoutingKey(*spec));
  }
}

absl::StatusOr<v1::GetTableResponse> PosencClient::CallGetTable(
    const TableSpec& spec, bool shared_memory) {
  v1::GetTableRequest request;
  *request.mutable_spec() = SpecToProto(spec);
  request.set_accept_shared_memory(shared_memory);
  v1::GetTableResponse response;
  grpc::ClientContext context;
  Prepare(&context, &request.spec());
  grpc::Status status = stub_->GetTable(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

absl::StatusOr<Tensor> PosencClient::GetTable(const TableSpec& spec,
                                              std::string* bytes_because) {
  std::string because_storage;
  std::string& because = bytes_because ? *bytes_because : because_storage;
  because.clear();
  bool shared_memory = options_.shared_memory;
  if (shared_memory && shm_unreachable_.load(std::memory_order_relaxed)) {
    because = "its directory could not be opened before";
    shared_memory = false;
  }
  absl::StatusOr<v1::GetTableResponse> response =
      CallGetTable(spec, shared_memory);
  if (!response.ok()) return response.status();
  if (!response->has_shared_memory()) {
    if (shared_memory) {
      because =
          "the server answered with the bytes (no --shm_dir, or the table is "
          "not cached there)";
    }
    return TakeTensor(response->mutable_table());
  }
  absl::StatusOr<Tensor> mapped =
      MapTensor(response->shared_memory(), &mappings_);
  if (mapped.ok() || !(absl::IsUnavailable(mapped.status()) ||
                       absl::IsFailedPrecondition(mapped.status()))) {
    return mapped;  // mapped, or DATA_LOSS / INTERNAL: never silent data
  }
  // The file cannot be opened here: the bytes instead.
  if (absl::IsFailedPrecondition(mapped.status())) {
    shm_unreachable_.store(true, std::memory_order_relaxed);
  }
  because = std::string(mapped.status().message());
  response = CallGetTable(spec, /*shared_memory=*/false);
  if (!response.ok()) return response.status();
  return TakeTensor(response->mutable_table());
}

template <typename Response>
absl::Status PosencClient::ReadStream(grpc::ClientContext& context,
                                      grpc::ClientReader<Response>& reader,
                                      const RowsCallback& callback) {
  Response response;
  absl::Status result;
  while (reader.Read(&response)) {
    // StreamRowsResponse has (position, row); StreamBatchesResponse has
    // (start, batch). Field 1 and field 2 alike.
    uint32_t first;
    v1::Tensor* proto;
    if constexpr (std::is_same_v<Response, v1::StreamRowsResponse>) {
      first = response.position();
      proto = response.mutable_row();
    } else {
      first = response.start();
      proto = response.mutable_batch();
    }
    absl::StatusOr<Tensor> tensor = TakeTensor(proto);
    result = tensor.ok() ? callback(first, *tensor) : tensor.status();
    if (!result.ok()) {
      context.TryCancel();
      while (reader.Read(&response)) {
      }
      reader.Finish();
      return result;
    }
  }
  return FromGrpcStatus(reader.Finish());
}

absl::Status PosencClient::StreamRows(const TableSpec& spec, uint32_t start,
                                      std::optional<uint32_t> end,
                                      const RowsCallback& on_row) {
  v1::StreamRowsRequest request;
  *request.mutable_spec() = SpecToProto(spec);
  request.set_start(start);
  if (end.has_value()) request.set_end(*end);
  grpc::ClientContext context;
  Prepare(&context, &request.spec());
  std::unique_ptr<grpc::ClientReader<v1::StreamRowsResponse>> reader =
      stub_->StreamRows(&context, request);
  return ReadStream(context, *reader, on_row);
}

absl::Status PosencClient::StreamBatches(const TableSpec& spec, uint32_t start,
                                         std::optional<uint32_t> end,
                                         uint32_t rows_per_batch,
                                         const RowsCallback& on_batch) {
  v1::StreamBatchesRequest request;
  *request.mutable_spec() = SpecToProto(spec);
  request.set_start(start);
  if (end.has_value()) request.set_end(*end);
  request.set_rows_per_batch(rows_per_batch);
  grpc::ClientContext context;
  Prepare(&context, &request.spec());
  std::unique_ptr<grpc::ClientReader<v1::StreamBatchesResponse>> reader =
      stub_->StreamBatches(&context, request);
  return ReadStream(context, *reader, on_batch);
}

absl::StatusOr<Tensor> PosencClient::GetRows(
    const TableSpec& spec, absl::Span<const uint32_t> positions) {
  v1::GetRowsRequest request;
  *request.mutable_spec() = SpecToProto(spec);
  request.mutable_positions()->Add(positions.begin(), positions.end());
  v1::GetRowsResponse response;
  grpc::ClientContext context;
  Prepare(&context, &request.spec());
  grpc::Status status = stub_->GetRows(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return TakeTensor(response.mutable_rows());
}

absl::StatusOr<Tensor> PosencClient::Encode(
    const EncodingSpec& spec, absl::Span<const double> positions) {
  v1::EncodeRequest request;
  *request.mutable_spec() = EncodingSpecToProto(spec);
  request.mutable_positions()->Add(positions.begin(), positions.end());
  v1::EncodeResponse response;
  grpc::ClientContext context;
  Prepare(&context);  // no routing key: nothing is cached, any replica
  grpc::Status status = stub_->Encode(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return TakeTensor(response.mutable_embeddings());
}

absl::StatusOr<Tensor> PosencClient::EncodeGrid(const EncodingSpec& spec,
                                                const PositionGrid& grid) {
  v1::EncodeRequest request;
  *request.mutable_spec() = EncodingSpecToProto(spec);
  for (size_t c = 0; c < grid.start.size(); ++c) {
    v1::GridAxis* axis = request.mutable_grid()->add_axes();
    axis->set_start(grid.start[c]);
    axis->set_count(c < grid.count.size() ? grid.count[c] : 0);
  }
  v1::EncodeResponse response;
  grpc::ClientContext context;
  Prepare(&context);  // no routing key: nothing is cached, any replica
  grpc::Status status = stub_->Encode(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return TakeTensor(response.mutable_embeddings());
}

absl::StatusOr<v1::GetStatsResponse> PosencClient::GetStats() {
  v1::GetStatsResponse response;
  grpc::ClientContext context;
  Prepare(&context);
  grpc::Status status =
      stub_->GetStats(&context, v1::GetStatsRequest(), &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

absl::StatusOr<PosencClient::Preset> PosencClient::ResolvePreset(
    const std::string& preset,
    const std::map<std::string, std::string>& arguments,
    const std::string& config_json, DType dtype) {
  v1::ResolvePresetRequest request;
  request.set_preset(preset);
  request.mutable_arguments()->insert(arguments.begin(), arguments.end());
  request.set_config_json(config_json);
  request.set_dtype(DTypeToProto(dtype));
  v1::ResolvePresetResponse response;
  grpc::ClientContext context;
  Prepare(&context);  // nothing cached: any replica answers
  grpc::Status status = stub_->ResolvePreset(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  Preset out;
  out.name = response.preset();
  out.reproduces = response.reproduces();
  if (response.has_table()) {
    absl::StatusOr<TableSpec> spec = SpecFromProto(response.table());
    if (!spec.ok()) return spec.status();
    out.spec = *std::move(spec);
  } else {
    absl::StatusOr<EncodingSpec> spec =
        EncodingSpecFromProto(response.encoding());
    if (!spec.ok()) return spec.status();
    out.spec = *std::move(spec);
  }
  return out;
}

absl::StatusOr<bool> PosencClient::CheckHealth(const std::string& service) {
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  grpc::ClientContext context;
  Prepare(&context);
  grpc::Status status = health_->Check(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
}

}  // namespace posenc
