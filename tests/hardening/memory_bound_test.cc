// The README's memory bound on the real process under a concurrent mixed
// load (issue 22, item 4). A posenc_server with small budgets (cache 64 MiB,
// in-flight 64 MiB, gRPC ResourceQuota 64 MiB, warm reserve 32 MiB: all
// four in use at once) serves, from 22 client threads on 11 connections
// (plus one for the samplers) for POSENC_MEMORY_SECONDS (default 20):
//   - hot GetTable of a resident 16 MiB table, and cold GetTables of 8 MiB
//     one-off families (refused a place by TinyLFU, or admitted: computed
//     for the call alone, into the warm reserve's buffers);
//   - hot and cold GetRows: one row, and 4096 rows (8 MiB answers);
//   - bursts of 64 concurrent GetRows of 65536 positions each, on six
//     connections (the largest requests: gRPC's read buffers, charged to
//     its ResourceQuota, and the positions of calls queued for the pool);
//   - LongRoPE GetRows at d = 65536 (512 KiB requests);
//   - streams: StreamBatches of uncached 256 MiB tables read slowly and
//     cancelled at a random message, StreamRows of the hot table cancelled
//     early, and streams opened and never read for a second;
//   - cold 32 MiB float64 GetTables whose 300 ms deadline expires while the
//     server computes them.
// A sampler reads VmRSS every 20 ms (and the kinds of mappings at the
// highest) and GetStats (resident, in-flight and warm reserve bytes) every
// 100 ms; at the end the peak (VmHWM) is checked against the bound
// README.md states, its parts:
//   --cache_bytes                  the cache
//   + --max_inflight_bytes         answers and evicted tables being sent
//   + --max_inflight_bytes         positions of GetRows calls in progress:
//                                  4 bytes each, no more than the call's
//                                  answer (a row is at least 4 bytes),
//                                  which in-flight charges
//   + --grpc_memory_bytes          gRPC's buffers, requests included (a
//                                  soft limit: past it gRPC closes idle
//                                  connections and cancels calls)
//   + --warm_reserve_bytes
//   + 64 MiB                       the process itself (binary, libraries,
//                                  heap, thread stacks: 16 MiB idle here)
// The earlier bound, cache + in-flight + 64 MiB, did not hold: the bursts
// alone (POSENC_MEMORY_LOADS=16,...,21) took VmHWM to ~257 MiB, 193 MiB of
// it heap, while in-flight stayed under 48 MiB; every load but the bursts,
// ~157 MiB.
// With POSENC_MEMORY_SHM=1 (ctest MemoryBoundTest.SharedMemory) the server
// runs with --shm_dir in a fresh directory of /dev/shm and every client
// asks for shared memory: the cache's tables are then files, mapped by the
// server and by the clients, and the same bound holds for the server's
// VmHWM (its mappings of the files count in it), while the bytes of the
// files in the server's directory never exceed the cache budget.
// Every status is one the load can legitimately get: OK, RESOURCE_EXHAUSTED
// (a budget refused the call, or gRPC's ResourceQuota cancelled it),
// CANCELLED (the test's own cancellations), DEADLINE_EXCEEDED (the deadline
// calls) and UNAVAILABLE ("Broken pipe", once in six runs; most likely a
// connection gRPC closed to free memory when its ResourceQuota ran out, a
// call racing the GOAWAY: counted, and the server must still serve at the
// end); anything else fails.
#include <grpcpp/client_context.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <regex>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "convert/proto_conversion.h"
#include "gtest/gtest.h"
#include "tests/hardening/hardening_util.h"

