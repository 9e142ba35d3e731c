#include "runtime/cuda/device_runtime.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gc/device/gc_batch.h"
#include "gc/device/gc_scratch.h"
#include "kernel_abi/kernel_abi.h"
#include "llvm/IR/Module.h"
#include "runtime/cuda/device/cuda_entry_points.h"
#include "runtime/cuda/device/device_runtime_abi.h"
#include "runtime/cuda/device_runtime_kernels_bitcode.h"
#include "runtime/cuda/ptx_codegen.h"
#include "runtime/kernel_context.h"
#include "runtime/runtime_bitcode.h"
#include "runtime/sparse_runtime.h"
#include "sparse_runtime/device/runtime_context.h"
#include "sparse_runtime/device/snode_kind_table.h"
#include "sparse_runtime/device/struct_meta.h"

namespace accelmem {
namespace runtime {
namespace cuda {
namespace {

using sparse_runtime::RuntimeContext;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;
using sparse_runtime::StructMeta;

constexpr uint64_t kAlign = 256;
uint64_t RoundUp(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

// Every meta struct fits in this many bytes (the host runtime's meta union holds the largest): the
// largest Meta of the kinds' table.
#define ACCELMEM_META_SIZE(Kind, kind, Meta, ...) sizeof(sparse_runtime::Meta),
constexpr uint64_t kMetaBytes = std::max({ACCELMEM_SNODE_KINDS(ACCELMEM_META_SIZE)});
#undef ACCELMEM_META_SIZE

absl::string_view KernelBitcode() {
  const device_runtime_kernels_bitcode_file* file =
      device_runtime_kernels_bitcode_find("device_runtime_kernels.bc");
  if (file == nullptr) return {};  // embedded by the BUILD rule; missing is a build defect
  return absl::string_view(reinterpret_cast<const char*>(file->data), file->size);
}

absl::StatusOr<std::string> CompileModule(llvm::Module& module,
                                          const std::vector<std::string>& entries,
                                          const std::string& sm) {
  PtxOptions options;
  options.sm = sm;
  return CompileToPtx(module, entries, runtime::RuntimeBitcode(runtime::RuntimeArch::kCuda),
                      options);
}

}  // namespace

namespace internal {

uint64_t DeviceMetaSlotBytes() { return RoundUp(kMetaBytes, 64); }

std::vector<unsigned char> DeviceMetaStructs(SparseRuntime& host, const SNodeTree& tree,
                                             uint64_t device_context) {
  const uint64_t slot_bytes = DeviceMetaSlotBytes();
  const int n = tree.num_snodes();
  std::vector<unsigned char> structs(static_cast<size_t>(n) * slot_bytes, 0);
  for (int id = 0; id < n; ++id) {
    unsigned char* slot = structs.data() + id * slot_bytes;
    std::memcpy(slot, host.meta(tree.snode(id)), kMetaBytes);
    StructMeta* meta = reinterpret_cast<StructMeta*>(slot);
    meta->context = reinterpret_cast<RuntimeContext*>(device_context);
    meta->lookup_element = nullptr;
    meta->from_parent_element = nullptr;
    meta->is_active = nullptr;
    meta->get_num_elements = nullptr;
    if (tree.snode(id).type() == sparse_runtime::SNodeType::kPointer) {
      // Host addresses: the device's data lists are chunked, so it takes the chunk-table path.
      reinterpret_cast<sparse_runtime::PointerMeta*>(slot)->cell_origin = 0;
    }
  }
  return structs;
}

}  // namespace internal

const std::vector<std::string>& DeviceRuntimeKernelNames() {
#define ACCELMEM_CUDA_ENTRY_POINT_NAME(name, params) #name,
  static const std::vector<std::string>* names = new std::vector<std::string>{
      ACCELMEM_CUDA_RUNTIME_ENTRY_POINTS(ACCELMEM_CUDA_ENTRY_POINT_NAME)};
#undef ACCELMEM_CUDA_ENTRY_POINT_NAME
  return *names;
}

absl::StatusOr<std::string> DeviceRuntimePtx(const std::string& sm) {
  PtxOptions options;
  options.sm = sm;
  return CompileBitcodeToPtx(KernelBitcode(), "device_runtime_kernels.bc",
                             DeviceRuntimeKernelNames(),
                             runtime::RuntimeBitcode(runtime::RuntimeArch::kCuda), options);
}

// The offsets of everything in the runtime's one device allocation: context | kernel context |
// metas[] | ambients[] | meta structs | scratches | GC table | specs | init output | io | pool.
struct CudaSparseRuntime::Layout {
  Layout(int32_t n, size_t num_specs, uint64_t pool_bytes) {
    uint64_t at = 0;
    auto take = [&](uint64_t bytes) {
      const uint64_t offset = at;
      at = RoundUp(at + std::max<uint64_t>(bytes, 1), kAlign);
      return offset;
    };
    num_snodes = n;
    context = take(sizeof(RuntimeContext));
    kernel_context = take(sizeof(kernel_abi::KernelContext));
    metas = take(n * sizeof(uint64_t));
    ambients = take(n * sizeof(uint64_t));
    meta_slot = internal::DeviceMetaSlotBytes();
    structs = take(n * meta_slot);
    scratch_slot = RoundUp(sizeof(gc::GcScratch), 64);
    scratches = take(num_specs * scratch_slot);
    gc_table = take(num_specs * sizeof(gc::GcBatchEntry));
    specs = take(num_specs * sizeof(DeviceAllocatorSpec));
    init_out = take((2 + 2 * static_cast<uint64_t>(n)) * sizeof(uint64_t));
    io = take(64 + kDeviceErrorMessageBytes);
    pool = take(0);
    total = pool + pool_bytes;
  }
  int32_t num_snodes;
  uint64_t context, kernel_context, metas, ambients, meta_slot, structs, scratch_slot, scratches,
      gc_table, specs, init_out, io, pool, total;
};

namespace {

// One spec per SNode with an allocator, as the host runtime of the same tree made them.
std::vector<DeviceAllocatorSpec> AllocatorSpecs(SparseRuntime& host, int32_t n,
                                                const CudaSparseRuntimeOptions& options) {
  std::vector<DeviceAllocatorSpec> specs;
  for (int id = 0; id < n; ++id) {
    const sparse_runtime::NodeManager* nm = host.context()->node_managers[id];
    if (nm == nullptr) continue;
    DeviceAllocatorSpec spec{};
    spec.snode_id = id;
    spec.chunk_num_elements = options.chunk_num_elements;
    spec.max_num_chunks = options.max_num_chunks;
    spec.node_size = nm->node_size;
    spec.alignment = nm->alignment;
    specs.push_back(spec);
  }
  return specs;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaSparseRuntime>> CudaSparseRuntime::Create(
    CudaGc* gc, const SNodeTree& tree, uint64_t pool_bytes,
    const CudaSparseRuntimeOptions& options) {
  if (gc == nullptr) return absl::InvalidArgumentError("CudaSparseRuntime needs a CudaGc");
  if (options.block_dim < 1 || options.block_dim > 1024 || options.grid_dim < 0) {
    return absl::InvalidArgumentError("bad launch shape");
  }
  // The host runtime of the same tree supplies the meta structs (pure data once the host
  // function pointers are cleared: the runtime never calls through them) and allocator specs.
  runtime::SparseRuntimeOptions host_options;
  host_options.chunk_num_elements = options.chunk_num_elements;
  host_options.max_num_chunks = options.max_num_chunks;
  host_options.auto_collect = false;
  host_options.num_threads = 1;
  auto host = SparseRuntime::Create(tree, host_options);
  if (!host.ok()) return host.status();

  std::unique_ptr<CudaSparseRuntime> rt(new CudaSparseRuntime());
  rt->gc_ = gc;
  rt->driver_ = gc->driver();
  rt->tree_ = &tree;
  rt->options_ = options;
  rt->grid_dim_ = options.grid_dim > 0 ? options.grid_dim
                                       : std::max(1, rt->driver_->multiprocessor_count()) * 8;
  CudaDriver* driver = rt->driver_;

  auto ptx = DeviceRuntimePtx(driver->sm());
  if (!ptx.ok()) return ptx.status();
  auto module = driver->LoadPtx(*ptx);
  if (!module.ok()) return module.status();
  rt->runtime_module_ = *module;

  const int32_t n = tree.num_snodes();
  const std::vector<DeviceAllocatorSpec> specs = AllocatorSpecs(**host, n, options);
  const Layout layout(n, specs.size(), pool_bytes);
  auto base = driver->Allocate(layout.total);
  if (!base.ok()) return base.status();
  rt->base_ = *base;
  if (auto s = driver->Memset(rt->base_, 0, layout.total); !s.ok()) return s;
  rt->context_ = rt->base_ + layout.context;
  rt->kernel_context_ = rt->base_ + layout.kernel_context;
  rt->io_ = rt->base_ + layout.io;

  if (auto s = rt->CheckContextLayout(); !s.ok()) return s;
  auto init_out = rt->InitOnDevice(layout, specs, pool_bytes);
  if (!init_out.ok()) return init_out.status();
  if (auto s = rt->UploadMetas(**host, layout, *init_out); !s.ok()) return s;
  if (auto s = rt->UploadGcTable(layout, specs, *init_out); !s.ok()) return s;
  return rt;
}

absl::Status CudaSparseRuntime::CheckContextLayout() {
  auto layout = driver_->GetFunction(runtime_module_, "accelmem_cuda_runtime_layout");
  if (!layout.ok()) return layout.status();
  DevicePtr out = io_;
  void* params[] = {&out};
  if (auto s = driver_->Launch(*layout, {1, 1, 1}, {1, 1, 1}, params); !s.ok()) return s;
  if (auto s = driver_->Synchronize(); !s.ok()) return s;
  int64_t size = 0;
  if (auto s = driver_->CopyToHost(&size, out, sizeof(size)); !s.ok()) return s;
  if (size != static_cast<int64_t>(sizeof(RuntimeContext))) {
    return absl::InternalError(absl::StrCat("host and device disagree on sizeof(RuntimeContext): ",
                                            sizeof(RuntimeContext), " vs ", size));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint64_t>> CudaSparseRuntime::InitOnDevice(
    const Layout& layout, const std::vector<DeviceAllocatorSpec>& specs, uint64_t pool_bytes) {
  const int32_t n = layout.num_snodes;
  if (!specs.empty()) {
    if (auto s = driver_->CopyToDevice(base_ + layout.specs, specs.data(),
                                       specs.size() * sizeof(DeviceAllocatorSpec));
        !s.ok()) {
      return s;
    }
  }
  auto init = driver_->GetFunction(runtime_module_, "accelmem_cuda_runtime_init");
  if (!init.ok()) return init.status();
  DevicePtr context = context_;
  DevicePtr pool = base_ + layout.pool;
  uint64_t pool_size = pool_bytes;
  int32_t num_snodes = n;
  uint64_t root_size = tree_->root_size();
  DevicePtr specs_ptr = base_ + layout.specs;
  int32_t num_specs = static_cast<int32_t>(specs.size());
  DevicePtr out = base_ + layout.init_out;
  void* params[] = {&context,   &pool,      &pool_size, &num_snodes,
                    &root_size, &specs_ptr, &num_specs, &out};
  if (auto s = driver_->Launch(*init, {1, 1, 1}, {1, 1, 1}, params); !s.ok()) return s;
  if (auto s = driver_->Synchronize(); !s.ok()) return s;
  std::vector<uint64_t> init_out(2 + 2 * static_cast<size_t>(n));
  if (auto s = driver_->CopyToHost(init_out.data(), out, init_out.size() * sizeof(uint64_t));
      !s.ok()) {
    return s;
  }
  if (init_out[0] != 1) return TakeError("materializing the tree on the device");
  return init_out;
}

absl::Status CudaSparseRuntime::UploadMetas(SparseRuntime& host, const Layout& layout,
                                            const std::vector<uint64_t>& init_out) {
  const int32_t n = layout.num_snodes;
  const std::vector<unsigned char> structs = internal::DeviceMetaStructs(host, *tree_, context_);
  std::vector<uint64_t> metas(n), ambients(n);
  for (int id = 0; id < n; ++id) {
    metas[id] = base_ + layout.structs + id * layout.meta_slot;
    ambients[id] = init_out[2 + id];
  }
  if (auto s = driver_->CopyToDevice(base_ + layout.structs, structs.data(), structs.size());
      !s.ok()) {
    return s;
  }
  if (auto s = driver_->CopyToDevice(base_ + layout.metas, metas.data(), n * sizeof(uint64_t));
      !s.ok()) {
    return s;
  }
  if (auto s =
          driver_->CopyToDevice(base_ + layout.ambients, ambients.data(), n * sizeof(uint64_t));
      !s.ok()) {
    return s;
  }
  const uint64_t kernel_context[4] = {init_out[1], context_, base_ + layout.metas,
                                      base_ + layout.ambients};
  static_assert(sizeof(kernel_context) == sizeof(kernel_abi::KernelContext),
                "KernelContext is four pointers");
  return driver_->CopyToDevice(kernel_context_, kernel_context, sizeof(kernel_context));
}

absl::Status CudaSparseRuntime::UploadGcTable(const Layout& layout,
                                              const std::vector<DeviceAllocatorSpec>& specs,
                                              const std::vector<uint64_t>& init_out) {
  const int32_t n = layout.num_snodes;
  node_managers_.assign(n, 0);
  scratches_.assign(n, 0);
  // The GC table: every allocator with its scratch, by cell size (CollectGarbage's one pass).
  std::vector<std::pair<uint64_t, gc::GcBatchEntry>> sized;  // (cell size, entry)
  for (size_t k = 0; k < specs.size(); ++k) {
    const int id = specs[k].snode_id;
    node_managers_[id] = init_out[2 + n + id];
    scratches_[id] = base_ + layout.scratches + k * layout.scratch_slot;
    gc::GcBatchEntry entry{};
    entry.nm = reinterpret_cast<sparse_runtime::NodeManager*>(node_managers_[id]);
    entry.scratch = reinterpret_cast<gc::GcScratch*>(scratches_[id]);
    sized.emplace_back(specs[k].node_size, entry);
  }
  std::stable_sort(sized.begin(), sized.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<gc::GcBatchEntry> table;
  for (const auto& [size, entry] : sized) table.push_back(entry);
  if (!table.empty()) {
    if (auto s = driver_->CopyToDevice(base_ + layout.gc_table, table.data(),
                                       table.size() * sizeof(gc::GcBatchEntry));
        !s.ok()) {
      return s;
    }
  }
  gc_table_ = base_ + layout.gc_table;
  gc_table_size_ = static_cast<int32_t>(table.size());
  return absl::OkStatus();
}

CudaSparseRuntime::~CudaSparseRuntime() {
  if (base_ != 0) driver_->Free(base_).IgnoreError();
}

absl::Status CudaSparseRuntime::TakeError(const std::string& what) {
  auto take = driver_->GetFunction(runtime_module_, "accelmem_cuda_runtime_take_error");
  if (!take.ok()) return take.status();
  DevicePtr context = context_;
  DevicePtr code_ptr = io_ + 32;
  DevicePtr message_ptr = io_ + 64;
  void* params[] = {&context, &code_ptr, &message_ptr};
  if (auto s = driver_->Launch(*take, {1, 1, 1}, {1, 1, 1}, params); !s.ok()) return s;
  if (auto s = driver_->Synchronize(); !s.ok()) return s;
  int32_t code = 0;
  char message[kDeviceErrorMessageBytes] = {};
  if (auto s = driver_->CopyToHost(&code, code_ptr, sizeof(code)); !s.ok()) return s;
  if (auto s = driver_->CopyToHost(message, message_ptr, sizeof(message)); !s.ok()) return s;
  message[sizeof(message) - 1] = 0;
  if (code == sparse_runtime::kRuntimeOk) return RuntimeErrorStatus(code, message, what);
  return RuntimeErrorStatus(code, absl::StrCat(message, " (runtime error ", code, ")"), what);
}

absl::StatusOr<void*> CudaSparseRuntime::Load(codegen::KernelModule kernels) {
  if (kernels.module == nullptr) return absl::InvalidArgumentError("empty kernel module");
  // Only the device entries become PTX .entry functions (they return void).
  std::vector<std::string> entries;
  for (const std::string& name : kernels.entry_points) {
    llvm::Function* f = kernels.module->getFunction(name);
    if (f != nullptr && f->getReturnType()->isVoidTy()) entries.push_back(name);
  }
  if (entries.empty()) {
    return absl::InvalidArgumentError(
        "the kernel module has no device entries (KernelBuilder::AddDeviceEntry)");
  }
  auto ptx = CompileModule(*kernels.module, entries, driver_->sm());
  if (!ptx.ok()) return ptx.status();
  return driver_->LoadPtx(*ptx);
}

absl::StatusOr<int32_t> CudaSparseRuntime::ErrorCode() {
  int32_t code = 0;
  if (auto s = driver_->CopyToHost(&code,
                                   context_ + offsetof(RuntimeContext, memory) +
                                       offsetof(sparse_runtime::RuntimeMemory, error_code),
                                   sizeof(code));
      !s.ok()) {
    return s;
  }
  return code;
}

absl::StatusOr<CudaSparseRuntime::LaunchResult> CudaSparseRuntime::Launch(void* module,
                                                                          const std::string& entry,
                                                                          int64_t begin,
                                                                          int64_t end) {
  auto function = driver_->GetFunction(module, entry);
  if (!function.ok()) return function.status();
  DevicePtr result = io_;
  if (auto s = driver_->Memset(result, 0, 2 * sizeof(int64_t)); !s.ok()) return s;
  const int64_t n = std::max<int64_t>(end - begin, 1);
  const int64_t block = options_.block_dim;
  const int64_t blocks = std::min<int64_t>((n + block - 1) / block, grid_dim_);
  DevicePtr ctx = kernel_context_;
  void* params[] = {&ctx, &begin, &end, &result};
  if (auto s = driver_->Launch(*function, {static_cast<unsigned>(blocks), 1, 1},
                               {static_cast<unsigned>(block), 1, 1}, params);
      !s.ok()) {
    return s;
  }
  if (auto s = driver_->Synchronize(); !s.ok()) return s;
  int64_t out[2] = {};
  if (auto s = driver_->CopyToHost(out, result, sizeof(out)); !s.ok()) return s;
  auto code = ErrorCode();
  if (!code.ok()) return code.status();
  LaunchResult launch;
  launch.value = out[0];
  launch.failures = out[1];
  launch.error_code = *code;
  return launch;
}

absl::Status CudaSparseRuntime::LaunchStatus(const LaunchResult& result, const std::string& entry) {
  if (result.failures == 0 && result.error_code == sparse_runtime::kRuntimeOk) {
    return absl::OkStatus();
  }
  return TakeError(absl::StrCat("device kernel '", entry, "'"));
}

absl::StatusOr<int64_t> CudaSparseRuntime::RunRange(void* module, const std::string& entry,
                                                    int64_t begin, int64_t end) {
  std::lock_guard<std::mutex> guard(mu_);
  auto out = Launch(module, entry, begin, end);
  if (!out.ok()) return out.status();
  if (auto s = LaunchStatus(*out, entry); !s.ok()) return s;
  return out->value;
}

absl::StatusOr<double> CudaSparseRuntime::RunRangeSum(void* module, const std::string& entry,
                                                      int64_t begin, int64_t end) {
  std::lock_guard<std::mutex> guard(mu_);
  auto out = Launch(module, entry, begin, end);
  if (!out.ok()) return out.status();
  if (auto s = LaunchStatus(*out, entry); !s.ok()) return s;
  double sum = 0;
  std::memcpy(&sum, &out->value, sizeof(sum));
  return sum;
}

absl::Status CudaSparseRuntime::CollectGarbage() {
  std::lock_guard<std::mutex> guard(mu_);
  // One pass of four launches over every allocator (those without garbage are skipped on the
  // device), not four launches per SNode as upstream (#6594).
  if (auto s = gc_->CollectBatch(gc_table_, gc_table_size_); !s.ok()) return s;
  // A GC error (a bad recycled index, out of memory) is recorded in the runtime context.
  auto code = ErrorCode();
  if (!code.ok()) return code.status();
  if (*code != sparse_runtime::kRuntimeOk) return TakeError("device garbage collection");
  return absl::OkStatus();
}

absl::StatusOr<CudaNodeManagerStats> CudaSparseRuntime::Stats(const SNode& snode) {
  if (snode.id() < 0 || snode.id() >= static_cast<int>(node_managers_.size()) ||
      &tree_->snode(snode.id()) != &snode) {
    return absl::InvalidArgumentError("the SNode is not of this runtime's tree");
  }
  const DevicePtr nm = node_managers_[snode.id()];
  if (nm == 0) return CudaNodeManagerStats{};
  std::lock_guard<std::mutex> guard(mu_);
  return gc_->Stats(nm, io_);
}

}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem
