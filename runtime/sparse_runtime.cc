#include "runtime/sparse_runtime.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <mutex>
#include <numeric>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/host_scopes.h"
#include "runtime/internal/snode_kinds.h"
#include "runtime/internal/struct_for.h"
#include "runtime/internal/thread_state.h"

namespace accelmem {
namespace runtime {

using sparse_runtime::DataType;
using sparse_runtime::DataTypeName;
using sparse_runtime::DataTypeSize;
using sparse_runtime::Dynamic_allocate;
using sparse_runtime::Dynamic_deactivate;
using sparse_runtime::Dynamic_first_chunk;
using sparse_runtime::Dynamic_get_num_elements;
using sparse_runtime::Dynamic_next_chunk;
using sparse_runtime::DynamicMeta_set_chunking;
using sparse_runtime::DynamicNode;
using sparse_runtime::HasAllocator;
using sparse_runtime::i32;
using sparse_runtime::IsSparse;
using sparse_runtime::kErrorDynamicOverflow;
using sparse_runtime::kErrorIndexOutOfRange;
using sparse_runtime::kErrorInvalidArgument;
using sparse_runtime::kErrorOutOfChunks;
using sparse_runtime::kErrorOutOfMemory;
using sparse_runtime::kErrorStaleCache;
using sparse_runtime::kMaxAxes;
using sparse_runtime::kRuntimeOk;
using sparse_runtime::NodeCache;
using sparse_runtime::NodeManager;
using sparse_runtime::Pointer_bind_cells;
using sparse_runtime::Pointer_cell;
using sparse_runtime::Pointer_deactivate_indices;
using sparse_runtime::PointOp;
using sparse_runtime::Ptr;
using sparse_runtime::runtime_ambient_element;
using sparse_runtime::runtime_context_init;
using sparse_runtime::runtime_error_code;
using sparse_runtime::runtime_initialize_snode_allocator;
using sparse_runtime::runtime_node_manager;
using sparse_runtime::runtime_reset_error;
using sparse_runtime::RuntimeErrorRecord;
using sparse_runtime::RuntimeMemory;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;
using sparse_runtime::SNodeType;
using sparse_runtime::SNodeTypeName;
using sparse_runtime::StructMeta;
namespace internal {

absl::Status ErrorStatus(i32 code, const char* message, absl::string_view what) {
  return RuntimeErrorStatus(code, message, what);
}

}  // namespace internal

using internal::ErrorStatus;
using internal::RouteError;
using internal::RouteScope;
using internal::tls_locked_runtime;

namespace {

// Coordinates by axis (the kernel backends' convention) of an index of `snode`.
std::array<int32_t, kMaxAxes> CoordsByAxis(const SNode& snode, absl::Span<const int32_t> index) {
  std::array<int32_t, kMaxAxes> coord{};
  for (size_t k = 0; k < index.size(); ++k) coord[snode.index_axes()[k]] = index[k];
  return coord;
}

// The cell index of every level of one SNode's path, zeroed (levels a caller does not fill read
// 0): on the stack for paths of up to 64 levels (every tree in practice), on the heap beyond, so
// a point operation does not allocate.
class PathIndices {
 public:
  explicit PathIndices(size_t levels) {
    if (levels > kInline) {
      heap_.resize(levels);
      data_ = heap_.data();
    } else {
      std::fill_n(inline_, levels, 0);
    }
  }
  PathIndices(const PathIndices&) = delete;
  PathIndices& operator=(const PathIndices&) = delete;
  int32_t* data() { return data_; }
  int32_t& operator[](size_t level) { return data_[level]; }

 private:
  static constexpr size_t kInline = 64;
  int32_t inline_[kInline];
  std::vector<int32_t> heap_;
  int32_t* data_ = inline_;
};

class ExclusiveLock {
 public:
  explicit ExclusiveLock(ShardedRwLock* mu) : mu_(mu) { mu_->Lock(); }
  ~ExclusiveLock() { mu_->Unlock(); }
  ExclusiveLock(const ExclusiveLock&) = delete;
  ExclusiveLock& operator=(const ExclusiveLock&) = delete;

