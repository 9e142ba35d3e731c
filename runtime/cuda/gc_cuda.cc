#include "runtime/cuda/gc_cuda.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gc/device/gc_batch.h"
#include "gc/device/gc_scratch.h"
#include "runtime/cuda/device/cuda_entry_points.h"
#include "runtime/cuda/gc_cuda_kernels_bitcode.h"
#include "runtime/cuda/ptx_codegen.h"
#include "runtime/runtime_bitcode.h"
#include "sparse_runtime/device/node_manager.h"
#include "sparse_runtime/device/runtime_memory.h"

namespace accelmem {
namespace runtime {
namespace cuda {
namespace {

using gc::GcScratch;
using gc::kMaxGcWorkers;

// Indices into CudaGcKernelNames(): kernel_<name>, in the order of the entry-point list.
enum Kernel : int {
#define ACCELMEM_CUDA_KERNEL_INDEX(name, params) kernel_##name,
  ACCELMEM_CUDA_GC_ENTRY_POINTS(ACCELMEM_CUDA_KERNEL_INDEX)
#undef ACCELMEM_CUDA_KERNEL_INDEX
      kNumKernels,
};

// The steps of a collection in launch order: their kernels and who runs them.
struct Step {
  Kernel kernel;
  gc::GcRunner runner;
};
constexpr Step kSteps[] = {
#define ACCELMEM_CUDA_GC_STEP(step, runner, unused) \
  {kernel_accelmem_cuda_gc_batch_##step, gc::runner},
    ACCELMEM_GC_BATCH_STEPS(ACCELMEM_CUDA_GC_STEP, _)
#undef ACCELMEM_CUDA_GC_STEP
};
constexpr int kNumSteps = sizeof(kSteps) / sizeof(kSteps[0]);

constexpr uint64_t kAlign = 256;
uint64_t RoundUp(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

absl::string_view KernelBitcode() {
  const gc_cuda_kernels_bitcode_file* file = gc_cuda_kernels_bitcode_find("gc_cuda_kernels.bc");
  if (file == nullptr) return {};  // embedded by the BUILD rule; missing is a build defect
  return absl::string_view(reinterpret_cast<const char*>(file->data), file->size);
}

}  // namespace

const std::vector<std::string>& CudaGcKernelNames() {
#define ACCELMEM_CUDA_ENTRY_POINT_NAME(name, params) #name,
  static const std::vector<std::string>* names =
      new std::vector<std::string>{ACCELMEM_CUDA_GC_ENTRY_POINTS(ACCELMEM_CUDA_ENTRY_POINT_NAME)};
#undef ACCELMEM_CUDA_ENTRY_POINT_NAME
  return *names;
}

const std::vector<std::string>& CudaGc::StepKernelNames() {
  static const std::vector<std::string>* names = [] {
    auto* v = new std::vector<std::string>();
    for (const Step& step : kSteps) v->push_back(CudaGcKernelNames()[step.kernel]);
    return v;
  }();
  return *names;
}

absl::StatusOr<std::string> CudaGcPtx(const std::string& sm) {
  PtxOptions options;
  options.sm = sm;
  return CompileBitcodeToPtx(KernelBitcode(), "gc_cuda_kernels.bc", CudaGcKernelNames(),
                             runtime::RuntimeBitcode(runtime::RuntimeArch::kCuda), options);
}

absl::StatusOr<std::unique_ptr<CudaGc>> CudaGc::Create(CudaDriver* driver,
                                                       const CudaGcLaunch& launch) {
  if (driver == nullptr) return absl::InvalidArgumentError("CudaGc needs a CUDA driver");
  if (launch.block_dim < 1 || launch.block_dim > 1024 || launch.grid_dim < 0 ||
      launch.phase1_block_dim < 1 || launch.phase1_block_dim > 1024) {
    return absl::InvalidArgumentError(absl::StrCat("bad CUDA GC launch shape: grid ",
                                                   launch.grid_dim, ", block ", launch.block_dim,
                                                   ", phase-1 block ", launch.phase1_block_dim));
  }
  auto ptx = CudaGcPtx(driver->sm());
  if (!ptx.ok()) return ptx.status();
  std::unique_ptr<CudaGc> gc(new CudaGc());
  gc->driver_ = driver;
  auto module = driver->LoadPtx(*ptx);
  if (!module.ok()) return module.status();
  gc->module_ = *module;
  for (const std::string& name : CudaGcKernelNames()) {
    auto function = driver->GetFunction(gc->module_, name);
    if (!function.ok()) return function.status();
    gc->functions_.push_back(*function);
  }
  gc->block_dim_ = launch.block_dim;
  gc->phase1_block_dim_ = launch.phase1_block_dim;
  gc->grid_dim_ =
      launch.grid_dim > 0 ? launch.grid_dim : std::max(1, driver->multiprocessor_count()) * 8;
  gc->phase0_workers_ =
      static_cast<int>(std::min<int64_t>(int64_t{gc->grid_dim_} * gc->block_dim_, kMaxGcWorkers));

  // The host and device views of the shared structs must agree.
  auto out = driver->Allocate(4 * sizeof(int64_t));
  if (!out.ok()) return out.status();
  DevicePtr out_ptr = *out;
  void* params[] = {&out_ptr};
  absl::Status status =
      driver->Launch(gc->functions_[kernel_accelmem_cuda_layout], {1, 1, 1}, {1, 1, 1}, params);
  int64_t sizes[4] = {};
  if (status.ok()) status = driver->Synchronize();
  if (status.ok()) status = driver->CopyToHost(sizes, out_ptr, sizeof(sizes));
  driver->Free(out_ptr).IgnoreError();
  if (!status.ok()) return status;
  auto entry = driver->Allocate(sizeof(gc::GcBatchEntry));
  if (!entry.ok()) return entry.status();
  gc->single_entry_ = *entry;
  const int64_t expected[4] = {sizeof(sparse_runtime::RuntimeMemory),
                               sizeof(sparse_runtime::NodeManager), sizeof(GcScratch),
                               sizeof(gc::GcBatchEntry)};
  if (std::memcmp(sizes, expected, sizeof(sizes)) != 0) {
    return absl::InternalError(absl::StrCat(
        "host and device disagree on struct sizes (RuntimeMemory, NodeManager, GcScratch, "
        "GcBatchEntry): host ",
        absl::StrJoin(expected, "/"), ", device ", absl::StrJoin(sizes, "/")));
  }
  return gc;
}

absl::StatusOr<void*> CudaGc::Function(const std::string& name) const {
  const auto& names = CudaGcKernelNames();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return functions_[i];
  }
  return absl::NotFoundError(absl::StrCat("no CUDA GC kernel '", name, "'"));
}

CudaGc::~CudaGc() {
  if (single_entry_ != 0) driver_->Free(single_entry_).IgnoreError();
}

absl::Status CudaGc::LaunchStep(int step, DevicePtr entries, int32_t n) {
  if (step < 0 || step >= kNumSteps) {
    return absl::InvalidArgumentError(absl::StrCat("no GC step ", step));
  }
  const Dim3 one{1, 1, 1};
  const Dim3 grid{static_cast<unsigned>(grid_dim_), 1, 1};
  const Dim3 block{static_cast<unsigned>(block_dim_), 1, 1};
  const Dim3 phase1_block{static_cast<unsigned>(phase1_block_dim_), 1, 1};
  Dim3 grid_shape = one, block_shape = one;
  switch (kSteps[step].runner) {
    case gc::kGcOneThread:
      break;
    case gc::kGcOneBlock:
      block_shape = phase1_block;
      break;
    case gc::kGcEveryThread:
    case gc::kGcEveryBlock:
      grid_shape = grid;
      block_shape = block;
      break;
  }
  int32_t workers = phase0_workers_;
  void* params[] = {&entries, &n, &workers};
  return driver_->Launch(functions_[kSteps[step].kernel], grid_shape, block_shape, params);
}

absl::Status CudaGc::Collect(DevicePtr node_manager, DevicePtr scratch) {
  // The table's pointers stay until rewritten (prepare writes only `active`), so collecting the
  // same manager again launches at once.
  if (node_manager != single_node_manager_ || scratch != single_scratch_) {
    gc::GcBatchEntry entry{};
    entry.nm = reinterpret_cast<sparse_runtime::NodeManager*>(node_manager);
    entry.scratch = reinterpret_cast<GcScratch*>(scratch);
    single_node_manager_ = single_scratch_ = 0;  // unknown until the copy succeeds
    if (auto s = driver_->CopyToDevice(single_entry_, &entry, sizeof(entry)); !s.ok()) return s;
    single_node_manager_ = node_manager;
    single_scratch_ = scratch;
  }
  return CollectBatch(single_entry_, 1);
}

absl::Status CudaGc::CollectBatch(DevicePtr entries, int32_t n) {
  if (n <= 0) return absl::OkStatus();
  // A kernel boundary is the grid-wide barrier between two steps.
  for (int step = 0; step < kNumSteps; ++step) {
    if (auto s = LaunchStep(step, entries, n); !s.ok()) return s;
  }
  return driver_->Synchronize();
}

absl::StatusOr<CudaNodeManagerStats> CudaGc::Stats(DevicePtr node_manager, DevicePtr scratch_out) {
  void* params[] = {&node_manager, &scratch_out};
  const Dim3 one{1, 1, 1};
  if (auto s = driver_->Launch(functions_[kernel_accelmem_cuda_nm_stats], one, one, params);
      !s.ok())
    return s;
  if (auto s = driver_->Synchronize(); !s.ok()) return s;
  int32_t values[5] = {};
  if (auto s = driver_->CopyToHost(values, scratch_out, sizeof(values)); !s.ok()) return s;
  CudaNodeManagerStats stats;
  stats.reserved = values[0];
  stats.free = values[1];
  stats.recycled = values[2];
  stats.in_use = values[3];
  stats.error_code = values[4];
  return stats;
}

// ---------------------------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<CudaNodeManager>> CudaNodeManager::Create(
    CudaGc* gc, uint64_t node_size, uint64_t pool_bytes, int32_t chunk_num_elements) {
  if (gc == nullptr) return absl::InvalidArgumentError("CudaNodeManager needs a CudaGc");
  std::unique_ptr<CudaNodeManager> nm(new CudaNodeManager());
  nm->gc_ = gc;
  nm->driver_ = gc->driver();
  // Layout of the one allocation: NodeManager | GcScratch | GcBatchEntry | RuntimeMemory | io |
  // pool.
  const uint64_t nm_off = 0;
  const uint64_t scratch_off = RoundUp(nm_off + sizeof(sparse_runtime::NodeManager), kAlign);
  const uint64_t entry_off = RoundUp(scratch_off + sizeof(GcScratch), kAlign);
  const uint64_t memory_off = RoundUp(entry_off + sizeof(gc::GcBatchEntry), kAlign);
  const uint64_t io_off = RoundUp(memory_off + sizeof(sparse_runtime::RuntimeMemory), kAlign);
  const uint64_t pool_off = RoundUp(io_off + 64, kAlign);
  const uint64_t total = pool_off + pool_bytes;
  auto base = nm->driver_->Allocate(total);
  if (!base.ok()) return base.status();
  nm->base_ = *base;
  // Everything starts zero: the structs are zero-initialized and the pool must be zero-filled.
  if (auto s = nm->driver_->Memset(nm->base_, 0, total); !s.ok()) return s;
  nm->node_manager_ = nm->base_ + nm_off;
  nm->scratch_ = nm->base_ + scratch_off;
  nm->batch_entry_ = nm->base_ + entry_off;
  nm->memory_ = nm->base_ + memory_off;
  nm->io_ = nm->base_ + io_off;
  DevicePtr pool = nm->base_ + pool_off;
  int32_t chunk = chunk_num_elements;
  DevicePtr ok_ptr = nm->io_;
  void* params[] = {&nm->memory_, &pool,  &pool_bytes, &nm->node_manager_,
                    &node_size,   &chunk, &ok_ptr};
  if (auto s = nm->Run("accelmem_cuda_nm_init", 1, params); !s.ok()) return s;
  int32_t ok = 0;
  if (auto s = nm->driver_->CopyToHost(&ok, ok_ptr, sizeof(ok)); !s.ok()) return s;
  if (ok != 1) {
    return absl::InvalidArgumentError(absl::StrCat("device NodeManager init failed (node size ",
                                                   node_size, ", chunk ", chunk_num_elements,
                                                   ", pool ", pool_bytes, " bytes)"));
  }
  sparse_runtime::NodeManager host_copy{};
  if (auto s = nm->driver_->CopyToHost(&host_copy, nm->node_manager_, sizeof(host_copy)); !s.ok()) {
    return s;
  }
  nm->element_size_ = host_copy.element_size;
  // The one-entry table of Collect, written once: the batch kernels collect the manager in place.
  gc::GcBatchEntry entry{};
  entry.nm = reinterpret_cast<sparse_runtime::NodeManager*>(nm->node_manager_);
  entry.scratch = reinterpret_cast<GcScratch*>(nm->scratch_);
  if (auto s = nm->driver_->CopyToDevice(nm->batch_entry_, &entry, sizeof(entry)); !s.ok()) {
    return s;
  }
  return nm;
}

uint64_t CudaNodeManager::PoolBytesFor(uint64_t node_size, int64_t cells,
                                       int32_t chunk_num_elements) {
  using sparse_runtime::NodeManager;
  auto next_power_of_two = [](uint64_t n) {
    uint64_t p = 64;
    while (p < n) p *= 2;
    return p;
  };
  // As NodeManager::init: the cell stride and the chunk halved while it exceeds kMaxChunkBytes.
  const uint64_t element = RoundUp(std::max<uint64_t>(node_size, 8), 8);
  uint64_t chunk = std::max<int32_t>(chunk_num_elements, 1);
  while (chunk > 1 && chunk * element > NodeManager::kMaxChunkBytes) chunk /= 2;
  const uint64_t n = static_cast<uint64_t>(std::max<int64_t>(cells, 1));
  const uint64_t data_chunks = (n + chunk - 1) / chunk;
  const uint64_t data_bytes = data_chunks * 2 * next_power_of_two(chunk * element);
  const uint64_t index_chunk =
      std::max<uint64_t>(chunk, static_cast<uint64_t>(NodeManager::kMinIndexListChunk));
  const uint64_t index_chunks = (n + index_chunk - 1) / index_chunk;
  const uint64_t index_bytes =
      2 * index_chunks * 2 * next_power_of_two(index_chunk * sizeof(NodeManager::list_data_type));
  return data_bytes + index_bytes + (uint64_t{64} << 20);
}

CudaNodeManager::~CudaNodeManager() {
  if (base_ != 0) driver_->Free(base_).IgnoreError();
}

absl::Status CudaNodeManager::Run(const char* kernel, int threads, void** params,
                                  bool one_block_per_item) {
  auto function = gc_->Function(kernel);
  if (!function.ok()) return function.status();
  const unsigned block = 128;
  unsigned grid = 1;
  if (one_block_per_item) {
    grid = static_cast<unsigned>(std::clamp(threads, 1, 65535));
  } else {
    grid = static_cast<unsigned>(std::clamp((threads + 127) / 128, 1, 65535));
  }
  Dim3 block_dim{threads <= 1 && !one_block_per_item ? 1u : block, 1, 1};
  if (auto s = driver_->Launch(*function, {grid, 1, 1}, block_dim, params); !s.ok()) return s;
  return driver_->Synchronize();
}

absl::StatusOr<DevicePtr> CudaNodeManager::Upload(absl::Span<const int32_t> values) {
  auto buffer = driver_->Allocate(std::max<size_t>(1, values.size()) * sizeof(int32_t));
  if (!buffer.ok()) return buffer.status();
  if (!values.empty()) {
    if (auto s = driver_->CopyToDevice(*buffer, values.data(), values.size() * sizeof(int32_t));
        !s.ok()) {
      driver_->Free(*buffer).IgnoreError();
      return s;
    }
  }
  return *buffer;
}

absl::StatusOr<std::vector<int32_t>> CudaNodeManager::RunIndexKernel(const char* kernel,
                                                                     int32_t n) {
  std::vector<int32_t> indices(n);
  if (n == 0) return indices;
  auto out = driver_->Allocate(n * sizeof(int32_t));
  if (!out.ok()) return out.status();
  DevicePtr out_ptr = *out;
  void* params[] = {&node_manager_, &out_ptr, &n};
  absl::Status status = Run(kernel, n, params);
  if (status.ok()) status = driver_->CopyToHost(indices.data(), out_ptr, n * sizeof(int32_t));
  driver_->Free(out_ptr).IgnoreError();
  if (!status.ok()) return status;
  return indices;
}

absl::Status CudaNodeManager::RunOnIndices(const char* kernel, absl::Span<const int32_t> indices,
                                           void* extra, bool one_block_per_item) {
  if (indices.empty()) return absl::OkStatus();
  auto in = Upload(indices);
  if (!in.ok()) return in.status();
  DevicePtr in_ptr = *in;
  int32_t n = static_cast<int32_t>(indices.size());
  void* params[] = {&node_manager_, &in_ptr, &n, extra};
  absl::Status status = Run(kernel, n, params, one_block_per_item);
  driver_->Free(in_ptr).IgnoreError();
  return status;
}

absl::StatusOr<std::vector<int32_t>> CudaNodeManager::Allocate(int32_t n) {
  if (n < 0) return absl::InvalidArgumentError("negative cell count");
  auto indices = RunIndexKernel("accelmem_cuda_nm_allocate", n);
  if (!indices.ok() || n == 0) return indices;
  auto stats = GetStats();
  if (!stats.ok()) return stats.status();
  if (stats->error_code != sparse_runtime::kRuntimeOk) {
    return absl::ResourceExhaustedError(absl::StrCat("device NodeManager could not allocate ", n,
                                                     " cells (runtime error ", stats->error_code,
                                                     ")"));
  }
  return indices;
}

absl::Status CudaNodeManager::Recycle(absl::Span<const int32_t> indices) {
  return RunOnIndices("accelmem_cuda_nm_recycle", indices, nullptr, false);
}

absl::Status CudaNodeManager::Fill(absl::Span<const int32_t> indices, uint8_t value) {
  uint32_t v = value;
  return RunOnIndices("accelmem_cuda_nm_fill", indices, &v, /*one_block_per_item=*/true);
}

absl::StatusOr<uint64_t> CudaNodeManager::CountNonZeroBytes(absl::Span<const int32_t> indices) {
  if (indices.empty()) return uint64_t{0};
  DevicePtr count_ptr = io_ + 32;
  if (auto s = driver_->Memset(count_ptr, 0, sizeof(uint64_t)); !s.ok()) return s;
  if (auto s = RunOnIndices("accelmem_cuda_nm_count_nonzero", indices, &count_ptr,
                            /*one_block_per_item=*/true);
      !s.ok()) {
    return s;
  }
  uint64_t count = 0;
  if (auto s = driver_->CopyToHost(&count, count_ptr, sizeof(count)); !s.ok()) return s;
  return count;
}

absl::StatusOr<CudaNodeManager::Stats> CudaNodeManager::GetStats() {
  return gc_->Stats(node_manager_, io_);
}

absl::StatusOr<std::vector<int32_t>> CudaNodeManager::FreeIndices() {
  auto stats = GetStats();
  if (!stats.ok()) return stats.status();
  return RunIndexKernel("accelmem_cuda_nm_free_indices", stats->free);
}

absl::Status CudaNodeManager::Collect() {
  if (auto s = gc_->CollectBatch(batch_entry_, 1); !s.ok()) return s;
  auto stats = GetStats();
  if (!stats.ok()) return stats.status();
  if (stats->error_code != sparse_runtime::kRuntimeOk) {
    return absl::InternalError(
        absl::StrCat("device GC recorded runtime error ", stats->error_code));
  }
  return absl::OkStatus();
}

}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem
