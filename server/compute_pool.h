// ComputePool: a fixed set of threads that run table computations off the
// gRPC callback threads, which must never block on long work.
//
// Thread-safe. The destructor runs every task already posted, then joins.
#ifndef POSENC_SERVER_COMPUTE_POOL_H_
#define POSENC_SERVER_COMPUTE_POOL_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"

namespace posenc {

class ComputePool {
 public:
  // Precondition: threads >= 1.
  explicit ComputePool(int threads);
  ~ComputePool();
  ComputePool(const ComputePool&) = delete;
  ComputePool& operator=(const ComputePool&) = delete;

  // Runs `task` on one of the pool's threads, in FIFO order.
  void Post(std::function<void()> task);

  int size() const { return static_cast<int>(threads_.size()); }

 private:
  void Loop();

  // std::mutex rather than absl::Mutex: ThreadSanitizer sees through it.
  std::mutex mu_;
  std::condition_variable work_;  // a task was posted, or stopping_ set
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace posenc

#endif  // POSENC_SERVER_COMPUTE_POOL_H_
