// ComputePool: the one fixed set of threads that computes rows and tables,
// off gRPC's callback threads (which must never block on long work). No
// thread is ever started per call.
//
// Bounded and fair:
// - Work waiting in the queue is bounded in bytes (the output it will
//   write): TryPost refuses with RESOURCE_EXHAUSTED, naming the limit and
//   its flag, once the queued bytes would pass max_queued_bytes (a task is
//   always accepted into an empty queue, so no single answer is refused for
//   its size alone).
// - Each owner (a client connection) has its own FIFO; the threads take
//   tasks from the owners in turn, so a flood from one connection waits
//   behind its own tasks, not in front of everyone else's.
// - ParallelFor splits one large computation across idle threads without
//   starting any: the caller runs chunks itself while helper tasks, queued
//   ahead of everything else, join in.
//
// Thread-safe. The destructor runs every task already posted, then joins.
#ifndef POSENC_CORE_RUNTIME_COMPUTE_POOL_H_
#define POSENC_CORE_RUNTIME_COMPUTE_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace posenc {

class ComputePool {
 public:
  struct Options {
    // Threads; >= 1.
    int threads = 1;
    // Bound of the bytes of queued (not yet started) work.
    uint64_t max_queued_bytes = uint64_t{256} << 20;
    // Nice value of the pool's threads (0..19). Above 0, threads serving
    // cache hits (gRPC's) win the CPU from computations when both want it.
    int nice = 0;
  };

  struct Stats {
    uint64_t queued_tasks = 0;
    uint64_t queued_bytes = 0;
    uint64_t running_tasks = 0;
    // Tasks taken from the queue since start (ParallelFor's helpers are not
    // counted: they are pieces of a task already counted).
    uint64_t started_tasks = 0;
    uint64_t refused = 0;  // TryPost calls refused because the queue was full
  };

  explicit ComputePool(Options options);
  // Precondition: threads >= 1. Default queue bound.
  explicit ComputePool(int threads) : ComputePool(Options{threads}) {}
  ~ComputePool();
  ComputePool(const ComputePool&) = delete;
  ComputePool& operator=(const ComputePool&) = delete;

  // Queues `task` for `owner`, counting `cost_bytes` of queued work until it
  // starts. RESOURCE_EXHAUSTED (and nothing queued) when the queue is not
  // empty and cost_bytes would take it past max_queued_bytes.
  absl::Status TryPost(absl::string_view owner, uint64_t cost_bytes,
                       std::function<void()> task);

  // Queues `task` whatever the queue holds: for the continuation of work
  // that was already admitted (the next message of a stream).
  void Post(absl::string_view owner, uint64_t cost_bytes,
            std::function<void()> task);
  // An anonymous owner's task (tests, tools).
  void Post(std::function<void()> task) { Post("", 0, std::move(task)); }

  // Runs fn(0), ..., fn(chunks - 1), each once, on the calling thread and on
  // pool threads that are idle meanwhile; returns when all have run. Safe to
  // call from a pool thread (the caller never waits for a queued task).
  void ParallelFor(int chunks, const std::function<void(int)>& fn);

  int size() const { return static_cast<int>(threads_.size()); }
  uint64_t max_queued_bytes() const { return options_.max_queued_bytes; }
  Stats GetStats() const;

 private:
  struct Task {
    std::function<void()> run;
    uint64_t cost = 0;
  };
  struct Queue {
    std::deque<Task> tasks;
  };

  void PushLocked(absl::string_view owner, Task task)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool PopLocked(Task* task) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Loop();

  const Options options_;
  // std::mutex rather than absl::Mutex: ThreadSanitizer sees through it.
  mutable std::mutex mu_;
  std::condition_variable work_;  // a task was queued, or stopping_ set
  // Helper tasks of ParallelFor: taken before any owner's task.
  std::deque<Task> urgent_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Queue> queues_ ABSL_GUARDED_BY(mu_);
  // Owners with queued tasks, in the order they are served.
  std::deque<std::string> turn_ ABSL_GUARDED_BY(mu_);
  uint64_t queued_tasks_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t running_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t started_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t refused_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace posenc

#endif  // POSENC_CORE_RUNTIME_COMPUTE_POOL_H_
