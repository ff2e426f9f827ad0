// replica_test: three real posenc_server replicas behind one client channel
// that uses gRPC's own round_robin policy over a static
// "ipv4:127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3" target. Checks that every
// replica serves calls (by its GetStats counters), that replicas return
// identical bytes, and that calls keep succeeding (retried on UNAVAILABLE by
// the channel's service config) when one replica is killed mid-run.
//
// Usage: replica_test PATH/TO/posenc_server [gtest flags]
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "grpc/health/v1/health.grpc.pb.h"
#include "posenc/v1/posenc.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;
using posenc::v1::PositionalEncoding;
using std::chrono::system_clock;  // gRPC deadlines take system_clock only.

std::string g_server_path;  // argv[1]

constexpr char kGetRows[] = "/posenc.v1.PositionalEncoding/GetRows";

// Every posenc method: retry UNAVAILABLE (a replica went away) on another
// pick, and wait for a ready replica instead of failing fast.
constexpr char kServiceConfig[] = R"json({
  "methodConfig": [{
    "name": [{"service": "posenc.v1.PositionalEncoding"}],
    "waitForReady": true,
    "retryPolicy": {
      "maxAttempts": 5,
      "initialBackoff": "0.02s",
      "maxBackoff": "0.5s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE"]
    }
  }]
})json";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// One posenc_server child process on 127.0.0.1 with a port the kernel picked.
class Replica {
 public:
  Replica(int index)
      : log_path_(testing::TempDir() + "replica_" + std::to_string(getpid()) +
                  "_" + std::to_string(index) + ".log") {}
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;
  ~Replica() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    unlink(log_path_.c_str());
  }

  // Runs the server with --listen=127.0.0.1:0 and reads the port it bound
  // from its startup log line "... (port N) ...". Empty on success.
  std::string Start() {
    std::vector<std::string> args = {
        g_server_path, "--listen=127.0.0.1:0",  "--cache_bytes=67108864",
        "--threads=1", "--lame_duck_seconds=0", "--grace_seconds=2"};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const int log_fd =
        open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) return "cannot create " + log_path_;
    pid_ = fork();
    if (pid_ == 0) {  // Child: only async-signal-safe calls until exec.
      dup2(log_fd, STDOUT_FILENO);
      dup2(log_fd, STDERR_FILENO);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(log_fd);
    if (pid_ < 0) return std::string("fork: ") + std::strerror(errno);

    const auto give_up = Clock::now() + std::chrono::seconds(15);
    while (Clock::now() < give_up) {
      const std::string log = ReadFile(log_path_);
      const size_t at = log.find("(port ");
      if (at != std::string::npos) {
        port_ = std::atoi(log.c_str() + at + 6);
        if (port_ > 0) return "";
      }
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return "server exited at startup: " + log;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return "no port in the server log within 15s: " + ReadFile(log_path_);
  }

  void Signal(int signal_number) { kill(pid_, signal_number); }

  // Waits up to `timeout` for the process to end; its wait status, or -1.
  int Wait(std::chrono::milliseconds timeout) {
    const auto give_up = Clock::now() + timeout;
    while (Clock::now() < give_up) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string log() const { return ReadFile(log_path_); }

 private:
  const std::string log_path_;
  pid_t pid_ = -1;
  int port_ = 0;
};

grpc::ChannelArguments BaseArguments() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  return args;
}

// A channel to exactly one replica.
std::unique_ptr<PositionalEncoding::Stub> DirectStub(const Replica& replica) {
  return PositionalEncoding::NewStub(grpc::CreateCustomChannel(
      replica.address(), grpc::InsecureChannelCredentials(), BaseArguments()));
}

posenc::v1::TableSpec Spec(
    uint32_t d, uint32_t max_len,
    posenc::v1::DType dtype = posenc::v1::DTYPE_FLOAT32, double base = 0,
    posenc::v1::Layout layout = posenc::v1::LAYOUT_UNSPECIFIED,
    posenc::v1::Frequency frequency = posenc::v1::FREQUENCY_UNSPECIFIED) {
  posenc::v1::TableSpec spec;
  spec.set_d(d);
  spec.set_max_len(max_len);
  spec.set_dtype(dtype);
  spec.set_base(base);
  spec.set_layout(layout);
  spec.set_frequency(frequency);
  return spec;
}

std::unique_ptr<grpc::ClientContext> Context(int seconds) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(system_clock::now() + std::chrono::seconds(seconds));
  context->set_wait_for_ready(true);
  return context;
}

