// File: runtime/thread_pool.h
//
// ThreadPool: a fixed set of worker threads for the host API's parallel struct-for (the CPU
// analogue of upstream's ThreadPool + parallel_for). ParallelFor hands out task indices
// dynamically (one atomic counter, chunks of `grain` indices) to the calling thread and the
// workers and returns when all are done. Host code (ordinary C++; std::mutex/std::atomic so that
// it is TSan-visible).
//
// Calls from several threads are serialized; a ParallelFor issued from inside a task runs inline
// on the calling worker (no deadlock).
#ifndef ACCELMEM_RUNTIME_THREAD_POOL_H_
#define ACCELMEM_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"

namespace accelmem {
namespace runtime {

class ThreadPool {
 public:
  // num_threads counts the calling thread: num_threads - 1 workers are started. 0 means
  // std::thread::hardware_concurrency().
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Runs fn(index, worker) for every index in [0, n); worker is in [0, num_threads()).
  void ParallelFor(int64_t n, absl::FunctionRef<void(int64_t index, int worker)> fn,
                   int64_t grain = 1);

 private:
  void WorkerLoop(int worker);
  void RunTasks(int worker);

  const int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex call_mu_;  // serializes ParallelFor calls

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  uint64_t generation_ = 0;  // guarded by mu_
  int busy_workers_ = 0;     // guarded by mu_
  bool stop_ = false;        // guarded by mu_

  // The current job (written under mu_ before generation_ is bumped).
  const absl::FunctionRef<void(int64_t, int)>* job_ = nullptr;
  int64_t job_size_ = 0;
  int64_t job_grain_ = 1;
  std::atomic<int64_t> next_{0};
};

}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_THREAD_POOL_H_
