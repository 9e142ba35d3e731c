// gc_bench's CUDA rows (linked into //benchmarks:gc_bench only with --config=gpu): the device GC
// (//runtime/cuda:gc_cuda: prepare, phase 0 on the grid, phase 1 on one thread, phase 2 on the
// grid) of N recycled cells of `cell_bytes` scattered over a device NodeManager of 2N cells (a
// random half, recycled in random order), against the limit: one cuMemsetD8 of the same N *
// cell_bytes bytes.
//   BM_Gc_Cuda_OneMemsetLimit   the limit
//   BM_Gc_Cuda_Collect          one collection (the four launches and the final synchronize)
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
  // 2N cells in chunks of the default 16384 cells (64 MiB, 64 MiB-aligned at 4 KiB cells).
  const uint64_t pool = CudaNodeManager::PoolBytesFor(bytes, 2 * cells);
  auto nm = CudaNodeManager::Create(device.gc.get(), bytes, pool);
  if (!nm.ok()) {
    state.SkipWithError(std::string(nm.status().message()).c_str());
    return;
  }
  auto all = (*nm)->Allocate(static_cast<int32_t>(2 * cells));
  if (!all.ok()) {
    state.SkipWithError(std::string(all.status().message()).c_str());
    return;
  }
  std::mt19937_64 rng(cells * 7 + bytes);
  std::vector<int32_t> garbage = *all;
  std::shuffle(garbage.begin(), garbage.end(), rng);
  garbage.resize(cells);
  double limit = 0;
  if (auto scratch = device.driver->Allocate(cells * bytes); scratch.ok()) {
    limit = MemsetSeconds(device.driver.get(), *scratch, cells * bytes);
    device.driver->Free(*scratch).IgnoreError();
  }
  double total = 0;
  for (auto _ : state) {
    if (!(*nm)->Recycle(garbage).ok()) {
      state.SkipWithError("recycle failed");
      break;
    }
    const auto start = std::chrono::steady_clock::now();
    if (!device.gc->Collect((*nm)->node_manager(), (*nm)->scratch()).ok()) {
      state.SkipWithError("collection failed");
      break;
    }
    const double seconds = Seconds(start);
    total += seconds;
    state.SetIterationTime(seconds);
    auto again = (*nm)->Allocate(static_cast<int32_t>(cells));  // the collected cells, reused
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

}  // namespace