// OK calls of GetRows the replica has counted, or -1 if GetStats failed.
int64_t GetRowsOk(PositionalEncoding::Stub& stub) {
  posenc::v1::GetStatsResponse stats;
  grpc::Status status =
      stub.GetStats(Context(5).get(), posenc::v1::GetStatsRequest(), &stats);
  if (!status.ok()) return -1;
  for (const posenc::v1::MethodStats& method : stats.methods()) {
    if (method.method() == kGetRows) return static_cast<int64_t>(method.ok());
  }
  return 0;
}

class ReplicaTest : public testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 3; ++i) {
      replicas_.push_back(std::make_unique<Replica>(i));
      const std::string error = replicas_.back()->Start();
      ASSERT_EQ(error, "") << "replica " << i;
    }
    std::string target = "ipv4:";
    for (size_t i = 0; i < replicas_.size(); ++i) {
      target += (i == 0 ? "" : ",") + replicas_[i]->address();
    }
    grpc::ChannelArguments args = BaseArguments();
    args.SetLoadBalancingPolicyName("round_robin");
    args.SetServiceConfigJSON(kServiceConfig);
    channel_ = grpc::CreateCustomChannel(
        target, grpc::InsecureChannelCredentials(), args);
    ASSERT_TRUE(channel_->WaitForConnected(system_clock::now() +
                                           std::chrono::seconds(10)))
        << target;
    stub_ = PositionalEncoding::NewStub(channel_);
    for (const auto& replica : replicas_)
      direct_.push_back(DirectStub(*replica));
  }

  // One GetRows call through the round-robin channel.
  grpc::Status CallRows(posenc::v1::GetRowsResponse* response) {
    posenc::v1::GetRowsRequest request;
    *request.mutable_spec() = Spec(64, 1024);
    for (uint32_t p : {0u, 1u, 2u, 511u, 1023u}) request.add_positions(p);
    return stub_->GetRows(Context(10).get(), request, response);
  }

  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<std::unique_ptr<PositionalEncoding::Stub>> direct_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<PositionalEncoding::Stub> stub_;
};

TEST_F(ReplicaTest, RoundRobinReachesEveryReplica) {
  // Subchannels connect independently; call until each replica has served
  // (bounded), then every call must be accounted for by some replica.
  int64_t calls = 0;
  std::vector<int64_t> served(replicas_.size(), 0);
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 30; ++i, ++calls) {
      posenc::v1::GetRowsResponse response;
      grpc::Status status = CallRows(&response);
      ASSERT_TRUE(status.ok()) << status.error_message();
    }
    bool all_served = true;
    for (size_t r = 0; r < replicas_.size(); ++r) {
      served[r] = GetRowsOk(*direct_[r]);
      ASSERT_GE(served[r], 0) << "GetStats on replica " << r;
      all_served = all_served && served[r] > 0;
    }
    if (all_served) break;
  }
  int64_t total = 0;
  for (size_t r = 0; r < replicas_.size(); ++r) {
    EXPECT_GT(served[r], 0) << "replica " << r << " served no GetRows";
    total += served[r];
  }
  EXPECT_EQ(total, calls);
  std::printf("round_robin: %lld calls served as %lld / %lld / %lld\n",
              static_cast<long long>(calls), static_cast<long long>(served[0]),
              static_cast<long long>(served[1]),
              static_cast<long long>(served[2]));
}

