#include "codegen/kernel_builder.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "codegen/internal/emitter.h"
#include "llvm/ADT/Triple.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

namespace accelmem {
namespace codegen {

using sparse_runtime::PointOp;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;
using sparse_runtime::SNodeType;

using internal::CheckAdd;
using internal::CheckRangeOp;
using internal::Emitter;
using internal::NeedDeactivatable;
using internal::NeedDynamicPlace;
using internal::NeedPlace;
using internal::RangeOp;

namespace {

// The runtime module of `bitcode`, parsed in `context`.
absl::StatusOr<std::unique_ptr<llvm::Module>> ParseRuntime(absl::string_view bitcode,
                                                           llvm::LLVMContext& context) {
  auto runtime = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(llvm::StringRef(bitcode.data(), bitcode.size()), "runtime"), context);
  if (!runtime) {
    return absl::InvalidArgumentError(
        absl::StrCat("runtime bitcode: ", llvm::toString(runtime.takeError())));
  }
  return std::move(*runtime);
}

absl::Status AddRangeKernel(KernelBuilder::Impl* impl, absl::string_view name, RangeOp op,
                            const SNode& snode, const std::vector<CoordMap>& coords, double scale,
                            double offset) {
  absl::Status s = CheckAdd(*impl, name, snode);
  if (s.ok()) s = CheckRangeOp(name, op, snode);
  if (!s.ok()) return s;
  return Emitter(impl).Range(name, op, snode, coords, scale, offset);
}

}  // namespace

KernelBuilder::KernelBuilder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KernelBuilder::~KernelBuilder() = default;

absl::StatusOr<std::unique_ptr<KernelBuilder>> KernelBuilder::Create(
    absl::string_view runtime_bitcode, const SNodeTree& tree, const KernelBuilderOptions& options) {
  if (!tree.finalized()) {
    return absl::FailedPreconditionError("KernelBuilder: the SNode tree is not finalized");
  }
  auto impl = std::make_unique<Impl>();
  impl->tree = &tree;
  impl->context = std::make_unique<llvm::LLVMContext>();
  llvm::LLVMContext scratch;
  absl::StatusOr<std::unique_ptr<llvm::Module>> runtime = ParseRuntime(runtime_bitcode, scratch);
  if (!runtime.ok()) return runtime.status();
  if (absl::Status abi = internal::CheckRuntimeAbi(**runtime); !abi.ok()) return abi;
  // Range-deactivate kernels keep a NodeCache on their stack on CPU targets (see Impl).
  if (options.stack_node_cache &&
      llvm::Triple((*runtime)->getTargetTriple()).getArch() != llvm::Triple::nvptx64) {
    impl->node_cache_bytes = kernel_abi::kNodeCacheBytes;
    impl->node_cache_align = kernel_abi::kNodeCacheAlign;
  }
  impl->module = std::make_unique<llvm::Module>("kernels", *impl->context);
  impl->module->setTargetTriple((*runtime)->getTargetTriple());
  impl->module->setDataLayout((*runtime)->getDataLayout());
  return std::unique_ptr<KernelBuilder>(new KernelBuilder(std::move(impl)));
}

absl::Status KernelBuilder::AddRangeWrite(absl::string_view name, const SNode& place,
                                          const std::vector<CoordMap>& coords, double scale,
                                          double offset) {
  return AddRangeKernel(impl_.get(), name, RangeOp::kWrite, place, coords, scale, offset);
}

absl::Status KernelBuilder::AddRangeActivate(absl::string_view name, const SNode& snode,
                                             const std::vector<CoordMap>& coords) {
  return AddRangeKernel(impl_.get(), name, RangeOp::kActivate, snode, coords, 0, 0);
}

absl::Status KernelBuilder::AddRangeSum(absl::string_view name, const SNode& place,
                                        const std::vector<CoordMap>& coords) {
  return AddRangeKernel(impl_.get(), name, RangeOp::kSum, place, coords, 0, 0);
}

absl::Status KernelBuilder::AddRangeAtomicAdd(absl::string_view name, const SNode& place,
                                              const std::vector<CoordMap>& coords, double scale,
                                              double offset) {
  return AddRangeKernel(impl_.get(), name, RangeOp::kAtomicAdd, place, coords, scale, offset);
}

absl::Status KernelBuilder::AddRangeDeactivate(absl::string_view name, const SNode& snode,
                                               const std::vector<CoordMap>& coords) {
  return AddRangeKernel(impl_.get(), name, RangeOp::kDeactivate, snode, coords, 0, 0);
}

absl::Status KernelBuilder::AddRangeAppend(absl::string_view name, const SNode& place,
                                           const std::vector<CoordMap>& coords, double scale,
                                           double offset) {
  return AddRangeKernel(impl_.get(), name, RangeOp::kAppend, place, coords, scale, offset);
}

absl::Status KernelBuilder::AddPoint(absl::string_view name, PointOp op, const SNode& snode) {
  absl::Status s = CheckAdd(*impl_, name, snode);
  if (!s.ok()) return s;
  switch (op) {
    case PointOp::kRead:
    case PointOp::kWrite:
      s = NeedPlace(name, snode);
      break;
    case PointOp::kAppend:
      s = NeedDynamicPlace(name, snode);
      break;
    case PointOp::kLength:
      if (snode.type() != SNodeType::kDynamic) {
        s = absl::InvalidArgumentError(absl::StrCat(name, ": not a dynamic SNode"));
      }
      break;
    case PointOp::kDeactivate:
      s = NeedDeactivatable(name, snode);
      break;
    case PointOp::kActivate:
    case PointOp::kIsActive:
      if (snode.type() == SNodeType::kPlace) {
        s = absl::InvalidArgumentError(absl::StrCat(name, ": a place has no cells"));
      }
      break;
  }
  if (!s.ok()) return s;
  return Emitter(impl_.get()).Point(name, op, snode);
}

absl::Status KernelBuilder::AddStructFor(absl::string_view name, const SNode& snode) {
  absl::Status s = CheckAdd(*impl_, name, snode);
  if (!s.ok()) return s;
  return Emitter(impl_.get()).StructFor(name, snode);
}

absl::Status KernelBuilder::AddStructForRuns(absl::string_view name, const SNode& snode) {
  absl::Status s = CheckAdd(*impl_, name, snode);
  if (!s.ok()) return s;
  return Emitter(impl_.get()).StructFor(name, snode, /*runs=*/true);
}

std::string GcKernelName(absl::string_view prefix, GcKernel kind) {
  static constexpr const char* kSuffix[kNumGcKernels] = {"_prepare", "_phase0", "_phase1",
                                                         "_phase2", "_serial"};
  return absl::StrCat(prefix, kSuffix[static_cast<int>(kind)]);
}

absl::Status KernelBuilder::AddGcKernel(absl::string_view name, GcKernel kind, const SNode& snode) {
  absl::Status s = CheckAdd(*impl_, name, snode);
  if (!s.ok()) return s;
  if (!sparse_runtime::HasAllocator(snode.type())) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", snode.DebugPath(), " has no allocator to collect"));
  }
  Emitter(impl_.get()).Gc(name, kind, snode);
  impl_->gc_kernels.emplace(std::string(name), kind);
  return absl::OkStatus();
}

absl::Status KernelBuilder::AddGc(absl::string_view prefix, const SNode& snode) {
  for (int k = 0; k < kNumGcKernels; ++k) {
    const GcKernel kind = static_cast<GcKernel>(k);
    absl::Status s = AddGcKernel(GcKernelName(prefix, kind), kind, snode);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status KernelBuilder::AddDeviceEntry(absl::string_view name, absl::string_view kernel) {
  if (impl_->module == nullptr) return absl::FailedPreconditionError("KernelBuilder finished");
  llvm::Module& m = *impl_->module;
  if (llvm::Triple(m.getTargetTriple()).getArch() != llvm::Triple::nvptx64) {
    return absl::FailedPreconditionError(
        absl::StrCat(name, ": device entries need the NVPTX runtime, not ", m.getTargetTriple()));
  }
  llvm::Function* k = m.getFunction(llvm::StringRef(kernel.data(), kernel.size()));
  if (k == nullptr) return absl::NotFoundError(absl::StrCat("no kernel ", kernel));
  if (m.getFunction(llvm::StringRef(name.data(), name.size())) != nullptr) {
    return absl::AlreadyExistsError(absl::StrCat(name, ": defined twice"));
  }
  auto gc = impl_->gc_kernels.find(std::string(kernel));
  if (gc != impl_->gc_kernels.end()) {
    internal::EmitGcDeviceEntry(m, name, k, gc->second);
    impl_->entry_points.emplace_back(name);
    return absl::OkStatus();
  }
  internal::EmitDeviceEntry(*impl_, name, k);
  return absl::OkStatus();
}

absl::Status KernelBuilder::CheckRuntimeBitcode(absl::string_view runtime_bitcode) {
  llvm::LLVMContext context;
  absl::StatusOr<std::unique_ptr<llvm::Module>> runtime = ParseRuntime(runtime_bitcode, context);
  if (!runtime.ok()) return runtime.status();
  return internal::CheckRuntimeAbi(**runtime);
}

KernelModule KernelBuilder::Finish() {
  KernelModule out;
  out.module = std::move(impl_->module);
  out.context = std::move(impl_->context);
  out.entry_points = std::move(impl_->entry_points);
  impl_->entry_points.clear();
  impl_->gc_kernels.clear();
  return out;
}

}  // namespace codegen
}  // namespace accelmem
