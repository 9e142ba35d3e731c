// File: runtime/cuda/gc_cuda.h
//
// The CUDA GC driver: one collection of device-resident NodeManagers as upstream launches it
// (codegen_cuda.cpp): phase 0 "gather_list" on a grid of 64-thread blocks, phase 1 "reinit_lists"
// on one block (upstream: one thread; here the block's threads count the bitmap together), phase 2
// "zero_fill" on the same grid; the kernel boundaries are the grid-wide barriers. A one-thread
// "prepare" launch first grows the GC scratch (bitmap, bucket table) from each NodeManager's own
// device pool. The launches are the steps of gc/device/gc_batch.h's ACCELMEM_GC_BATCH_STEPS, in
// its order, over a table of NodeManagers: CollectBatch collects a whole table with the same four
// launches (upstream: four per SNode, #6594), and one NodeManager is collected as a table of one
// (so there is one set of kernels, the batch's).
//
// The kernels are the phase sources of gc/ compiled to nvptx64 (gc_cuda_kernels.cc, linked with
// the runtime's runtime_cuda.bc) and lowered to PTX by //runtime/cuda:ptx_codegen; libcuda is
// loaded at run time by //runtime/cuda:driver. So everything here builds and compiles its PTX on
// machines without a GPU (CudaGcPtx; the default test suite assembles it with ptxas), and only
// running it needs a device (CudaDriver::Open says clearly when there is none).
//
//   ASSIGN_OR_RETURN(auto driver, runtime::cuda::CudaDriver::Open());
//   ASSIGN_OR_RETURN(auto gc, CudaGc::Create(driver.get()));
//   ASSIGN_OR_RETURN(auto nm, CudaNodeManager::Create(gc.get(), /*node_size=*/64, 1 << 30));
//   ASSIGN_OR_RETURN(std::vector<int32_t> cells, nm->Allocate(1 << 20));
//   RETURN_IF_ERROR(nm->Recycle(cells));
//   RETURN_IF_ERROR(nm->Collect());  // cells are zeroed and free again
#ifndef ACCELMEM_RUNTIME_CUDA_GC_CUDA_H_
#define ACCELMEM_RUNTIME_CUDA_GC_CUDA_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/cuda/driver.h"

namespace accelmem {
namespace runtime {
namespace cuda {

// Launch shape of the two parallel phases (upstream: grid = saturating grid, block = 64).
struct CudaGcLaunch {
  int grid_dim = 0;    // 0: 8 blocks per multiprocessor
  int block_dim = 64;  // lanes per block in phase 2
  // Threads of phase 1's one block (1: upstream's single thread). 256 counts 10^6 cells' bitmap
  // (31k words) in about 16 loads of 8 words a thread.
  int phase1_block_dim = 256;
};

// The GC entry points (extern "C" kernels of gc_cuda_kernels.cc), in launch order first.
const std::vector<std::string>& CudaGcKernelNames();

// PTX of every GC kernel for `sm` (no GPU needed).
absl::StatusOr<std::string> CudaGcPtx(const std::string& sm = "sm_90");

// Allocator counts of a device NodeManager (as NodeManager's num_* queries) and its runtime error.
struct CudaNodeManagerStats {
  int32_t reserved = 0;
  int32_t free = 0;
  int32_t recycled = 0;
  int32_t in_use = 0;
  int32_t error_code = 0;
};

// The loaded GC module of one CudaDriver (which must outlive it). Not thread-safe: its launches
// share the driver's stream and Collect's one-entry table.
class CudaGc {
 public:
  static absl::StatusOr<std::unique_ptr<CudaGc>> Create(CudaDriver* driver,
                                                        const CudaGcLaunch& launch = {});
  ~CudaGc();
  CudaGc(const CudaGc&) = delete;
  CudaGc& operator=(const CudaGc&) = delete;

  // Collects the NodeManager at device address `node_manager` with the zero-initialized (or
  // previously used) GcScratch at `scratch`, and waits for it: a batch of one, over a one-entry
  // table that this CudaGc keeps in device memory and rewrites (one small copy) only when the
  // pair differs from the previous call's. A NodeManager without recycled cells is left as it is.
  // A runtime error recorded on the device (a bad recycled index, out of memory) is left in the
  // NodeManager's RuntimeMemory.
  absl::Status Collect(DevicePtr node_manager, DevicePtr scratch);
  // Collects, in one pass of four launches (gc/device/gc_batch.h), every NodeManager with
  // recycled cells of the `n` gc::GcBatchEntry records at device address `entries` (each with its
  // own scratch), and waits for it. Errors as Collect.
  absl::Status CollectBatch(DevicePtr entries, int32_t n);

  // The steps of a collection in launch order (ACCELMEM_GC_BATCH_STEPS): their kernel names.
  static const std::vector<std::string>& StepKernelNames();
  // Launches step `step` (an index into StepKernelNames()) of a collection of the table at
  // `entries` with its launch shape, without waiting: to time the steps one by one (a collection
  // is every step in order; CollectBatch then synchronizes).
  absl::Status LaunchStep(int step, DevicePtr entries, int32_t n);

