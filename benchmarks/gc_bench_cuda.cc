// gc_bench's CUDA rows (linked into //benchmarks:gc_bench only with --config=gpu): the device GC
// (//runtime/cuda:gc_cuda: prepare, phase 0 on the grid, phase 1 on one block, phase 2 on the
// grid, the batch kernels over a table of one) of N recycled cells of `cell_bytes` scattered over a
// device NodeManager of 2N cells (a random half, recycled in random order), against the limit: one
// cuMemsetD8 of the same N * cell_bytes bytes.
//   BM_Gc_Cuda_OneMemsetLimit   the limit
//   BM_Gc_Cuda_Collect          one collection (the four launches and the final synchronize)
//   BM_Gc_Cuda_CollectPhases    the same, each launch timed on its own (where the time goes)
// Wall time of the launches only (manual time); between iterations the collected cells are
// allocated again and recycled in a new random order, untimed. Counters as the CPU rows:
// items_per_second = cells/s, bytes_per_second = zeroed bytes/s, vs_memset = bandwidth / the
// limit's bandwidth. Without a device both rows report why they are skipped.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "runtime/cuda/gc_cuda.h"

namespace {

using accelmem::runtime::cuda::CudaDriver;
using accelmem::runtime::cuda::CudaGc;
using accelmem::runtime::cuda::CudaNodeManager;
using accelmem::runtime::cuda::DevicePtr;

struct Device {
  std::unique_ptr<CudaDriver> driver;
  std::unique_ptr<CudaGc> gc;
  std::string error;
};

Device& TheDevice() {
  static Device* device = [] {
    auto* d = new Device();
    auto driver = CudaDriver::Open();
    if (!driver.ok()) {
      d->error = std::string(driver.status().message());
      return d;
    }
    d->driver = std::move(*driver);
    auto gc = CudaGc::Create(d->driver.get());
    if (!gc.ok()) {
      d->error = std::string(gc.status().message());
      return d;
    }
    d->gc = std::move(*gc);
    return d;
  }();
  return *device;
}

bool SkipWithoutDevice(benchmark::State& state) {
  Device& device = TheDevice();
  if (device.gc != nullptr) return false;
  state.SkipWithError(("no CUDA GC: " + device.error).c_str());
  for (auto _ : state) {
  }
  return true;
}

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Seconds of one device memset of `bytes` (best of a few), the limit.
double MemsetSeconds(CudaDriver* driver, DevicePtr buffer, uint64_t bytes) {
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    const auto start = std::chrono::steady_clock::now();
    if (!driver->Memset(buffer, 0, bytes).ok() || !driver->Synchronize().ok()) return 0;
    best = std::min(best, Seconds(start));
  }
  return best;
}

void SetCounters(benchmark::State& state, int64_t cells, int64_t bytes, double limit_seconds,
                 double total_seconds) {
  state.SetItemsProcessed(state.iterations() * cells);
  state.SetBytesProcessed(state.iterations() * cells * bytes);
  if (limit_seconds > 0 && total_seconds > 0) {
    state.counters["vs_memset"] = limit_seconds * state.iterations() / total_seconds;
  }
}

// A device NodeManager of 2N cells of `bytes`, all allocated (chunks of the default 16384 cells:
// 64 MiB, 64 MiB-aligned at 4 KiB cells), and N of them, a random half in random order, to
// recycle. False, with the row skipped and the reason, on a failure.
bool MakeGarbage(benchmark::State& state, CudaGc* gc, int64_t cells, int64_t bytes,
                 std::mt19937_64* rng, std::unique_ptr<CudaNodeManager>* nm,
                 std::vector<int32_t>* garbage) {
  auto created =
      CudaNodeManager::Create(gc, bytes, CudaNodeManager::PoolBytesFor(bytes, 2 * cells));
  if (!created.ok()) {
    state.SkipWithError(std::string(created.status().message()).c_str());
    return false;
  }
  *nm = std::move(*created);
  auto all = (*nm)->Allocate(static_cast<int32_t>(2 * cells));
  if (!all.ok()) {
    state.SkipWithError(std::string(all.status().message()).c_str());
    return false;
  }
  *garbage = *std::move(all);
  std::shuffle(garbage->begin(), garbage->end(), *rng);
  garbage->resize(cells);
  return true;
}

void BM_Gc_Cuda_OneMemsetLimit(benchmark::State& state) {
  if (SkipWithoutDevice(state)) return;
  const int64_t cells = state.range(0), bytes = state.range(1);
  CudaDriver* driver = TheDevice().driver.get();
  auto buffer = driver->Allocate(cells * bytes);
  if (!buffer.ok()) {
    state.SkipWithError(std::string(buffer.status().message()).c_str());
    return;
  }
  double total = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    if (!driver->Memset(*buffer, 0, cells * bytes).ok() || !driver->Synchronize().ok()) {
      state.SkipWithError("cuMemsetD8 failed");
      break;
    }
    const double seconds = Seconds(start);
    total += seconds;
    state.SetIterationTime(seconds);
  }
  SetCounters(state, cells, bytes, total / std::max<int64_t>(1, state.iterations()), total);
  driver->Free(*buffer).IgnoreError();
}

void BM_Gc_Cuda_Collect(benchmark::State& state) {
  if (SkipWithoutDevice(state)) return;
  const int64_t cells = state.range(0), bytes = state.range(1);
  Device& device = TheDevice();
  std::mt19937_64 rng(cells * 7 + bytes);
  std::unique_ptr<CudaNodeManager> nm;
  std::vector<int32_t> garbage;
  if (!MakeGarbage(state, device.gc.get(), cells, bytes, &rng, &nm, &garbage)) return;
  double limit = 0;
  if (auto scratch = device.driver->Allocate(cells * bytes); scratch.ok()) {
    limit = MemsetSeconds(device.driver.get(), *scratch, cells * bytes);
    device.driver->Free(*scratch).IgnoreError();
  }
  double total = 0;
  for (auto _ : state) {
    if (!nm->Recycle(garbage).ok()) {
      state.SkipWithError("recycle failed");
      break;
    }
    const auto start = std::chrono::steady_clock::now();
    if (!device.gc->Collect(nm->node_manager(), nm->scratch()).ok()) {
      state.SkipWithError("collection failed");
      break;
    }
    const double seconds = Seconds(start);
    total += seconds;
    state.SetIterationTime(seconds);
    auto again = nm->Allocate(static_cast<int32_t>(cells));  // the collected cells, reused
    if (!again.ok()) {
      state.SkipWithError(std::string(again.status().message()).c_str());
      break;
    }
    garbage = *again;
    std::shuffle(garbage.begin(), garbage.end(), rng);
  }
  SetCounters(state, cells, bytes, limit, total);
  state.counters["grid"] = device.gc->grid_dim();
  state.counters["block"] = device.gc->block_dim();
}

// Where a collection's time goes: each launch (step) timed on its own (a synchronize after
// each), and the untimed work between collections (Recycle: upload and one recycle kernel;
// Allocate: one allocate kernel and the stats read), for a GC of `grid` blocks (0: the default).
// Counters are microseconds per collection.
void BM_Gc_Cuda_CollectPhases(benchmark::State& state) {
  if (SkipWithoutDevice(state)) return;
  const int64_t cells = state.range(0), bytes = state.range(1);
  const int grid = static_cast<int>(state.range(2));
  Device& device = TheDevice();
  std::unique_ptr<CudaGc> own;
  CudaGc* gc = device.gc.get();
  if (grid > 0) {
    accelmem::runtime::cuda::CudaGcLaunch launch;
    launch.grid_dim = grid;
    auto created = CudaGc::Create(device.driver.get(), launch);
    if (!created.ok()) {
      state.SkipWithError(std::string(created.status().message()).c_str());
      return;
    }
    own = std::move(*created);
    gc = own.get();
  }
  std::mt19937_64 rng(cells * 7 + bytes);
  std::unique_ptr<CudaNodeManager> nm;
  std::vector<int32_t> garbage;
  if (!MakeGarbage(state, gc, cells, bytes, &rng, &nm, &garbage)) return;
  // The collection's steps in launch order (CudaGc::StepKernelNames), over the manager's
  // one-entry table: what CudaNodeManager::Collect launches.
  const std::vector<std::string>& steps = CudaGc::StepKernelNames();
  const int num_steps = static_cast<int>(steps.size());
  const DevicePtr entry = nm->batch_entry();
  const int32_t workers = gc->phase0_workers();
  std::vector<double> phase(num_steps);
  double recycle = 0, allocate = 0;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    if (!nm->Recycle(garbage).ok()) {
      state.SkipWithError("recycle failed");
      break;
    }
    recycle += Seconds(start);
    double total = 0;
    for (int k = 0; k < num_steps; ++k) {
      start = std::chrono::steady_clock::now();
      if (!gc->LaunchStep(k, entry, 1).ok() || !device.driver->Synchronize().ok()) {
        state.SkipWithError("launch failed");
        break;
      }
      const double seconds = Seconds(start);
      phase[k] += seconds;
      total += seconds;
    }
    state.SetIterationTime(total);
    start = std::chrono::steady_clock::now();
    auto again = nm->Allocate(static_cast<int32_t>(cells));
    if (!again.ok()) {
      state.SkipWithError(std::string(again.status().message()).c_str());
      break;
    }
    allocate += Seconds(start);
    garbage = *again;
    std::shuffle(garbage.begin(), garbage.end(), rng);
  }
  const double n = 1e-6 * std::max<int64_t>(1, state.iterations());
  // prepare_us, phase0_us, ...: the step's name after the kernels' common prefix.
  const std::string prefix = "accelmem_cuda_gc_batch_";
  for (int k = 0; k < num_steps; ++k) {
    std::string step = steps[k];
    if (step.compare(0, prefix.size(), prefix) == 0) step = step.substr(prefix.size());
    state.counters[step + "_us"] = phase[k] / n;
  }
  state.counters["recycle_us"] = recycle / n;
  state.counters["allocate_us"] = allocate / n;
  state.counters["grid"] = gc->grid_dim();
  state.counters["workers"] = workers;
}

void CudaArgs(benchmark::internal::Benchmark* b) {
  for (int64_t cells : {10'000, 100'000, 1'000'000}) {
    for (int64_t bytes : {16, 64, 256, 4096}) {
      if (cells * bytes > (int64_t{1} << 30)) continue;
      b->Args({cells, bytes});
    }
  }
  b->ArgNames({"cells", "cell_bytes"})->UseManualTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_Gc_Cuda_OneMemsetLimit)->Apply(CudaArgs);
BENCHMARK(BM_Gc_Cuda_Collect)->Apply(CudaArgs);
BENCHMARK(BM_Gc_Cuda_CollectPhases)
    ->ArgNames({"cells", "cell_bytes", "grid"})
    ->Args({10'000, 64, 0})
    ->Args({10'000, 64, 4})
    ->Args({100'000, 64, 0})
    ->Args({1'000'000, 64, 0})
    ->Iterations(8)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
