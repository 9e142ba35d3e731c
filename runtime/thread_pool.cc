#include "runtime/thread_pool.h"

#include <algorithm>

namespace accelmem {
namespace runtime {
namespace {

thread_local const ThreadPool* tls_running_pool = nullptr;
thread_local int tls_worker = 0;

}  // namespace

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(num_threads > 0
                       ? num_threads
                       : std::max(1, static_cast<int>(std::thread::hardware_concurrency()))) {
  for (int w = 1; w < num_threads_; ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::RunTasks(int worker) {
  const ThreadPool* previous = tls_running_pool;
  const int previous_worker = tls_worker;
  tls_running_pool = this;
  tls_worker = worker;
  for (;;) {
    const int64_t begin = next_.fetch_add(job_grain_, std::memory_order_relaxed);
    if (begin >= job_size_) break;
    const int64_t end = std::min(job_size_, begin + job_grain_);
    for (int64_t i = begin; i < end; ++i) (*job_)(i, worker);
  }
  tls_running_pool = previous;
  tls_worker = previous_worker;
}

void ThreadPool::WorkerLoop(int worker) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    RunTasks(worker);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--busy_workers_ == 0) done_cv_.notify_all();
    }
  }
}

void ThreadPool::ParallelFor(int64_t n, absl::FunctionRef<void(int64_t, int)> fn, int64_t grain) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  if (tls_running_pool == this) {  // nested call from one of our tasks: run inline
    for (int64_t i = 0; i < n; ++i) fn(i, tls_worker);
    return;
  }
  if (workers_.empty() || n <= grain) {
    for (int64_t i = 0; i < n; ++i) fn(i, 0);
    return;
  }
  std::lock_guard<std::mutex> call_lock(call_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &fn;
    job_size_ = n;
    job_grain_ = grain;
    next_.store(0, std::memory_order_relaxed);
    busy_workers_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  work_cv_.notify_all();
  RunTasks(0);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return busy_workers_ == 0; });
  job_ = nullptr;
}

}  // namespace runtime
}  // namespace accelmem