  CudaDriver* driver() const { return driver_; }
  int grid_dim() const { return grid_dim_; }
  int block_dim() const { return block_dim_; }
  int phase1_block_dim() const { return phase1_block_dim_; }
  // Phase-0 workers: min(grid threads, kMaxGcWorkers).
  int phase0_workers() const { return phase0_workers_; }
  // Reads the counts of the NodeManager at `node_manager` (one thread), using 20 bytes of device
  // memory at `scratch_out`.
  absl::StatusOr<CudaNodeManagerStats> Stats(DevicePtr node_manager, DevicePtr scratch_out);
  // The device function of `name` (one of CudaGcKernelNames()).
  absl::StatusOr<void*> Function(const std::string& name) const;

 private:
  CudaGc() = default;

  CudaDriver* driver_ = nullptr;
  void* module_ = nullptr;
  std::vector<void*> functions_;  // parallel to CudaGcKernelNames()
  int grid_dim_ = 0;
  int block_dim_ = 0;
  int phase1_block_dim_ = 1;
  int phase0_workers_ = 0;
  // Collect's one-entry gc::GcBatchEntry table, and the pair it holds (0: not written yet).
  DevicePtr single_entry_ = 0;
  DevicePtr single_node_manager_ = 0;
  DevicePtr single_scratch_ = 0;
};

// A NodeManager in device memory: its RuntimeMemory, the NodeManager, a GcScratch, its one-entry
// gc::GcBatchEntry table (so Collect launches the batch of one without writing a table first)
// and one zero-filled pool from which every chunk and table is drawn, all in one device
// allocation that the destructor frees. Allocation and recycling run as kernels (one thread a
// cell), so the device-side NodeManager code (atomics, locked chunk growth) is what is exercised.
class CudaNodeManager {
 public:
  using Stats = CudaNodeManagerStats;

  static absl::StatusOr<std::unique_ptr<CudaNodeManager>> Create(
      CudaGc* gc, uint64_t node_size, uint64_t pool_bytes, int32_t chunk_num_elements = 16384);
  // A pool size that holds `cells` cells of `node_size` bytes with chunks of
  // `chunk_num_elements` cells: every data and index-list chunk with its worst-case alignment
  // padding (a chunk is aligned to the power of two at or above its size: a 16384-cell chunk of
  // 4 KiB cells takes 64 MiB and may need up to 64 MiB more to reach its alignment), plus 64 MiB
  // for the chunk tables and the GC scratch.
  static uint64_t PoolBytesFor(uint64_t node_size, int64_t cells,
                               int32_t chunk_num_elements = 16384);
  ~CudaNodeManager();
  CudaNodeManager(const CudaNodeManager&) = delete;
  CudaNodeManager& operator=(const CudaNodeManager&) = delete;

  // Allocates n cells; the indices in allocation order. ResourceExhausted if the pool ran out.
  absl::StatusOr<std::vector<int32_t>> Allocate(int32_t n);
  absl::Status Recycle(absl::Span<const int32_t> indices);
  // Writes `value` into every byte of the given cells.
  absl::Status Fill(absl::Span<const int32_t> indices, uint8_t value);
  // Non-zero bytes in the given cells.
  absl::StatusOr<uint64_t> CountNonZeroBytes(absl::Span<const int32_t> indices);
  absl::StatusOr<Stats> GetStats();
  // The free list's entries not handed out yet, in list order.
  absl::StatusOr<std::vector<int32_t>> FreeIndices();
  // One collection (CudaGc::CollectBatch of this manager's one-entry table); then checks the
  // device's error code.
  absl::Status Collect();

  uint64_t element_size() const { return element_size_; }
  DevicePtr node_manager() const { return node_manager_; }
  DevicePtr scratch() const { return scratch_; }
  // The one-entry gc::GcBatchEntry table {node_manager(), scratch()} (for CudaGc::CollectBatch).
  DevicePtr batch_entry() const { return batch_entry_; }

 private:
  CudaNodeManager() = default;
  absl::Status Run(const char* kernel, int threads, void** params, bool one_block_per_item = false);
  absl::StatusOr<DevicePtr> Upload(absl::Span<const int32_t> values);
  // Runs `kernel(nm, i32* out, n)` on n threads and returns out[0..n).
  absl::StatusOr<std::vector<int32_t>> RunIndexKernel(const char* kernel, int32_t n);
  // Uploads `indices` and runs `kernel(nm, const i32* indices, n[, *extra])` over them.
  absl::Status RunOnIndices(const char* kernel, absl::Span<const int32_t> indices, void* extra,
                            bool one_block_per_item);

  CudaGc* gc_ = nullptr;
  CudaDriver* driver_ = nullptr;
  DevicePtr base_ = 0;          // the one allocation
  DevicePtr node_manager_ = 0;  // NodeManager
  DevicePtr scratch_ = 0;       // GcScratch
  DevicePtr batch_entry_ = 0;   // gc::GcBatchEntry {node_manager_, scratch_}
  DevicePtr memory_ = 0;        // RuntimeMemory
  DevicePtr io_ = 0;            // small results (stats, counters)
  uint64_t element_size_ = 0;
};

}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_CUDA_GC_CUDA_H_
