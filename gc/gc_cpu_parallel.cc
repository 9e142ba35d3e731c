#include "gc/gc_cpu_parallel.h"

#include <algorithm>
#include <string>

#include "gc/device/gc_serial.h"
#include "gc/device/phase0_compact_free_list.h"
#include "gc/device/phase1_swap_lists.h"
#include "gc/device/phase2_refill_and_zero.h"
#include "sparse_runtime/device/runtime_memory.h"

namespace accelmem {
namespace gc {
namespace {

constexpr int kSpinIterations = 4000;

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

void CpuParallelGc::Barrier::Wait() {
  if (count_ == 1) return;
  const uint64_t generation = generation_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) == count_ - 1) {
    arrived_.store(0, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mu_);
      generation_.store(generation + 1, std::memory_order_release);
    }
    cv_.notify_all();
    return;
  }
  if (spin_) {
    for (int i = 0; i < kSpinIterations; ++i) {
      if (generation_.load(std::memory_order_acquire) != generation) return;
      CpuRelax();
    }
  }
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != generation; });
}

CpuParallelGc::CpuParallelGc(int num_workers, uint64_t min_parallel_bytes)
    : num_workers_(std::clamp(num_workers, 1, static_cast<int>(kMaxGcWorkers))),
      min_parallel_bytes_(min_parallel_bytes),
      barrier_(num_workers_, num_workers_ <= static_cast<int>(std::max(
                                                 1u, std::thread::hardware_concurrency()))) {
  threads_.reserve(num_workers_ - 1);
  for (int w = 1; w < num_workers_; ++w) threads_.emplace_back([this, w] { WorkerLoop(w); });
}

CpuParallelGc::~CpuParallelGc() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  job_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void CpuParallelGc::RunPhases(int worker) {
  gc_phase0_compact_free_list(nm_, scratch_, worker, num_workers_);
  barrier_.Wait();
  if (worker == 0) gc_phase1_swap_lists(nm_, scratch_, num_workers_);
  barrier_.Wait();
  gc_phase2_refill_and_zero(nm_, scratch_, worker, num_workers_);
  barrier_.Wait();
}

void CpuParallelGc::WorkerLoop(int worker) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      job_cv_.wait(lock, [&] { return stop_ || job_generation_ != seen; });
      if (stop_) return;
      seen = job_generation_;
    }
    RunPhases(worker);
  }
}

absl::Status CpuParallelGc::Collect(NodeManager* nm, GcScratch* scratch) {
  const bool had_error =
      sparse_runtime::runtime_error_code(nm->memory) != sparse_runtime::kRuntimeOk;
  const uint64_t bytes =
      nm->element_size * static_cast<uint64_t>(std::max(nm->recycled_list.valid_size(), 0));
  if (num_workers_ == 1 || bytes < min_parallel_bytes_) {
    gc_serial(nm, scratch);
  } else {
    RunParallel(nm, scratch);
  }
  if (!had_error && sparse_runtime::runtime_error_code(nm->memory) != sparse_runtime::kRuntimeOk) {
    return absl::InternalError(std::string("gc: ") + nm->memory->error_message);
  }
  return absl::OkStatus();
}

void CpuParallelGc::RunParallel(NodeManager* nm, GcScratch* scratch) {
  gc_scratch_reserve(scratch, nm, num_workers_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    nm_ = nm;
    scratch_ = scratch;
    ++job_generation_;
  }
  job_cv_.notify_all();
  RunPhases(0);  // the final barrier orders every worker's writes before the return
}

}  // namespace gc
}  // namespace accelmem
