// File: benchmarks/baselines/upstream_thread_pool.h
//
// A benchmark-only re-implementation of the CPU thread pool of Taichi
// (https://github.com/taichi-dev/taichi/blob/master/taichi/system/threading.cpp, `ThreadPool`),
// which runs upstream's parallel range-fors and struct-fors (runtime->parallel_for). Upstream's
// protocol, kept as it is, so that a baseline struct-for pays what upstream's pays to start and
// end a parallel loop:
//
//   * max_num_threads workers, started by the constructor, each sleeping on one condition
//     variable until a new launch (timestamp) that wants it (thread_id < desired_num_threads);
//   * run(splits, desired, ctx, func): under the mutex, publish the launch (task_head = 0,
//     task_tail = splits, timestamp++), wake every worker, then wait until one has started and
//     none is running; the launching thread runs no task itself;
//   * a worker claims task ids with one relaxed fetch_add each and calls func(ctx, thread_id, id)
//     through its pointer; the last worker to finish a launch wakes the launcher.
#ifndef ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_THREAD_POOL_H_
#define ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_THREAD_POOL_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace accelmem {
namespace baselines {

class UpstreamThreadPool {
 public:
  using TaskFunc = void(void* ctx, int thread_id, int task_id);

  explicit UpstreamThreadPool(int max_num_threads) : max_num_threads_(max_num_threads) {
    if (max_num_threads < 1) std::abort();
    threads_.reserve(static_cast<std::size_t>(max_num_threads));
    for (int i = 0; i < max_num_threads; ++i) threads_.emplace_back([this] { Target(); });
  }
  ~UpstreamThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      exiting_ = true;
    }
    slave_cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  UpstreamThreadPool(const UpstreamThreadPool&) = delete;
  UpstreamThreadPool& operator=(const UpstreamThreadPool&) = delete;

  void Run(int splits, int desired_num_threads, void* ctx, TaskFunc* func) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ctx_ = ctx;
      func_ = func;
      desired_num_threads_ = std::min(desired_num_threads, max_num_threads_);
      started_ = false;
      task_head_.store(0, std::memory_order_relaxed);
      task_tail_ = splits;
      ++timestamp_;
    }
    slave_cv_.notify_all();
    std::unique_lock<std::mutex> lock(mutex_);
    master_cv_.wait(lock, [this] { return started_ && running_threads_ == 0; });
  }

  int max_num_threads() const { return max_num_threads_; }

 private:
  void Target() {
    uint64_t last_timestamp = 0;
    int thread_id;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      thread_id = thread_counter_++;
    }
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        slave_cv_.wait(lock, [&] {
          return (timestamp_ > last_timestamp && thread_id < desired_num_threads_) || exiting_;
        });
        last_timestamp = timestamp_;
        if (exiting_) return;
        // Woken after the others already finished this launch: nothing left to do.
        if (last_finished_ >= last_timestamp) continue;
        started_ = true;
        ++running_threads_;
      }
      for (;;) {
        const int task_id = task_head_.fetch_add(1, std::memory_order_relaxed);
        if (task_id >= task_tail_) break;
        func_(ctx_, thread_id, task_id);
      }
      bool all_finished = false;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (--running_threads_ == 0) {
          all_finished = true;
          last_finished_ = last_timestamp;
        }
      }
      if (all_finished) master_cv_.notify_one();
    }
  }

  const int max_num_threads_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable slave_cv_, master_cv_;
  bool exiting_ = false;
  bool started_ = false;
  int running_threads_ = 0;
  int thread_counter_ = 0;
  int desired_num_threads_ = 0;
  uint64_t timestamp_ = 1;
  uint64_t last_finished_ = 0;
  std::atomic<int> task_head_{0};
  int task_tail_ = 0;
  void* ctx_ = nullptr;
  TaskFunc* func_ = nullptr;
};

}  // namespace baselines
}  // namespace accelmem

#endif  // ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_THREAD_POOL_H_
