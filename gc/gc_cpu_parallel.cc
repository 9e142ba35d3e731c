#include "gc/gc_cpu_parallel.h"

#include <algorithm>
#include <string>

#include "gc/device/gc_batch.h"
#include "gc/device/gc_serial.h"
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
  if (split_) {
    // Whole collections, each manager on the worker it was given (no barrier between phases).
    for (int k = 0; k < num_entries_; ++k) {
      if (split_owner_[k] == worker) gc_batch_serial(&entries_[k], 1);
    }
    barrier_.Wait();
    return;
  }
  // The phases after prepare (which CollectBatch ran), in order, a barrier after each; a phase of
  // one thread or block runs on worker 0 (one lane).
  struct Phase {
    GcBatchPhaseFn run;
    GcRunner runner;
  };
  static constexpr Phase kPhases[] = {
#define ACCELMEM_CPU_GC_PHASE(phase, runner, unused) {&gc_batch_##phase, runner},
      ACCELMEM_GC_BATCH_PHASES(ACCELMEM_CPU_GC_PHASE, _)
#undef ACCELMEM_CPU_GC_PHASE
  };
  for (const Phase& phase : kPhases) {
    if (worker == 0 || gc_runner_is_every_worker(phase.runner)) {
      phase.run(entries_, num_entries_, worker, num_workers_, 0, 1);
    }
    barrier_.Wait();
  }
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

namespace {

bool HasError(const NodeManager* nm) {
  return sparse_runtime::runtime_error_code(nm->memory) != sparse_runtime::kRuntimeOk;
}

uint64_t RecycledBytes(const NodeManager* nm) {
  return nm->element_size * static_cast<uint64_t>(std::max(nm->recycled_list.valid_size(), 0));
}

}  // namespace

absl::Status CpuParallelGc::Collect(NodeManager* nm, GcScratch* scratch) {
  const bool had_error = HasError(nm);
  if (num_workers_ == 1 || RecycledBytes(nm) < min_parallel_bytes_) {
    gc_serial(nm, scratch);
  } else {
    gc_scratch_reserve(scratch, nm, num_workers_);
    GcBatchEntry entry{nm, scratch, /*active=*/1, 0};
    RunParallel(&entry, 1);
  }
  if (!had_error && HasError(nm)) {
    return absl::InternalError(std::string("gc: ") + nm->memory->error_message);
  }
  return absl::OkStatus();
}

absl::StatusOr<int> CpuParallelGc::CollectBatch(GcBatchEntry* entries, int n) {
  // Errors already recorded before the batch are not its own (the managers may have different
  // memories; each is checked).
  std::vector<char> had_error(n, 0);
  for (int k = 0; k < n; ++k) {
    if (entries[k].nm != nullptr) had_error[k] = HasError(entries[k].nm) ? 1 : 0;
  }
  // A manager whose garbage alone reaches min_parallel_bytes is collected by every worker (its
  // phases split over the pool, in one pass with the other big ones). The smaller ones are whole
  // collections: on the caller, or, when together they reach the threshold, spread over the
  // workers by bytes (no barrier inside a collection; many small collections of many SNodes is
  // the case #6594 is about).
  int collected = 0;
  parallel_entries_.clear();
  split_entries_.clear();
  uint64_t split_bytes = 0;
  for (int k = 0; k < n; ++k) {
    GcBatchEntry& e = entries[k];
    e.active = e.nm != nullptr && gc_needs_collection(e.nm) ? 1 : 0;
    if (e.active == 0) continue;
    ++collected;
    const uint64_t bytes = RecycledBytes(e.nm);
    if (num_workers_ > 1 && bytes >= min_parallel_bytes_) {
      parallel_entries_.push_back(e);
    } else {
      split_entries_.push_back(e);
      split_bytes += bytes;
    }
  }
  if (num_workers_ > 1 && split_entries_.size() >= 2 && split_bytes >= min_parallel_bytes_) {
    RunSplit();
  } else {
    for (GcBatchEntry& e : split_entries_) gc_batch_serial(&e, 1);
  }
  if (!parallel_entries_.empty()) {
    const int m = static_cast<int>(parallel_entries_.size());
    gc_batch_prepare(parallel_entries_.data(), m, num_workers_);
    RunParallel(parallel_entries_.data(), m);
  }
  for (int k = 0; k < n; ++k) {
    if (entries[k].nm != nullptr && !had_error[k] && HasError(entries[k].nm)) {
      return absl::InternalError(std::string("gc: ") + entries[k].nm->memory->error_message);
    }
  }
  return collected;
}

void CpuParallelGc::RunSplit() {
  // Largest first, each to the worker with the fewest bytes so far.
  const int m = static_cast<int>(split_entries_.size());
  std::vector<int> order(m);
  for (int k = 0; k < m; ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return RecycledBytes(split_entries_[a].nm) > RecycledBytes(split_entries_[b].nm);
  });
  std::vector<uint64_t> load(num_workers_, 0);
  split_owner_.assign(m, 0);
  for (int k : order) {
    const int w = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    split_owner_[k] = w;
    load[w] += RecycledBytes(split_entries_[k].nm);
  }
  RunParallel(split_entries_.data(), m, /*split=*/true);
}

void CpuParallelGc::RunParallel(GcBatchEntry* entries, int n, bool split) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    entries_ = entries;
    num_entries_ = n;
    split_ = split;
    ++job_generation_;
  }
  job_cv_.notify_all();
  RunPhases(0);  // the final barrier orders every worker's writes before the return
}

}  // namespace gc
}  // namespace accelmem
