#include "core/runtime/compute_pool.h"

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/runtime/limit_error.h"

namespace posenc {

ComputePool::ComputePool(Options options) : options_(std::move(options)) {
  threads_.reserve(options_.threads);
  for (int i = 0; i < options_.threads; ++i) {
    threads_.emplace_back([this] {
      // Linux applies a nice value per thread; best effort (a failure only
      // leaves the thread at the process's priority).
      if (options_.nice > 0) {
        (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()),
                          options_.nice);
      }
      Loop();
    });
  }
}

ComputePool::~ComputePool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_.notify_all();
  for (auto& t : threads_) t.join();
}

void ComputePool::PushLocked(absl::string_view owner, Task task) {
  queued_bytes_ += task.cost;
  ++queued_tasks_;
  auto [it, inserted] = queues_.try_emplace(owner);
  if (it->second.tasks.empty()) turn_.emplace_back(owner);
  it->second.tasks.push_back(std::move(task));
}

bool ComputePool::PopLocked(Task* task) {
  if (!urgent_.empty()) {
    *task = std::move(urgent_.front());
    urgent_.pop_front();
    return true;
  }
  if (turn_.empty()) return false;
  // The owner whose turn it is gives one task, then goes to the back of the
  // line if it has more.
  std::string owner = std::move(turn_.front());
  turn_.pop_front();
  auto it = queues_.find(owner);
  *task = std::move(it->second.tasks.front());
  it->second.tasks.pop_front();
  if (it->second.tasks.empty()) {
    queues_.erase(it);
  } else {
    turn_.push_back(std::move(owner));
  }
  queued_bytes_ -= task->cost;
  --queued_tasks_;
  ++started_;
  return true;
}

absl::Status ComputePool::TryPost(absl::string_view owner, uint64_t cost_bytes,
                                  std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queued_tasks_ > 0 &&
        queued_bytes_ + cost_bytes > options_.max_queued_bytes) {
      ++refused_;
      return LimitError(
          absl::StatusCode::kResourceExhausted, Limit::kQueuedComputeBytes,
          absl::StrCat("the compute queue is full: ", queued_bytes_,
                       " bytes of work wait and this call adds ", cost_bytes,
                       ", over the limit ", options_.max_queued_bytes,
                       "; retry with backoff"));
    }
    PushLocked(owner, Task{std::move(task), cost_bytes});
  }
  work_.notify_one();
  return absl::OkStatus();
}

void ComputePool::Post(absl::string_view owner, uint64_t cost_bytes,
                       std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    PushLocked(owner, Task{std::move(task), cost_bytes});
  }
  work_.notify_one();
}

void ComputePool::ParallelFor(int chunks, const std::function<void(int)>& fn) {
  if (chunks <= 0) return;
  // Shared with the helper tasks, which may start after this call returned
  // (they then find no chunk left and do nothing).
  struct Job {
    std::atomic<int> next{0};
    int chunks = 0;
    const std::function<void(int)>* fn = nullptr;
    std::mutex mu;
    std::condition_variable all_done;
    int done = 0;  // guarded by mu
  };
  auto job = std::make_shared<Job>();
  job->chunks = chunks;
  job->fn = &fn;
  // Claims and runs chunks until none is left; fn stays valid while any
  // chunk is unfinished, because the caller waits for all of them.
  auto work = [](Job& j) {
    for (;;) {
      const int c = j.next.fetch_add(1, std::memory_order_relaxed);
      if (c >= j.chunks) return;
      (*j.fn)(c);
      std::lock_guard<std::mutex> lock(j.mu);
      if (++j.done == j.chunks) j.all_done.notify_all();
    }
  };
  const int helpers = std::min(chunks, size()) - 1;
  if (helpers > 0) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (int h = 0; h < helpers; ++h) {
        urgent_.push_back(Task{[job, work] { work(*job); }, 0});
      }
    }
    work_.notify_all();
  }
  work(*job);
  std::unique_lock<std::mutex> lock(job->mu);
  job->all_done.wait(lock, [&job] { return job->done == job->chunks; });
}

ComputePool::Stats ComputePool::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats stats;
  stats.queued_tasks = queued_tasks_;
  stats.queued_bytes = queued_bytes_;
  stats.running_tasks = running_;
  stats.started_tasks = started_;
  stats.refused = refused_;
  return stats;
}

void ComputePool::Loop() {
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_.wait(lock, [this] {
        return stopping_ || !urgent_.empty() || !turn_.empty();
      });
      if (!PopLocked(&task)) return;  // stopping, and nothing left to run
      ++running_;
    }
    task.run();
    std::lock_guard<std::mutex> lock(mu_);
    --running_;
  }
}

}  // namespace posenc