namespace posenc::testing {
namespace {

constexpr uint64_t kCache = 64 * kMiB;
constexpr uint64_t kInflight = 64 * kMiB;
constexpr uint64_t kGrpcQuota = 64 * kMiB;
constexpr uint64_t kWarmReserve = 32 * kMiB;
// The process itself: text and data of the binary and its libraries, heap
// and thread stacks (README.md, "The cache").
constexpr uint64_t kProcessMargin = 64 * kMiB;

// Bytes of the table files in the server's shared-memory directory.
uint64_t FilesBytes(const v1::ServerInfo& server) {
  uint64_t bytes = 0;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(server.shm_directory(), error)) {
    std::error_code gone;  // evicted meanwhile
    if (entry.path().filename().string().rfind("table-", 0) == 0) {
      const uint64_t size = entry.file_size(gone);
      if (!gone) bytes += size;
    }
  }
  return bytes;
}

TableSpec WithBase(TableSpec spec, double base) {
  spec.base = base;
  return spec;
}

// Peak values seen by the sampler.
struct Peaks {
  std::atomic<uint64_t> rss{0}, resident{0}, inflight{0}, reserve{0},
      accounted{0}, shm_files{0};
  static void Raise(std::atomic<uint64_t>& peak, uint64_t v) {
    uint64_t old = peak.load();
    while (v > old && !peak.compare_exchange_weak(old, v)) {
    }
  }
};

// Resident bytes of process `pid` by kind of mapping: the heap and
// malloc's arenas (an arena is a 64 MiB-aligned read-write mapping followed
// by the inaccessible rest of its reservation), other anonymous mappings of
// 2 MiB or more (tables, large answers, the warm reserve), smaller
// anonymous mappings (thread stacks, small mmaps), and files.
std::string SmapsSummary(int pid) {
  struct Mapping {
    uint64_t lo, hi, rss;
    std::string perms, name;
  };
  std::vector<Mapping> maps;
  std::ifstream in(absl::StrCat("/proc/", pid, "/smaps"));
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long lo = 0, hi = 0, kb = 0;
    char perms[8] = {0}, path[512] = {0};
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %*s %*s %*s %511s", &lo, &hi,
                    perms, path) >= 3) {
      maps.push_back({lo, hi, 0, perms, path});
    } else if (!maps.empty() &&
               std::sscanf(line.c_str(), "Rss: %llu kB", &kb) == 1) {
      maps.back().rss = kb * 1024;
    }
  }
  uint64_t heap = 0, large = 0, small = 0, files = 0;
  for (size_t k = 0; k < maps.size(); ++k) {
    const Mapping& m = maps[k];
    const bool arena = m.name.empty() && m.lo % (64 * kMiB) == 0 &&
                       k + 1 < maps.size() && maps[k + 1].lo == m.hi &&
                       maps[k + 1].perms.rfind("---", 0) == 0;
    if (m.name == "[heap]" || arena) {
      heap += m.rss;
    } else if (!m.name.empty() && m.name[0] != '[') {
      files += m.rss;
    } else if (m.name.empty() && m.hi - m.lo >= 2 * kMiB) {
      large += m.rss;
    } else {
      small += m.rss;
    }
  }
  return absl::StrCat("heap and arenas ", heap >> 20,
                      " MiB, anonymous >= 2 MiB ", large >> 20,
                      " MiB, other anonymous ", small >> 20, " MiB, files ",
                      files >> 20, " MiB");
}

