// floor_server: the cheapest C++ callback-API gRPC service that answers with
// the same bytes posenc does (bench/floor.proto, posenc.bench.Floor). Each
// reply (a serialized FloorReply of N payload bytes) is built once per size
// and then sent by reference, so a call costs only gRPC's own work: parse a
// tiny request, ref one slice, write it. With `distinct`, a stream sends M
// different prebuilt messages (windows of one buffer built once per size and
// count), so its bytes come from memory like posenc's slices of a cached
// table. bench/load.sh divides posenc's numbers by this server's.
//
// The server is configured like posenc_server (same message-size limits,
// max concurrent streams, health and reflection services, SO_REUSEPORT off).
// It counts calls that ended OK (Floor.Stats, and printed at exit) so that
// a load tool's "succeeded" can be checked against the server.
#include <grpcpp/create_channel.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/slice.h>
#include <signal.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/synchronization/mutex.h"
#include "floor.grpc.pb.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50052", "host:port to serve on");
ABSL_FLAG(uint32_t, max_concurrent_streams, 256,
          "concurrent calls allowed on one HTTP/2 connection (as posenc)");
ABSL_FLAG(uint64_t, max_message_bytes, uint64_t{64} << 20,
          "largest payload in one reply, in bytes (as posenc)");
ABSL_FLAG(std::string, stats_of, "",
          "client mode: print the Floor.Stats counters of the floor server at "
          "this host:port as 'unary_ok N unary_errors N stream_ok N "
          "stream_errors N' and exit");

namespace posenc::bench {
namespace {

// Same headroom posenc_server adds above --max_message_bytes.
constexpr int kResponseHeaderBytes = 4096;
constexpr uint64_t kMaxDistinctBytes = uint64_t{1} << 30;

using RawFloor =
    Floor::WithRawCallbackMethod_Unary<Floor::WithRawCallbackMethod_Stream<
        Floor::WithCallbackMethod_Stats<Floor::Service>>>;

bool Parse(const grpc::ByteBuffer* raw, FloorRequest* request) {
  grpc::ByteBuffer copy(*raw);  // shares the slices
  grpc::ProtoBufferReader reader(&copy);
  return request->ParseFromZeroCopyStream(&reader);
}

class FloorService final : public RawFloor {
 public:
  explicit FloorService(uint64_t max_bytes) : max_bytes_(max_bytes) {}

  grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* context,
                                  const grpc::ByteBuffer* raw,
                                  grpc::ByteBuffer* response) override {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    FloorRequest request;
    if (!Parse(raw, &request) || request.bytes() > max_bytes_) {
      unary_errors_.fetch_add(1, std::memory_order_relaxed);
      reactor->Finish(
          grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "bad FloorRequest"));
      return reactor;
    }
    grpc::Slice reply = Reply(request.bytes());
    *response = grpc::ByteBuffer(&reply, 1);
    unary_ok_.fetch_add(1, std::memory_order_relaxed);
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  grpc::ServerWriteReactor<grpc::ByteBuffer>* Stream(
      grpc::CallbackServerContext* context,
      const grpc::ByteBuffer* raw) override {
    auto* stream = new Writer(this, context);
    FloorRequest request;
    if (!Parse(raw, &request) || request.bytes() > max_bytes_) {
      stream->FinishWith(
          grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "bad FloorRequest"));
    } else if (request.distinct()) {
      if (uint64_t{request.bytes()} * request.messages() > kMaxDistinctBytes) {
        stream->FinishWith(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                        "distinct stream over 1 GiB"));
      } else {
        stream->StartDistinct(Replies(request.bytes(), request.messages()),
                              request.messages());
      }
    } else {
      stream->Start(Reply(request.bytes()), request.messages());
    }
    return stream;
  }

  grpc::ServerUnaryReactor* Stats(grpc::CallbackServerContext* context,
                                  const FloorStatsRequest*,
                                  FloorStatsReply* reply) override {
    reply->set_unary_ok(unary_ok_.load());
    reply->set_unary_errors(unary_errors_.load());
    reply->set_stream_ok(stream_ok_.load());
    reply->set_stream_errors(stream_errors_.load());
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  void PrintCounts() const {
    std::fprintf(stderr,
                 "floor_server: unary_ok=%llu unary_errors=%llu "
                 "stream_ok=%llu stream_errors=%llu\n",
                 static_cast<unsigned long long>(unary_ok_.load()),
                 static_cast<unsigned long long>(unary_errors_.load()),
                 static_cast<unsigned long long>(stream_ok_.load()),
                 static_cast<unsigned long long>(stream_errors_.load()));
  }

 private:
  // One write outstanding at a time, like posenc's TableStream.
  class Writer final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
   public:
    Writer(FloorService* service, grpc::CallbackServerContext* context)
        : service_(service), context_(context) {}

    void Start(grpc::Slice reply, uint32_t messages) {
      reply_ = std::move(reply);
      remaining_ = messages;
      WriteNext();
    }
    // `replies` holds `messages` serialized replies of equal size, back to
    // back; message i is its i-th window.
    void StartDistinct(grpc::Slice replies, uint32_t messages) {
      replies_ = std::move(replies);
      step_ = messages == 0 ? 0 : replies_.size() / messages;
      remaining_ = messages;
      WriteNext();
    }
    void FinishWith(const grpc::Status& status) {
      (status.ok() ? service_->stream_ok_ : service_->stream_errors_)
          .fetch_add(1, std::memory_order_relaxed);
      Finish(status);
    }
    void OnWriteDone(bool ok) override {
      if (!ok) {
        return FinishWith(
            grpc::Status(grpc::StatusCode::CANCELLED, "write failed"));
      }
      WriteNext();
    }
    void OnDone() override { delete this; }

   private:
    void WriteNext() {
      if (context_->IsCancelled()) {
        return FinishWith(grpc::Status(grpc::StatusCode::CANCELLED, ""));
      }
      if (remaining_ == 0) return FinishWith(grpc::Status::OK);
      --remaining_;
      if (step_ != 0) {
        grpc::Slice window = replies_.sub(offset_, offset_ + step_);
        offset_ += step_;
        message_ = grpc::ByteBuffer(&window, 1);
      } else {
        message_ = grpc::ByteBuffer(&reply_, 1);
      }
      StartWrite(&message_);
    }

    FloorService* const service_;
    grpc::CallbackServerContext* const context_;
    grpc::Slice reply_;
    grpc::Slice replies_;  // distinct mode
    size_t step_ = 0, offset_ = 0;
    uint32_t remaining_ = 0;
    grpc::ByteBuffer message_;
  };

  // The serialized FloorReply{payload = `bytes` bytes}, built once per size.
  grpc::Slice Reply(uint32_t bytes) {
    absl::MutexLock lock(&mu_);
    auto it = replies_.find(bytes);
    if (it != replies_.end()) return it->second;
    FloorReply reply;
    std::string payload(bytes, '\0');
    for (uint32_t i = 0; i < bytes; ++i) payload[i] = static_cast<char>(i * 31);
    reply.set_payload(std::move(payload));
    grpc::Slice slice(reply.SerializeAsString());
    replies_.emplace(bytes, slice);
    return slice;
  }

  // `messages` serialized FloorReply{payload = `bytes` bytes} back to back,
  // each with different payload bytes, built once per (bytes, messages).
  grpc::Slice Replies(uint32_t bytes, uint32_t messages) {
    absl::MutexLock lock(&mu_);
    const uint64_t key = (uint64_t{bytes} << 32) | messages;
    auto it = distinct_.find(key);
    if (it != distinct_.end()) return it->second;
    std::string all;
    std::string payload(bytes, '\0');
    for (uint32_t m = 0; m < messages; ++m) {
      for (uint32_t i = 0; i < bytes; ++i) {
        payload[i] = static_cast<char>(i * 31 + m);
      }
      FloorReply reply;
      reply.set_payload(payload);
      if (m == 0) all.reserve(reply.ByteSizeLong() * size_t{messages});
      reply.AppendToString(&all);
    }
    grpc::Slice slice(all);
    distinct_.emplace(key, slice);
    return slice;
  }

  const uint64_t max_bytes_;
  absl::Mutex mu_;
  absl::flat_hash_map<uint64_t, grpc::Slice> distinct_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint32_t, grpc::Slice> replies_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> unary_ok_{0}, unary_errors_{0};
  std::atomic<uint64_t> stream_ok_{0}, stream_errors_{0};
};

int PrintStatsOf(const std::string& target) {
  auto stub = Floor::NewStub(
      grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  FloorStatsReply reply;
  grpc::Status status = stub->Stats(&context, FloorStatsRequest(), &reply);
  if (!status.ok()) {
    std::fprintf(stderr, "floor_server --stats_of=%s: %s\n", target.c_str(),
                 status.error_message().c_str());
    return 1;
  }
  std::printf(
      "unary_ok %llu unary_errors %llu stream_ok %llu "
      "stream_errors %llu\n",
      static_cast<unsigned long long>(reply.unary_ok()),
      static_cast<unsigned long long>(reply.unary_errors()),
      static_cast<unsigned long long>(reply.stream_ok()),
      static_cast<unsigned long long>(reply.stream_errors()));
  return 0;
}

}  // namespace
}  // namespace posenc::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  // As posenc_server does (server/main.cc): Debian's Abseil runs its
  // deadlock detector on every lock otherwise; the floor must not pay a
  // cost posenc does not.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  if (!absl::GetFlag(FLAGS_stats_of).empty()) {
    return posenc::bench::PrintStatsOf(absl::GetFlag(FLAGS_stats_of));
  }
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  const uint64_t max_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  posenc::bench::FloorService service(max_bytes);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(absl::GetFlag(FLAGS_listen),
                           grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(4 << 20);
  builder.SetMaxSendMessageSize(
      static_cast<int>(max_bytes + posenc::bench::kResponseHeaderBytes));
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddChannelArgument(
      GRPC_ARG_MAX_CONCURRENT_STREAMS,
      static_cast<int>(absl::GetFlag(FLAGS_max_concurrent_streams)));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "floor_server: cannot listen on %s\n",
                 absl::GetFlag(FLAGS_listen).c_str());
    return 2;
  }
  std::fprintf(stderr, "floor_server listening on %s (port %d)\n",
               absl::GetFlag(FLAGS_listen).c_str(), port);
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  server->Wait();
  service.PrintCounts();
  return 0;
}