TEST_F(ReplicaTest, ReplicasReturnIdenticalBytes) {
  const std::vector<posenc::v1::TableSpec> specs = {
      Spec(4, 8), Spec(64, 1024),
      Spec(6, 300, posenc::v1::DTYPE_FLOAT64, 500,
           posenc::v1::LAYOUT_CONCAT_SIN_COS, posenc::v1::FREQUENCY_T2T),
      Spec(128, 256, posenc::v1::DTYPE_FLOAT16, 0,
           posenc::v1::LAYOUT_CONCAT_COS_SIN),
      Spec(32, 4096, posenc::v1::DTYPE_BFLOAT16)};
  for (const posenc::v1::TableSpec& spec : specs) {
    SCOPED_TRACE(spec.ShortDebugString());
    std::vector<std::string> tables;
    for (const auto& stub : direct_) {
      posenc::v1::GetTableRequest request;
      *request.mutable_spec() = spec;
      posenc::v1::GetTableResponse response;
      grpc::Status status =
          stub->GetTable(Context(10).get(), request, &response);
      ASSERT_TRUE(status.ok()) << status.error_message();
      tables.push_back(response.table().data());
    }
    ASSERT_FALSE(tables[0].empty());
    for (size_t r = 1; r < tables.size(); ++r) {
      EXPECT_TRUE(tables[r] == tables[0]) << "replica " << r << " differs";
    }
  }

  // The worked example, d=4, pos=2 (float32): sin 2, cos 2, sin .02, cos .02.
  posenc::v1::GetRowsRequest request;
  *request.mutable_spec() = Spec(4, 8);
  request.add_positions(2);
  posenc::v1::GetRowsResponse response;
  ASSERT_TRUE(stub_->GetRows(Context(10).get(), request, &response).ok());
  ASSERT_EQ(response.rows().data().size(), 4 * sizeof(float));
  float row[4];
  std::memcpy(row, response.rows().data().data(), sizeof(row));
  const double expected[4] = {std::sin(2.0), std::cos(2.0), std::sin(0.02),
                              std::cos(0.02)};
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(row[c], static_cast<float>(expected[c])) << "column " << c;
  }

  // Through the round-robin channel every answer has the same bytes,
  // whichever replica served it.
  std::string first;
  for (int i = 0; i < 30; ++i) {
    posenc::v1::GetRowsResponse rows;
    grpc::Status status = CallRows(&rows);
    ASSERT_TRUE(status.ok()) << status.error_message();
    if (i == 0) first = rows.rows().data();
    EXPECT_TRUE(rows.rows().data() == first) << "call " << i;
  }
}

TEST_F(ReplicaTest, CallsSurviveAReplicaKill) {
  std::atomic<bool> stop{false};
  std::atomic<int64_t> ok{0}, failed{0};
  std::string first_error;
  std::mutex error_mutex;
  std::vector<std::thread> workers;
  for (int w = 0; w < 2; ++w) {
    workers.emplace_back([&] {
      while (!stop.load()) {
        posenc::v1::GetRowsResponse response;
        grpc::Status status = CallRows(&response);
        if (status.ok()) {
          ok.fetch_add(1);
        } else {
          failed.fetch_add(1);
          std::lock_guard<std::mutex> lock(error_mutex);
          if (first_error.empty()) {
            first_error = std::to_string(status.error_code()) + " " +
                          status.error_message();
          }
        }
      }
    });
  }
  auto wait_for_calls = [&](int64_t target) {
    const auto give_up = Clock::now() + std::chrono::seconds(15);
    while (ok.load() + failed.load() < target && Clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  };

  wait_for_calls(200);
  replicas_[1]->Signal(SIGKILL);
  const int killed_status = replicas_[1]->Wait(std::chrono::seconds(5));
  EXPECT_TRUE(WIFSIGNALED(killed_status)) << killed_status;
  const int64_t at_kill = ok.load() + failed.load();
  const int64_t before[2] = {GetRowsOk(*direct_[0]), GetRowsOk(*direct_[2])};
  wait_for_calls(at_kill + 600);
  stop.store(true);
  for (std::thread& worker : workers) worker.join();
  const int64_t after[2] = {GetRowsOk(*direct_[0]), GetRowsOk(*direct_[2])};

  std::printf("kill: %lld calls OK, %lld failed (%lld before the kill)\n",
              static_cast<long long>(ok.load()),
              static_cast<long long>(failed.load()),
              static_cast<long long>(at_kill));
  EXPECT_EQ(failed.load(), 0) << first_error;
  EXPECT_GE(ok.load(), at_kill + 600);
  for (int s = 0; s < 2; ++s) {
    EXPECT_GT(after[s], before[s]) << "survivor " << s << " served nothing";
  }

  // The survivors drain and exit 0 on SIGTERM.
  for (int r : {0, 2}) replicas_[r]->Signal(SIGTERM);
  for (int r : {0, 2}) {
    const int status = replicas_[r]->Wait(std::chrono::seconds(10));
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "replica " << r << " status " << status << "\n"
        << replicas_[r]->log();
    EXPECT_NE(replicas_[r]->log().find("received SIGTERM"), std::string::npos)
        << replicas_[r]->log();
  }
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PATH/TO/posenc_server [gtest flags]\n",
                 argv[0]);
    return 2;
  }
  g_server_path = argv[1];
  return RUN_ALL_TESTS();
}