TEST(MemoryBoundTest, MixedConcurrentLoad_PeakRssWithinStatedBound) {
  const char* env = std::getenv("POSENC_MEMORY_SECONDS");
  const int seconds = env != nullptr ? std::atoi(env) : 20;

  // The base: an idle server without a warm reserve, after one call.
  uint64_t base = 0;
  {
    ServerProcess idle({"--warm_reserve_bytes=0", "--threads=2"}, "base");
    ASSERT_NE(idle.port(), 0) << idle.process().Stderr();
    PosencClient client(ClientTo(idle.target()));
    ExpectStillServing(client);
    base = idle.MemoryBytes();
  }

  std::vector<std::string> flags = {
      absl::StrCat("--cache_bytes=", kCache),
      absl::StrCat("--max_inflight_bytes=", kInflight),
      absl::StrCat("--grpc_memory_bytes=", kGrpcQuota),
      absl::StrCat("--warm_reserve_bytes=", kWarmReserve), "--threads=2"};
  const char* shm_env = std::getenv("POSENC_MEMORY_SHM");
  const bool shm = shm_env != nullptr && std::string(shm_env) == "1";
  char shm_parent[] = "/dev/shm/posenc-memory-XXXXXX";
  if (shm) {
    ASSERT_NE(mkdtemp(shm_parent), nullptr);
    flags.push_back(absl::StrCat("--shm_dir=", shm_parent));
  }
  ServerProcess server(flags, "memory");
  ASSERT_NE(server.port(), 0) << server.process().Stderr();
  std::smatch pid_match;
  const std::string log = server.process().Stderr();
  ASSERT_TRUE(std::regex_search(log, pid_match, std::regex(R"(pid=(\d+))")));
  const int pid = std::stoi(pid_match[1]);
  constexpr int kConnections = 12;
  std::vector<std::unique_ptr<PosencClient>> clients;
  for (int c = 0; c < kConnections; ++c) {
    // 90 s: the test bounds memory, not latency. A cold call queued behind
    // 22 loads under ASan on two oversubscribed cores waited past 30 s; a
    // stuck one still fails, and so does the cold GetTable after the load.
    PosencClient::Options options =
        ClientTo(server.target(), absl::Seconds(90));
    options.max_receive_bytes = (1 << 30) - c;  // distinct args: own socket
    options.shared_memory = shm;
    clients.push_back(std::make_unique<PosencClient>(options));
  }
  PosencClient& monitor = *clients[0];
  ExpectStillServing(monitor);
  // The hot table: asked for three times, so the cache keeps it.
  const TableSpec hot = MakeSpec(512, 8192);  // 16 MiB
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(monitor.GetTable(hot).ok());
  // The warm reserve fills in the background from the start.
  const absl::Time filled_by = absl::Now() + absl::Seconds(10);
  while (absl::Now() < filled_by) {
    absl::StatusOr<v1::GetStatsResponse> stats = monitor.GetStats();
    if (stats.ok() && stats->compute().warm_reserve_bytes() >= kWarmReserve) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  const uint64_t start_rss = server.MemoryBytes();

  std::atomic<uint64_t> calls{0}, ok{0}, refused{0}, cancelled{0}, deadline{0},
      closed{0}, unexpected{0};
  // The load each thread runs (for failure messages).
  thread_local size_t load_index = 0;
  auto count = [&](const absl::Status& s, bool may_cancel, bool may_expire) {
    ++calls;
    if (s.ok()) {
      ++ok;
    } else if (s.code() == absl::StatusCode::kResourceExhausted) {
      ++refused;
    } else if (may_cancel && s.code() == absl::StatusCode::kCancelled) {
      ++cancelled;
    } else if (may_expire && s.code() == absl::StatusCode::kDeadlineExceeded) {
      ++deadline;
    } else if (s.code() == absl::StatusCode::kUnavailable) {
      ++closed;
    } else if (++unexpected <= 10) {
      ADD_FAILURE() << "load " << load_index << ": " << s;
    }
  };
  std::atomic<uint64_t> serial{0};
  auto fresh = [&](TableSpec spec) {  // a family nobody asked for
    return WithBase(spec, 20000 + static_cast<double>(++serial) / 8);
  };
  auto noop = [](uint32_t, const Tensor&) { return absl::OkStatus(); };

  // 64 GetRows at once on one connection, each of 65536 positions of a new
  // family (d = 2: 512 KiB answers), by gRPC's callback API.
  auto burst = [&](PosencClient& c, std::mt19937& rng) {
    constexpr int kBurst = 64;
    struct Call {
      grpc::ClientContext context;
      v1::GetRowsRequest request;
      v1::GetRowsResponse response;
      grpc::Status status;
    };
    auto stub = v1::PositionalEncoding::NewStub(c.channel());
    std::vector<std::unique_ptr<Call>> calls;
    absl::Mutex mu;
    int done = 0;
    for (int k = 0; k < kBurst; ++k) {
      calls.push_back(std::make_unique<Call>());
      Call* call = calls.back().get();
      // bfloat16, d = 2: 4-byte rows, so the positions a queued call holds
      // (4 bytes each, in no budget) weigh as much as its answer.
      TableSpec spec = fresh(MakeSpec(2, 1u << 24));
      spec.dtype = DType::kBFloat16;
      *call->request.mutable_spec() = SpecToProto(spec);
      for (int p = 0; p < 65536; ++p) {
        call->request.add_positions(rng() % (1u << 24));
      }
      call->context.set_deadline(std::chrono::system_clock::now() +
                                 std::chrono::seconds(60));
      stub->async()->GetRows(&call->context, &call->request, &call->response,
                             [&mu, &done, call](grpc::Status status) {
                               call->status = std::move(status);
                               absl::MutexLock lock(&mu);
                               ++done;
                             });
    }
    {
      absl::MutexLock lock(&mu);
      mu.Await(absl::Condition(
          +[](int* n) { return *n == kBurst; }, &done));
    }
    for (const auto& call : calls) {
      count(
          absl::Status(static_cast<absl::StatusCode>(call->status.error_code()),
                       call->status.error_message()),
          false, false);
    }
  };

  const absl::Time end = absl::Now() + absl::Seconds(seconds);
  // Each load runs in its own thread until `end`; `c` picks its connection.
  using Load = std::function<void(PosencClient&, std::mt19937&)>;
  std::vector<Load> loads = {
      // Hot GetTable, twice.
      [&](PosencClient& c, std::mt19937&) {
        count(c.GetTable(hot).status(), false, false);
      },
      [&](PosencClient& c, std::mt19937&) {
        count(c.GetTable(hot).status(), false, false);
      },
      // Cold GetTables of 8 MiB one-off families, three threads.
      [&](PosencClient& c, std::mt19937&) {
        count(c.GetTable(fresh(MakeSpec(512, 4096))).status(), false, false);
      },
      [&](PosencClient& c, std::mt19937&) {
        count(c.GetTable(fresh(MakeSpec(512, 4096))).status(), false, false);
      },
      [&](PosencClient& c, std::mt19937&) {
        count(c.GetTable(fresh(MakeSpec(1024, 2048))).status(), false, false);
      },
      // Hot GetRows: one row, and 4096 rows (an 8 MiB answer).
      [&](PosencClient& c, std::mt19937& rng) {
        count(c.GetRows(hot, {uint32_t(rng() % 8192)}).status(), false, false);
      },
      [&](PosencClient& c, std::mt19937& rng) {
        std::vector<uint32_t> positions(4096);
        for (uint32_t& p : positions) p = rng() % 8192;
        count(c.GetRows(hot, positions).status(), false, false);
      },
      // Cold GetRows: one row of a huge family, 4096 rows of a new one.
      [&](PosencClient& c, std::mt19937& rng) {
        count(c.GetRows(fresh(MakeSpec(4096, 1u << 24)),
                        {uint32_t(rng() % (1u << 24))})
                  .status(),
              false, false);
      },
      [&](PosencClient& c, std::mt19937& rng) {
        std::vector<uint32_t> positions(4096);
        for (uint32_t& p : positions) p = rng() % (1u << 20);
        count(c.GetRows(fresh(MakeSpec(512, 1u << 20)), positions).status(),
              false, false);
      },
      // Slow readers of uncached 256 MiB streams, cancelled at a random
      // message, three threads. A stream that delivered and then ran past
      // its 90 s deadline is slow, not stuck: each of its messages waits for
      // a compute turn behind 20 other loads, under ASan up to 64 of them
      // (loads 9 and 10 in three of eight ASan suite runs of issue 36's item
      // 0, one of them on an otherwise quiet machine). One that delivered
      // nothing still fails.
      [&](PosencClient& c, std::mt19937& rng) {
        int messages = 0;
        const int stop_at = 1 + rng() % 64;
        const absl::Status s = c.StreamBatches(
            fresh(MakeSpec(1024, 65536)), 0, std::nullopt, 0,
            [&](uint32_t, const Tensor&) {
              absl::SleepFor(absl::Milliseconds(2));
              return ++messages < stop_at ? absl::OkStatus()
                                          : absl::CancelledError("enough");
            });
        count(s, true, messages > 0);
      },
      [&](PosencClient& c, std::mt19937& rng) {
        int messages = 0;
        const int stop_at = 1 + rng() % 64;
        const absl::Status s = c.StreamBatches(
            fresh(MakeSpec(2048, 32768)), 0, std::nullopt, 0,
            [&](uint32_t, const Tensor&) {
              absl::SleepFor(absl::Milliseconds(5));
              return ++messages < stop_at ? absl::OkStatus()
                                          : absl::CancelledError("enough");
            });
        count(s, true, messages > 0);
      },
      [&](PosencClient& c, std::mt19937& rng) {
        int rows = 0;
        const int stop_at = 1 + rng() % 512;
        count(c.StreamRows(hot, 0, std::nullopt,
                           [&](uint32_t, const Tensor&) {
                             return ++rows < stop_at
                                        ? absl::OkStatus()
                                        : absl::CancelledError("enough");
                           }),
              true, false);
      },
      // Hot streams, read at full speed.
      [&](PosencClient& c, std::mt19937&) {
        count(c.StreamBatches(hot, 0, std::nullopt, 0, noop), false, false);
      },
      // Streams opened and not read for a second, then cancelled: 16 at a
      // time, each of a table no cache keeps (computed message by message,
      // its chunks charged to the in-flight budget).
      [&](PosencClient& c, std::mt19937&) {
        auto stub = v1::PositionalEncoding::NewStub(c.channel());
        std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
        std::vector<
            std::unique_ptr<grpc::ClientReader<v1::StreamBatchesResponse>>>
            readers;
        for (int s = 0; s < 16; ++s) {
          v1::StreamBatchesRequest request;
          *request.mutable_spec() = SpecToProto(fresh(MakeSpec(1024, 1000000)));
          contexts.push_back(std::make_unique<grpc::ClientContext>());
          contexts.back()->set_deadline(std::chrono::system_clock::now() +
                                        std::chrono::seconds(30));
          readers.push_back(
              stub->StreamBatches(contexts.back().get(), request));
        }
        absl::SleepFor(absl::Seconds(1));
        for (auto& context : contexts) context->TryCancel();
        for (auto& reader : readers) {
          const grpc::Status s = reader->Finish();
          count(absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                             s.error_message()),
                true, false);
        }
      },
      // LongRoPE at d = 65536: 512 KiB requests (two lists of 32768).
      [&](PosencClient& c, std::mt19937& rng) {
        TableSpec spec = fresh(MakeSpec(65536, 1u << 24));
        auto rope = std::make_shared<RopeScaling>();
        rope->type = RopeType::kLongRope;
        rope->original_max_position_embeddings = 4096;
        rope->seq_len = 131072;
        rope->short_factor.assign(32768, 1.5);
        rope->long_factor.assign(32768, 2.5);
        spec.rope = rope;
        spec.layout = Layout::kRotateHalf;
        count(c.GetRows(spec, {uint32_t(rng() % (1u << 24))}).status(), false,
              false);
      },
      // Cold 32 MiB float64 tables whose deadline expires mid-computation.
      [&](PosencClient& c, std::mt19937&) {
        PosencClient::Options options =
            ClientTo(server.target(), absl::Milliseconds(300));
        options.max_receive_bytes = (1 << 30) - 100;
        PosencClient hurried(options);
        TableSpec spec = fresh(MakeSpec(4096, 1024));
        spec.dtype = DType::kFloat64;
        count(hurried.GetTable(spec).status(), false, true);
        absl::SleepFor(absl::Milliseconds(100));
        (void)c;
      },
  };

  // Bursts of 64 concurrent GetRows of 65536 positions (about 250 KiB
  // requests) on new families, on six connections: calls queued for the
  // pool hold their requests (gRPC reads them into its ResourceQuota) and
  // their positions.
  for (int k = 0; k < 6; ++k) loads.push_back(burst);

  Peaks peaks;
  std::atomic<bool> stop{false};
  std::string at_peak;  // the mappings when VmRSS was highest
  std::thread rss_sampler([&] {
    while (!stop) {
      const uint64_t rss = server.MemoryBytes();
      if (rss > peaks.rss) {
        Peaks::Raise(peaks.rss, rss);
        at_peak = SmapsSummary(pid);
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  });
  std::thread stats_sampler([&] {
    while (!stop) {
      absl::StatusOr<v1::GetStatsResponse> s = monitor.GetStats();
      if (s.ok()) {
        const uint64_t resident = s->cache().resident_bytes();
        const uint64_t inflight = s->compute().inflight_bytes();
        const uint64_t reserve = s->compute().warm_reserve_bytes();
        Peaks::Raise(peaks.resident, resident);
        Peaks::Raise(peaks.inflight, inflight);
        Peaks::Raise(peaks.reserve, reserve);
        Peaks::Raise(peaks.accounted, resident + inflight + reserve);
        if (shm) Peaks::Raise(peaks.shm_files, FilesBytes(s->server()));
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
  });
  // POSENC_MEMORY_LOADS=i,j,...: only those loads (to measure what each
  // adds; the checks of a full run then need not hold).
  std::vector<bool> run(loads.size(), true);
  if (const char* only = std::getenv("POSENC_MEMORY_LOADS")) {
    run.assign(loads.size(), false);
    for (absl::string_view k : absl::StrSplit(only, ',', absl::SkipEmpty())) {
      size_t index = 0;
      if (absl::SimpleAtoi(k, &index) && index < run.size()) run[index] = true;
    }
  }
  std::vector<std::thread> threads;
  for (size_t k = 0; k < loads.size(); ++k) {
    if (!run[k]) continue;
    threads.emplace_back([&, k] {
      load_index = k;
      std::mt19937 rng(1000 + k);
      PosencClient& client = *clients[1 + k % (kConnections - 1)];
      while (absl::Now() < end) loads[k](client, rng);
    });
  }
  for (auto& t : threads) t.join();
  // Every load's call has ended, so the server goes idle soon: whatever is
  // still queued belongs to calls that ended first (cancelled, or past
  // their deadlines) and is dropped unrun. (Before that rule, an ASan run on
  // oversubscribed cores still had 255 MiB of such work queued here.)
  const absl::Time load_end = absl::Now();
  uint64_t skipped = 0;
  for (bool idle = false; !idle;) {
    absl::StatusOr<v1::GetStatsResponse> s = monitor.GetStats();
    ASSERT_TRUE(s.ok()) << s.status();
    idle =
        s->compute().queued_tasks() == 0 && s->compute().running_tasks() == 0;
    skipped = s->compute().skipped_tasks();
    ASSERT_LT(absl::Now() - load_end, absl::Seconds(60))
        << "still busy 60 s after the load: " << s->compute().DebugString();
    if (!idle) absl::SleepFor(absl::Milliseconds(10));
  }
  std::cout << "[ memory ] idle " << absl::Now() - load_end
            << " after the load; " << skipped
            << " computations dropped unrun, their calls ended while queued\n";
  // The cache's budget must have been pressed. Under the load above that
  // depends on the machine: in a clean-clone CI under ASan on two busy
  // cores, the in-flight budget refused nearly every cold GetTable and the
  // cache computed 3 tables in 20 s, none evicted. So after the load, cold
  // 8 MiB tables one at a time (the in-flight budget refuses none of them)
  // until the cache evicts or rejects one: 16 MiB hot + 7 x 8 MiB passes
  // the 64 MiB budget, so at most 16 calls, with the samplers still on.
  for (int k = 0; k < 16; ++k) {
    absl::StatusOr<v1::GetStatsResponse> s = monitor.GetStats();
    ASSERT_TRUE(s.ok()) << s.status();
    if (s->cache().evictions() + s->cache().rejections() > 0) break;
    const absl::Status cold =
        monitor.GetTable(fresh(MakeSpec(512, 4096))).status();
    EXPECT_TRUE(cold.ok()) << "cold table " << k << " after the load: " << cold;
  }
  stop = true;
  rss_sampler.join();
  stats_sampler.join();

  absl::StatusOr<v1::GetStatsResponse> stats = monitor.GetStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  const uint64_t peak = server.MemoryBytes("VmHWM");
  const uint64_t bound =
      kCache + 2 * kInflight + kGrpcQuota + kWarmReserve + kProcessMargin;
  std::cout << "[ memory ] " << seconds << " s, " << loads.size()
            << " load threads on " << kConnections - 1
            << " connections: " << calls << " calls (" << ok << " OK, "
            << refused << " RESOURCE_EXHAUSTED, " << cancelled << " CANCELLED, "
            << deadline << " DEADLINE_EXCEEDED, " << closed << " UNAVAILABLE, "
            << unexpected << " unexpected); cache "
            << stats->cache().computations() << " computations, "
            << stats->cache().evictions() << " evictions, "
            << stats->cache().rejections()
            << " rejections; refusals queue/connection/inflight "
            << stats->refusals().queue_full() << "/"
            << stats->refusals().connection_misses() << "/"
            << stats->refusals().inflight_bytes() << "; warm reserve reuses "
            << stats->compute().warm_reserve_reuses() << "\n"
            << "[ memory ] base RSS (idle, no reserve) " << (base >> 20)
            << " MiB; RSS at start (hot table, reserve full) "
            << (start_rss >> 20) << " MiB; peaks sampled: cache "
            << (peaks.resident >> 20) << " MiB, in-flight "
            << (peaks.inflight >> 20) << " MiB, warm reserve "
            << (peaks.reserve >> 20) << " MiB, their sum "
            << (peaks.accounted >> 20) << " MiB, VmRSS " << (peaks.rss >> 20)
            << " MiB; VmHWM " << (peak >> 20) << " MiB; bound (cache "
            << (kCache >> 20) << " + 2 x in-flight " << (kInflight >> 20)
            << " + gRPC quota " << (kGrpcQuota >> 20) << " + warm reserve "
            << (kWarmReserve >> 20) << " + " << (kProcessMargin >> 20) << ") "
            << (bound >> 20) << " MiB; earlier bounds: cache + in-flight + "
            << "quota + reserve + 64 "
            << ((kCache + kInflight + kGrpcQuota + kWarmReserve +
                 kProcessMargin) >>
                20)
            << " MiB, cache + in-flight + 64 "
            << ((kCache + kInflight + 64 * kMiB) >> 20) << " MiB\n"
            << "[ memory ] at the peak: " << at_peak << "\n";
  if (shm) {
    std::cout << "[ memory ] shared memory: " << stats->cache().shm_files()
              << " files now, " << stats->cache().shm_fallbacks()
              << " fallbacks; the files' bytes peaked at "
              << (peaks.shm_files >> 20) << " MiB (cache budget "
              << (kCache >> 20) << " MiB)\n";
    EXPECT_GT(peaks.shm_files.load(), 0u);
    EXPECT_LE(peaks.shm_files.load(), kCache);
    EXPECT_EQ(stats->cache().shm_fallbacks(), 0u);
  }
  EXPECT_EQ(unexpected.load(), 0u);
  // Some calls succeeded: how many depends on the machine's speed (46 in
  // 20 s under ASan on a busy 2-core machine, hundreds in Release).
  EXPECT_GT(ok.load(), 0u);
  // Every kind of call got through, and the budgets were used.
  EXPECT_GT(cancelled.load(), 0u);
  EXPECT_GT(stats->cache().evictions() + stats->cache().rejections(), 0u);
  EXPECT_GT(stats->compute().warm_reserve_reuses(), 0u);
  EXPECT_LE(peaks.resident.load(), kCache);
  EXPECT_LE(peaks.inflight.load(), kInflight);
  EXPECT_LE(peaks.reserve.load(), kWarmReserve);
  EXPECT_LE(base, kProcessMargin);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  (void)peak;  // sanitizer builds hold freed memory in quarantine
#else
  EXPECT_LE(peak, bound);
#endif
  ExpectStillServing(monitor);
  if (shm) {
    std::error_code ignored;
    std::filesystem::remove_all(shm_parent, ignored);
  }
}

}  // namespace
}  // namespace posenc::testing