 private:
  ShardedRwLock* mu_;
};

// The error in the context's shared slot as a status (Internal if none), cleared. Only while no
// operation runs (with the runtime held exclusively).
absl::Status TakeSharedError(sparse_runtime::RuntimeContext* context, absl::string_view what) {
  const i32 code = runtime_error_code(&context->memory);
  absl::Status status = ErrorStatus(code, context->memory.error_message, what);
  if (code != kRuntimeOk) runtime_reset_error(&context->memory);
  return status;
}

// InvalidArgument unless `snode` is of `tree` and `index` has its number of coordinates;
// OutOfRange for a coordinate outside the index space.
absl::Status CheckIndex(const SNodeTree& tree, const SNode& snode,
                        absl::Span<const int32_t> index) {
  if (&snode != &tree.snode(snode.id())) {
    return absl::InvalidArgumentError("SNode does not belong to this runtime's tree");
  }
  if (static_cast<int>(index.size()) != snode.num_indices()) {
    return absl::InvalidArgumentError(absl::StrCat(
        snode.DebugPath(), " takes ", snode.num_indices(), " indices, got ", index.size()));
  }
  for (size_t k = 0; k < index.size(); ++k) {
    const int axis = snode.index_axes()[k];
    if (index[k] < 0 || index[k] >= snode.extent(axis)) {
      return absl::OutOfRangeError(absl::StrCat(snode.DebugPath(), ": index ", index[k],
                                                " of axis ", axis, " is outside [0, ",
                                                snode.extent(axis), ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<SparseRuntime>> SparseRuntime::Create(
    const SNodeTree& tree, const SparseRuntimeOptions& options) {
  return Create(tree, options, /*one_pass_gc=*/true, internal::StructForOptions());
}

absl::StatusOr<std::unique_ptr<SparseRuntime>> SparseRuntime::Create(
    const SNodeTree& tree, const SparseRuntimeOptions& options, bool one_pass_gc,
    const internal::StructForOptions& struct_for) {
  if (!tree.finalized()) {
    return absl::FailedPreconditionError("SparseRuntime::Create: the SNode tree is not finalized");
  }
  std::unique_ptr<SparseRuntime> rt(new SparseRuntime(tree, options));
  rt->one_pass_gc_ = one_pass_gc;
  absl::Status status = rt->Init(struct_for);
  if (!status.ok()) return status;
  return rt;
}

SparseRuntime::SparseRuntime(const SNodeTree& tree, const SparseRuntimeOptions& options)
    : tree_(tree), options_(options), pool_(options.memory_limit_bytes) {
  std::memset(&context_, 0, sizeof(context_));
}

SparseRuntime::~SparseRuntime() = default;

absl::Status SparseRuntime::Init(const internal::StructForOptions& struct_for) {
  pool_.Attach(&context_.memory);
  context_.memory.error_record = &RouteError;
  OpErrors errors(this);
  if (!runtime_context_init(&context_, tree_.num_snodes(), tree_.root_size())) {
    return errors.Take("materializing the root buffer");
  }
  metas_.resize(tree_.num_snodes());
  for (int id = 0; id < tree_.num_snodes(); ++id) {
    const SNode& s = tree_.snode(id);
    internal::MetaStorage& m = metas_[id];
    std::memset(&m, 0, sizeof(m));
    StructMeta& base = m.base;
    base.snode_id = id;
    base.element_size = s.type() == SNodeType::kPlace ? s.container_size() : s.cell_size();
    base.max_num_elements = s.num_cells_per_container();
    base.context = &context_;
    base.offset_in_parent_cell = s.offset_in_parent_cell();
    internal::WithKind(s.type(), [&](auto kind) {
      using Kind = decltype(kind);
      base.lookup_element = Kind::kLookupElement;
      base.is_active = Kind::kIsActive;
      base.get_num_elements = Kind::kGetNumElements;
    });
    if (s.type() == SNodeType::kDynamic) {
      DynamicMeta_set_chunking(&m.dynamic, static_cast<i32>(s.chunk_size()), s.cell_alignment());
    }
    if (HasAllocator(s.type()) &&
        !runtime_initialize_snode_allocator(&context_, id, s.allocator_node_size(),
                                            s.allocator_alignment(), options_.chunk_num_elements,
                                            options_.max_num_chunks)) {
      return errors.Take(absl::StrCat("creating the allocator of ", s.DebugPath()));
    }
    if (s.type() == SNodeType::kPointer) {
      Pointer_bind_cells(&m.pointer, runtime_node_manager(&context_, id));
    }
  }
  std::vector<Ptr> metas;
  for (int id = 0; id < tree_.num_snodes(); ++id) metas.push_back(meta(tree_.snode(id)));
  engine_ =
      std::make_unique<internal::StructForEngine>(tree_, &context_, std::move(metas), struct_for);
  if (options_.kernel_backend) {
    absl::StatusOr<std::unique_ptr<KernelBackend>> backend = options_.kernel_backend(this);
    if (!backend.ok()) return backend.status();
    backend_ = std::move(backend).value();
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> SparseRuntime::RunBackend(OpErrors& errors, PointOp op, const SNode& snode,
                                                  const int32_t* coord, void* value) {
  for (;;) {
    absl::StatusOr<int64_t> result = backend_->RunPoint(op, snode, coord, value);
    if (!result.ok() || *result >= 0) return result;
    if (*result == -2) return errors.Take(absl::StrCat("appending to ", snode.DebugPath()));
    if (errors.failed())
      return errors.Take(absl::StrCat("activating the path of ", snode.DebugPath()));
    // A concurrent deactivation won the race: activate again, as the native walk does.
  }
}

void SparseRuntime::ActivateOne(const SNode& s, Ptr container, int32_t i) {
  internal::WithKind(s.type(), [&](auto kind) {
    using Kind = decltype(kind);
    Kind::Activate(meta(s), container, i, Kind::kUsesNodeCache ? engine_->WorkerCache(s) : nullptr);
  });
}

Ptr SparseRuntime::WalkTo(const SNode& snode, const int32_t* cell_index, int upto, bool activate,
                          OpErrors& errors, absl::Status* status) {
  const auto& path = snode.path();
  Ptr cell = context_.root;
  for (int p = 1; p <= upto; ++p) {
    const SNode& level = *path[p];
    Ptr container = cell + level.offset_in_parent_cell();
    const int32_t i = cell_index[p];
    if (!HasAllocator(level.type())) {
      if (activate) {
        ActivateOne(level, container, i);
      } else if (!internal::IsActiveCell(level, meta(level), container, i)) {
        return nullptr;
      }
      cell = internal::LookupCell(level, meta(level), container, i);
      continue;
    }
    if (!activate) {
      cell = internal::ActiveCell(&context_, level, meta(level), container, i);
      if (cell == nullptr) return nullptr;  // inactive, or deactivated meanwhile
      continue;
    }
    // Activate, then take the cell; a concurrent deactivation in between leaves none (the lookup
    // would return the ambient element, which must never be written): retry.
    for (;;) {
      ActivateOne(level, container, i);
      cell = internal::ActiveCell(&context_, level, meta(level), container, i);
      if (cell != nullptr) break;
      if (errors.failed()) {
        *status = errors.Take(absl::StrCat("activating ", level.DebugPath()));
        return nullptr;
      }
    }
  }
  return cell;
}

absl::Status SparseRuntime::Activate(const SNode& snode, absl::Span<const int32_t> index) {
  if (snode.type() == SNodeType::kPlace) {
    return absl::InvalidArgumentError("Activate: a place has no cells; activate its parent");
  }
  absl::Status status = CheckIndex(tree_, snode, index);
  if (!status.ok()) return status;
  SharedLock lock(this);
  OpErrors errors(this);
  PathIndices cell_index(snode.path().size());
  int32_t* idx = cell_index.data();
  internal::CellIndices(snode, index.data(), index.size(), idx);
  const int depth = static_cast<int>(snode.path().size()) - 1;
  if (depth == 0) return absl::OkStatus();
  if (backend_ != nullptr) {
    std::array<int32_t, kMaxAxes> coord = CoordsByAxis(snode, index);
    return errors.Finish(
        RunBackend(errors, PointOp::kActivate, snode, coord.data(), nullptr).status(), "activating",
        snode);
  }
  WalkTo(snode, idx, depth, /*activate=*/true, errors, &status);
  return errors.Finish(status, "activating", snode);
}

void SparseRuntime::DeactivateOne(const SNode& s, Ptr container, int32_t i) {
  internal::WithKind(s.type(), [&](auto kind) {
    using Kind = decltype(kind);
    Kind::Deactivate(meta(s), container, i,
                     Kind::kUsesNodeCache ? engine_->WorkerCache(s) : nullptr);
  });
}

void SparseRuntime::DeactivateSubtree(const SNode& s, Ptr cell) {
  for (const SNode* child : s.children()) {
    if (child->type() == SNodeType::kPlace) continue;
    if (!IsSparse(child->type()) && !child->has_sparse_descendant()) continue;
    Ptr container = cell + child->offset_in_parent_cell();
    if (child->type() == SNodeType::kDynamic) {
      Dynamic_deactivate(meta(*child), container);
      continue;
    }
    const int32_t n = internal::NumCells(*child, meta(*child), container);
    if (child->type() == SNodeType::kPointer && !child->has_sparse_descendant()) {
      // Every cell of the container, nothing sparse below them: the batch form, which skips the
      // inactive cells and overlaps the slots' cache misses, one call per 256 cells.
      std::array<int32_t, 256> chunk;
      for (int32_t begin = 0; begin < n; begin += static_cast<int32_t>(chunk.size())) {
        const int32_t count = std::min(n - begin, static_cast<int32_t>(chunk.size()));
        std::iota(chunk.begin(), chunk.begin() + count, begin);
        Pointer_deactivate_indices(meta(*child), container, chunk.data(), count,
                                   engine_->WorkerCache(*child));
      }
      continue;
    }
    for (int32_t i = 0; i < n; ++i) {
      if (!internal::IsActiveCell(*child, meta(*child), container, i)) continue;
      if (child->has_sparse_descendant()) {
        Ptr inner = HasAllocator(child->type())
                        ? internal::ActiveCell(&context_, *child, meta(*child), container, i)
                        : internal::LookupCell(*child, meta(*child), container, i);
        if (inner != nullptr) DeactivateSubtree(*child, inner);
      }
      DeactivateOne(*child, container, i);
    }
  }
}

absl::Status SparseRuntime::Deactivate(const SNode& snode, absl::Span<const int32_t> index) {
  absl::Status status = DeactivateUnlocked(snode, index);
  if (!status.ok()) return status;
  deactivated_since_gc_.store(true, std::memory_order_relaxed);
  return MaybeAutoCollect();
}

absl::Status SparseRuntime::DeactivateUnlocked(const SNode& snode,
                                               absl::Span<const int32_t> index) {
  if (snode.type() == SNodeType::kPlace || snode.type() == SNodeType::kRoot) {
    return absl::InvalidArgumentError(
        absl::StrCat("Deactivate: ", SNodeTypeName(snode.type()), " cannot be deactivated"));
  }
  const SNode* target = &snode;
  absl::Status status;
  PathIndices idx(snode.path().size());
  if (snode.type() == SNodeType::kDynamic) {
    // Container index (the parent's), or the full index (the dynamic coordinate is ignored).
    const SNode& parent = *snode.parent();
    if (static_cast<int>(index.size()) == parent.num_indices()) {
      status = CheckIndex(tree_, parent, index);
      if (status.ok()) internal::CellIndices(parent, index.data(), index.size(), idx.data());
    } else {
      status = CheckIndex(tree_, snode, index);
      if (status.ok()) internal::CellIndices(snode, index.data(), index.size(), idx.data());
    }
  } else {
    status = CheckIndex(tree_, *target, index);
    if (status.ok()) internal::CellIndices(*target, index.data(), index.size(), idx.data());
  }
  if (!status.ok()) return status;
  SharedLock lock(this);
  OpErrors errors(this);
  if (backend_ != nullptr) {
    std::array<int32_t, kMaxAxes> coord{};
    if (snode.type() == SNodeType::kDynamic) {
      // The container index: from the parent's index, or from the full index scaled down.
      const SNode& parent = *snode.parent();
      const bool container_index = static_cast<int>(index.size()) == parent.num_indices();
      for (size_t k = 0; k < index.size(); ++k) {
        const int axis = (container_index ? parent : snode).index_axes()[k];
        const int64_t ratio = container_index ? 1 : snode.extent(axis) / parent.extent(axis);
        coord[axis] = static_cast<int32_t>(index[k] / ratio);
      }
    } else {
      coord = CoordsByAxis(snode, index);
    }
    absl::StatusOr<int64_t> result =
        RunBackend(errors, PointOp::kDeactivate, snode, coord.data(), nullptr);
    return errors.Finish(result.status(), "deactivating", snode);
  }
  const int depth = static_cast<int>(snode.path().size()) - 1;
  Ptr parent_cell = WalkTo(snode, idx.data(), depth - 1, /*activate=*/false, errors, &status);
  if (parent_cell == nullptr) {
    return errors.Finish(status, "deactivating", snode);  // an ancestor is inactive: no-op
  }
  Ptr container = parent_cell + snode.offset_in_parent_cell();
  if (snode.type() == SNodeType::kDense) {
    // A dense cell cannot be deactivated itself; everything sparse below it is.
    DeactivateSubtree(snode, internal::LookupCell(snode, meta(snode), container, idx[depth]));
    return errors.Finish(absl::OkStatus(), "deactivating", snode);
  }
  if (snode.type() != SNodeType::kDynamic && snode.has_sparse_descendant() &&
      internal::IsActiveCell(snode, meta(snode), container, idx[depth])) {
    Ptr cell = HasAllocator(snode.type())
                   ? internal::ActiveCell(&context_, snode, meta(snode), container, idx[depth])
                   : internal::LookupCell(snode, meta(snode), container, idx[depth]);
    if (cell != nullptr) DeactivateSubtree(snode, cell);
  }
  DeactivateOne(snode, container, idx[depth]);
  return errors.Finish(absl::OkStatus(), "deactivating", snode);
}

absl::StatusOr<bool> SparseRuntime::IsActive(const SNode& snode, absl::Span<const int32_t> index) {
  if (snode.type() == SNodeType::kPlace) {
    return absl::InvalidArgumentError("IsActive: ask the place's parent");
  }
  absl::Status status = CheckIndex(tree_, snode, index);
  if (!status.ok()) return status;
  SharedLock lock(this);
  OpErrors errors(this);
  PathIndices idx(snode.path().size());
  internal::CellIndices(snode, index.data(), index.size(), idx.data());
  const int depth = static_cast<int>(snode.path().size()) - 1;
  if (depth == 0) return true;
  bool active = false;
  if (backend_ != nullptr) {
    std::array<int32_t, kMaxAxes> coord = CoordsByAxis(snode, index);
    absl::StatusOr<int64_t> result =
        RunBackend(errors, PointOp::kIsActive, snode, coord.data(), nullptr);
    status = result.status();
    active = result.ok() && *result != 0;
  } else {
    Ptr parent_cell = WalkTo(snode, idx.data(), depth - 1, /*activate=*/false, errors, &status);
    active = parent_cell != nullptr &&
             internal::IsActiveCell(snode, meta(snode), parent_cell + snode.offset_in_parent_cell(),
                                    idx[depth]);
  }
  status = errors.Finish(status, "querying", snode);
  if (!status.ok()) return status;
  return active;
}

absl::Status SparseRuntime::ReadRaw(const SNode& place, DataType dtype,
                                    absl::Span<const int32_t> index, void* out) {
  if (place.type() != SNodeType::kPlace || place.dtype() != dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat("Read: ", place.DebugPath(), " is not a place of type ", DataTypeName(dtype)));
  }
  absl::Status status = CheckIndex(tree_, place, index);
  if (!status.ok()) return status;
  SharedLock lock(this);
  OpErrors errors(this);
  if (backend_ != nullptr) {
    std::array<int32_t, kMaxAxes> coord = CoordsByAxis(place, index);
    return errors.Finish(RunBackend(errors, PointOp::kRead, place, coord.data(), out).status(),
                         "reading", place);
  }
  PathIndices cell_index(place.path().size());
  int32_t* p = cell_index.data();
  internal::CellIndices(place, index.data(), index.size(), p);
  const int depth = static_cast<int>(place.path().size()) - 1;
  Ptr cell = WalkTo(place, p, depth - 1, /*activate=*/false, errors, &status);
  const size_t size = DataTypeSize(dtype);
  if (cell == nullptr) {
    std::memset(out, 0, size);  // inactive: the ambient value
  } else {
    std::memcpy(out, cell + place.offset_in_parent_cell(), size);
  }
  return errors.Finish(status, "reading", place);
}

absl::Status SparseRuntime::WriteRaw(const SNode& place, DataType dtype,
                                     absl::Span<const int32_t> index, const void* value) {
  if (place.type() != SNodeType::kPlace || place.dtype() != dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Write: ", place.DebugPath(), " is not a place of type ", DataTypeName(dtype)));
  }
  absl::Status status = CheckIndex(tree_, place, index);
  if (!status.ok()) return status;
  SharedLock lock(this);
  OpErrors errors(this);
  if (backend_ != nullptr) {
    std::array<int32_t, kMaxAxes> coord = CoordsByAxis(place, index);
    return errors.Finish(
        RunBackend(errors, PointOp::kWrite, place, coord.data(), const_cast<void*>(value)).status(),
        "writing", place);
  }
  PathIndices cell_index(place.path().size());
  int32_t* p = cell_index.data();
  internal::CellIndices(place, index.data(), index.size(), p);
  const int depth = static_cast<int>(place.path().size()) - 1;
  Ptr cell = WalkTo(place, p, depth - 1, /*activate=*/true, errors, &status);
  if (cell != nullptr)
    std::memcpy(cell + place.offset_in_parent_cell(), value, DataTypeSize(dtype));
  return errors.Finish(status, "writing", place);
}

absl::StatusOr<int32_t> SparseRuntime::AppendRaw(const SNode& place, DataType dtype,
                                                 absl::Span<const int32_t> container_index,
                                                 const void* value) {
  if (place.type() != SNodeType::kPlace || place.dtype() != dtype ||
      place.parent()->type() != SNodeType::kDynamic) {
    return absl::InvalidArgumentError(absl::StrCat("Append: ", place.DebugPath(),
                                                   " is not a place of type ", DataTypeName(dtype),
                                                   " under a dynamic SNode"));
  }
  const SNode& dynamic = *place.parent();
  const SNode& holder = *dynamic.parent();
  absl::Status status = CheckIndex(tree_, holder, container_index);
  if (!status.ok()) return status;
  SharedLock lock(this);
  OpErrors errors(this);
  if (backend_ != nullptr) {
    std::array<int32_t, kMaxAxes> coord = CoordsByAxis(holder, container_index);
    absl::StatusOr<int64_t> position =
        RunBackend(errors, PointOp::kAppend, place, coord.data(), const_cast<void*>(value));
    status = errors.Finish(position.status(), "appending to", dynamic);
    if (!status.ok()) return status;
    return static_cast<int32_t>(*position);
  }
  PathIndices idx(dynamic.path().size());
  internal::CellIndices(holder, container_index.data(), container_index.size(), idx.data());
  const int holder_depth = static_cast<int>(holder.path().size()) - 1;
  Ptr cell = WalkTo(holder, idx.data(), holder_depth, /*activate=*/true, errors, &status);
  if (cell == nullptr) return errors.Finish(status, "appending to", dynamic);
  int32_t position = 0;
  Ptr slot = Dynamic_allocate(meta(dynamic), cell + dynamic.offset_in_parent_cell(), &position);
  if (slot == nullptr) return errors.Take(absl::StrCat("appending to ", dynamic.DebugPath()));
  std::memcpy(slot + place.offset_in_parent_cell(), value, DataTypeSize(dtype));
  status = errors.Finish(absl::OkStatus(), "appending to", dynamic);
  if (!status.ok()) return status;
  return position;
}

absl::StatusOr<int32_t> SparseRuntime::Length(const SNode& dynamic,
                                              absl::Span<const int32_t> container_index) {
  if (dynamic.type() != SNodeType::kDynamic) {
    return absl::InvalidArgumentError(
        absl::StrCat("Length: ", dynamic.DebugPath(), " is not a dynamic SNode"));
  }
  const SNode& holder = *dynamic.parent();
  absl::Status status = CheckIndex(tree_, holder, container_index);
  if (!status.ok()) return status;
  SharedLock lock(this);
  OpErrors errors(this);
  int32_t length = 0;
  if (backend_ != nullptr) {
    std::array<int32_t, kMaxAxes> coord = CoordsByAxis(holder, container_index);
    absl::StatusOr<int64_t> result =
        RunBackend(errors, PointOp::kLength, dynamic, coord.data(), nullptr);
    status = result.status();
    if (result.ok()) length = static_cast<int32_t>(*result);
  } else {
    PathIndices idx(dynamic.path().size());
    internal::CellIndices(holder, container_index.data(), container_index.size(), idx.data());
    const int holder_depth = static_cast<int>(holder.path().size()) - 1;
    Ptr cell = WalkTo(holder, idx.data(), holder_depth, /*activate=*/false, errors, &status);
    if (cell != nullptr) {
      length = Dynamic_get_num_elements(meta(dynamic), cell + dynamic.offset_in_parent_cell());
    }
  }
  status = errors.Finish(status, "measuring", dynamic);
  if (!status.ok()) return status;
  return length;
}

absl::Status SparseRuntime::CollectGarbage() {
  if (tls_locked_runtime == &context_) {
    return absl::FailedPreconditionError("CollectGarbage called from inside a struct-for visitor");
  }
  ExclusiveLock lock(&gc_mu_);
  return CollectLocked();
}

absl::Status SparseRuntime::CollectLocked() {
  deactivated_since_gc_.store(false, std::memory_order_relaxed);
  if (collector_ == nullptr) {
    gc::GcCollectorOptions gc_options;
    gc_options.num_workers = options_.gc_workers < 1 ? 1 : options_.gc_workers;
    collector_ = std::make_unique<gc::GcCollector>(gc_options);
  }
  std::vector<NodeManager*> managers;
  for (int id = 0; id < tree_.num_snodes(); ++id) {
    if (HasAllocator(tree_.snode(id).type())) {
      managers.push_back(runtime_node_manager(&context_, id));
    }
  }
  // The collector (//gc) reads errors from the shared slot, also on its worker threads: route
  // this thread's there too. Nothing else reports into it while gc_mu_ is held exclusively, so
  // whatever it holds afterwards is this collection's.
  RouteScope route(&context_.memory, nullptr);
  runtime_reset_error(&context_.memory);
  absl::Status status;
  if (one_pass_gc_) {
    status = collector_->CollectAll(managers).status();
  } else {
    for (NodeManager* nm : managers) {
      status = collector_->CollectIfNeeded(nm).status();
      if (!status.ok()) break;
    }
  }
  if (runtime_error_code(&context_.memory) != kRuntimeOk) {
    return TakeSharedError(&context_, "garbage collection");
  }
  return status;
}

absl::Status SparseRuntime::MaybeAutoCollect() {
  if (!options_.auto_collect || tls_locked_runtime == &context_) return absl::OkStatus();
  if (!deactivated_since_gc_.load(std::memory_order_relaxed)) return absl::OkStatus();
  ExclusiveLock lock(&gc_mu_);
  if (!deactivated_since_gc_.load(std::memory_order_relaxed)) return absl::OkStatus();
  return CollectLocked();
}

int64_t SparseRuntime::num_gc_collections() {
  ExclusiveLock lock(&gc_mu_);
  return collector_ == nullptr ? 0 : collector_->num_collections();
}

int64_t SparseRuntime::num_gc_passes() {
  ExclusiveLock lock(&gc_mu_);
  return collector_ == nullptr ? 0 : collector_->num_passes();
}

SNodeMemoryStats SparseRuntime::Stats(const SNode& snode) {
  SNodeMemoryStats stats;
  if (!HasAllocator(snode.type())) return stats;
  SharedLock lock(this);
  const NodeManager* nm = runtime_node_manager(&context_, snode.id());
  stats.cells_reserved = nm->num_reserved();
  stats.cells_free = nm->num_free();
  stats.cells_recycled = nm->num_recycled();
  stats.cells_in_use = nm->num_in_use();
  stats.bytes_reserved = nm->bytes_reserved();
  return stats;
}

absl::Status SparseRuntime::CheckInvariants() {
  if (tls_locked_runtime == &context_) {
    return absl::FailedPreconditionError("CheckInvariants called from inside a struct-for visitor");
  }
  ExclusiveLock lock(&gc_mu_);
  OpErrors errors(this);  // locate() reports foreign pointers: listed as problems instead
  std::vector<std::string> problems;
  // owners[id][slot]: how many states claim the slot.
  std::vector<std::vector<int>> owners(tree_.num_snodes());
  for (int id = 0; id < tree_.num_snodes(); ++id) {
    if (!HasAllocator(tree_.snode(id).type())) continue;
    owners[id].assign(runtime_node_manager(&context_, id)->num_reserved(), 0);
  }
  auto claim = [&](const SNode& s, const void* p, const char* state) {
    const NodeManager* nm = runtime_node_manager(&context_, s.id());
    const int32_t slot = nm->locate(p);
    if (slot < 0 || slot >= static_cast<int32_t>(owners[s.id()].size())) {
      problems.push_back(absl::StrCat(s.DebugPath(), ": ", state, " cell at 0x",
                                      absl::Hex(reinterpret_cast<uintptr_t>(p)), " is not a slot"));
      errors.Clear();
      return;
    }
    if (++owners[s.id()][slot] != 1) {
      problems.push_back(
          absl::StrCat(s.DebugPath(), ": slot ", slot, " claimed twice (last as ", state, ")"));
    }
  };
  // In-use cells: everything reachable through active cells.
  std::function<void(const SNode&, Ptr)> walk = [&](const SNode& s, Ptr cell) {
    for (const SNode* child : s.children()) {
      if (child->type() == SNodeType::kPlace) continue;
      if (!IsSparse(child->type()) && !child->has_sparse_descendant()) continue;
      Ptr container = cell + child->offset_in_parent_cell();
      if (child->type() == SNodeType::kDynamic) {
        const DynamicNode* node = reinterpret_cast<const DynamicNode*>(container);
        for (Ptr chunk = Dynamic_first_chunk(node); chunk != nullptr;
             chunk = Dynamic_next_chunk(chunk)) {
          claim(*child, chunk, "in-use");
        }
        continue;
      }
      const int32_t n = internal::NumCells(*child, meta(*child), container);
      for (int32_t i = 0; i < n; ++i) {
        Ptr inner;
        if (HasAllocator(child->type())) {
          inner = internal::ActiveCell(&context_, *child, meta(*child), container, i);
          if (inner == nullptr) continue;
        } else {
          if (!internal::IsActiveCell(*child, meta(*child), container, i)) continue;
          inner = internal::LookupCell(*child, meta(*child), container, i);
        }
        if (child->type() == SNodeType::kPointer) claim(*child, inner, "in-use");
        if (child->has_sparse_descendant()) walk(*child, inner);
      }
    }
  };
  walk(tree_.root(), context_.root);
  for (int id = 0; id < tree_.num_snodes(); ++id) {
    const SNode& s = tree_.snode(id);
    if (!HasAllocator(s.type())) continue;
    const NodeManager* nm = runtime_node_manager(&context_, id);
    for (int32_t k = nm->free_list_used; k < nm->free_list.size(); ++k) {
      const int32_t slot = nm->free_list.get<int32_t>(k);
      claim(s, nm->get_cell(slot), "free");
      const Ptr cell = nm->get_cell(slot);
      for (uint64_t b = 0; b < nm->element_size; ++b) {
        if (cell[b] != 0) {
          problems.push_back(absl::StrCat(s.DebugPath(), ": free slot ", slot, " is not zero"));
          break;
        }
      }
    }
    for (int32_t k = 0; k < nm->recycled_list.valid_size(); ++k) {
      claim(s, nm->get_cell(nm->recycled_list.get<int32_t>(k)), "recycled");
    }
    for (size_t slot = 0; slot < owners[id].size(); ++slot) {
      if (owners[id][slot] == 0) {
        problems.push_back(absl::StrCat(s.DebugPath(), ": slot ", slot,
                                        " is neither in use, free nor recycled (lost)"));
      }
    }
    const Ptr ambient = runtime_ambient_element(&context_, id);
    for (uint64_t b = 0; b < context_.ambient_sizes[id]; ++b) {
      if (ambient[b] != 0) {
        problems.push_back(absl::StrCat(s.DebugPath(), ": the ambient element was written"));
        break;
      }
    }
  }
  if (problems.empty()) return absl::OkStatus();
  if (problems.size() > 20) problems.resize(20);
  return absl::InternalError(absl::StrCat("invariant violated: ", absl::StrJoin(problems, "; ")));
}

absl::Status RuntimeErrorStatus(int32_t code, absl::string_view message, absl::string_view what) {
  switch (code) {
    case kErrorOutOfChunks:
    case kErrorOutOfMemory:
      return absl::ResourceExhaustedError(absl::StrCat(what, ": ", message));
    case kErrorDynamicOverflow:
    case kErrorIndexOutOfRange:
      return absl::OutOfRangeError(absl::StrCat(what, ": ", message));
    case kErrorInvalidArgument:
      return absl::InvalidArgumentError(absl::StrCat(what, ": ", message));
    case kErrorStaleCache:
      return absl::FailedPreconditionError(absl::StrCat(what, ": ", message));
    case kRuntimeOk:
      return absl::InternalError(absl::StrCat(what, ": failed without a recorded error"));
    default:
      return absl::InternalError(absl::StrCat(what, ": ", message));
  }
}

}  // namespace runtime
}  // namespace accelmem
