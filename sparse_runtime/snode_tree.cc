#include "sparse_runtime/snode_tree.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sparse_runtime/device/snode_kind_table.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

constexpr int64_t kMaxIndex = std::numeric_limits<int32_t>::max();

uint64_t RoundUp(uint64_t x, uint64_t align) { return (x + align - 1) / align * align; }

// The row's flags column, 0 for a value outside the enum.
u32 KindFlags(SNodeType type) {
  switch (type) {
#define ACCELMEM_SNODE_FLAGS_CASE(Kind, kind, Meta, flags, ...) \
  case SNodeType::k##Kind:                                      \
    return (flags);
    ACCELMEM_SNODE_KINDS(ACCELMEM_SNODE_FLAGS_CASE)
#undef ACCELMEM_SNODE_FLAGS_CASE
  }
  return 0;
}

}  // namespace

const char* SNodeTypeName(SNodeType type) {
  switch (type) {
#define ACCELMEM_SNODE_NAME_CASE(Kind, kind, ...) \
  case SNodeType::k##Kind:                        \
    return #kind;
    ACCELMEM_SNODE_KINDS(ACCELMEM_SNODE_NAME_CASE)
#undef ACCELMEM_SNODE_NAME_CASE
  }
  return "?";
}

bool IsSparse(SNodeType type) { return (KindFlags(type) & kSNodeSparse) != 0; }

bool HasAllocator(SNodeType type) { return (KindFlags(type) & kSNodeAllocator) != 0; }

int64_t StructForExtent(const SNode& snode) {
  const SNode& leaf = snode.type() == SNodeType::kPlace ? *snode.parent() : snode;
  return leaf.path().size() < 2 ? 1 : leaf.path()[1]->num_cells_per_container();
}

int DataTypeSize(DataType dtype) {
  switch (dtype) {
    case DataType::kI8:
    case DataType::kU8:
      return 1;
    case DataType::kI16:
    case DataType::kU16:
      return 2;
    case DataType::kI32:
    case DataType::kU32:
    case DataType::kF32:
      return 4;
    case DataType::kI64:
    case DataType::kU64:
    case DataType::kF64:
      return 8;
  }
  return 0;
}

const char* DataTypeName(DataType dtype) {
  switch (dtype) {
    case DataType::kI8:
      return "i8";
    case DataType::kI16:
      return "i16";
    case DataType::kI32:
      return "i32";
    case DataType::kI64:
      return "i64";
    case DataType::kU8:
      return "u8";
    case DataType::kU16:
      return "u16";
    case DataType::kU32:
      return "u32";
    case DataType::kU64:
      return "u64";
    case DataType::kF32:
      return "f32";
    case DataType::kF64:
      return "f64";
  }
  return "?";
}

SNode::SNode(SNodeTree* tree, SNode* parent, int id, SNodeType type)
    : tree_(tree), parent_(parent), id_(id), type_(type) {
  shape_.fill(1);
  extent_.fill(1);
}

SNode& SNode::AddChild(SNodeType type, std::initializer_list<Axis> axes,
                       std::initializer_list<int64_t> sizes, const char* what) {
  if (tree_->finalized_) {
    tree_->RecordError(absl::StrCat(DebugPath(), ": ", what, " added after Finalize()"));
  }
  if (type_ == SNodeType::kPlace) {
    tree_->RecordError(absl::StrCat(DebugPath(), ": a place cannot have children"));
  }
  const int id = static_cast<int>(tree_->nodes_.size());
  tree_->nodes_.push_back(std::unique_ptr<SNode>(new SNode(tree_, this, id, type)));
  SNode& child = *tree_->nodes_.back();
  children_.push_back(&child);
  if (type == SNodeType::kPlace) return child;
  if (axes.size() != sizes.size()) {
    tree_->RecordError(
        absl::StrCat(child.DebugPath(), ": ", axes.size(), " axes but ", sizes.size(), " sizes"));
  }
  if (axes.size() == 0) {
    tree_->RecordError(absl::StrCat(child.DebugPath(), ": ", what, " needs at least one axis"));
  }
  auto size_it = sizes.begin();
  for (const Axis& axis : axes) {
    const int64_t size = size_it != sizes.end() ? *size_it++ : 1;
    if (axis.id < 0 || axis.id >= kMaxAxes) {
      tree_->RecordError(
          absl::StrCat(child.DebugPath(), ": axis ", axis.id, " is outside [0, ", kMaxAxes, ")"));
      continue;
    }
    if (std::find(child.axes_.begin(), child.axes_.end(), axis.id) != child.axes_.end()) {
      tree_->RecordError(
          absl::StrCat(child.DebugPath(), ": axis ", axis.id, " is given twice in one call"));
      continue;
    }
    child.axes_.push_back(axis.id);
    child.shape_[axis.id] = size;
  }
  std::sort(child.axes_.begin(), child.axes_.end());
  return child;
}

SNode& SNode::dense(std::initializer_list<Axis> axes, std::initializer_list<int64_t> sizes) {
  return AddChild(SNodeType::kDense, axes, sizes, "dense");
}

SNode& SNode::bitmasked(std::initializer_list<Axis> axes, std::initializer_list<int64_t> sizes) {
  return AddChild(SNodeType::kBitmasked, axes, sizes, "bitmasked");
}

SNode& SNode::pointer(std::initializer_list<Axis> axes, std::initializer_list<int64_t> sizes) {
  return AddChild(SNodeType::kPointer, axes, sizes, "pointer");
}

SNode& SNode::dynamic(Axis axis, int64_t size, int64_t chunk_size) {
  SNode& child = AddChild(SNodeType::kDynamic, {axis}, {size}, "dynamic");
  child.chunk_size_ = chunk_size == 0 ? size : chunk_size;
  return child;
}

SNode& SNode::place(DataType dtype, absl::string_view name) {
  SNode& child = AddChild(SNodeType::kPlace, {}, {}, "place");
  child.dtype_ = dtype;
  child.name_ = std::string(name);
  return *this;
}

std::string SNode::DebugPath() const {
  std::string own;
  if (type_ == SNodeType::kRoot) {
    own = "root";
  } else if (type_ == SNodeType::kPlace) {
    own = absl::StrCat("place(", DataTypeName(dtype_), " ", name_, ")");
  } else {
    std::vector<std::string> parts;
    for (int a : axes_) parts.push_back(absl::StrCat("i", a, ":", shape_[a]));
    own = absl::StrCat(SNodeTypeName(type_), "(", absl::StrJoin(parts, ","), ")");
  }
  return parent_ == nullptr ? own : absl::StrCat(parent_->DebugPath(), ".", own);
}

SNodeTree::SNodeTree() {
  nodes_.push_back(std::unique_ptr<SNode>(new SNode(this, nullptr, 0, SNodeType::kRoot)));
}

const SNode* SNodeTree::FindPlace(absl::string_view name) const {
  for (const auto& node : nodes_) {
    if (node->type_ == SNodeType::kPlace && node->name_ == name) return node.get();
  }
  return nullptr;
}

absl::Status SNodeTree::Validate() const {
  std::vector<std::string> errors = build_errors_;
  absl::flat_hash_set<std::string> names;
  for (const auto& owned : nodes_) {
    const SNode& s = *owned;
    if (s.type_ == SNodeType::kPlace) {
      if (s.name_.empty()) errors.push_back(absl::StrCat(s.DebugPath(), ": place without a name"));
      if (!s.name_.empty() && !names.insert(s.name_).second) {
        errors.push_back(absl::StrCat(s.DebugPath(), ": place name '", s.name_, "' is used twice"));
      }
      continue;
    }
    if (s.children_.empty()) {
      errors.push_back(absl::StrCat(s.DebugPath(), ": ", SNodeTypeName(s.type_),
                                    " has no children (place a value or add a child)"));
    }
    for (int a : s.axes_) {
      if (s.shape_[a] <= 0) {
        errors.push_back(absl::StrCat(s.DebugPath(), ": shape of axis ", a,
                                      " must be positive, got ", s.shape_[a]));
      }
    }
    if (s.type_ == SNodeType::kDynamic) {
      if (s.chunk_size_ <= 0 || s.chunk_size_ > kMaxIndex) {
        errors.push_back(
            absl::StrCat(s.DebugPath(), ": chunk_size must be positive, got ", s.chunk_size_));
      }
      for (const SNode* c : s.children_) {
        if (c->type_ != SNodeType::kPlace) {
          errors.push_back(absl::StrCat(s.DebugPath(),
                                        ": dynamic must be terminal (only place children), has ",
                                        SNodeTypeName(c->type_)));
          break;
        }
      }
      if (!s.axes_.empty()) {
        const int axis = s.axes_[0];
        for (const SNode* p = s.parent_; p != nullptr; p = p->parent_) {
          if (std::find(p->axes_.begin(), p->axes_.end(), axis) != p->axes_.end()) {
            errors.push_back(absl::StrCat(s.DebugPath(), ": dynamic axis ", axis,
                                          " is already used by ancestor ",
                                          SNodeTypeName(p->type_)));
            break;
          }
        }
      }
    }
  }
  // Index space: extents along each path and cells per container fit in i32.
  for (const auto& owned : nodes_) {
    const SNode& s = *owned;
    int64_t cells = 1;
    bool overflow = false;
    for (int a : s.axes_) {
      if (s.shape_[a] <= 0) continue;
      if (__builtin_mul_overflow(cells, s.shape_[a], &cells) || cells > kMaxIndex) overflow = true;
    }
    if (overflow) {
      errors.push_back(absl::StrCat(s.DebugPath(), ": more than 2^31-1 cells per container"));
    }
    std::array<int64_t, kMaxAxes> extent;
    extent.fill(1);
    for (const SNode* p = &s; p != nullptr; p = p->parent_) {
      for (int a : p->axes_) {
        if (p->shape_[a] <= 0) continue;
        if (__builtin_mul_overflow(extent[a], p->shape_[a], &extent[a]) || extent[a] > kMaxIndex) {
          extent[a] = kMaxIndex + 1;
        }
      }
    }
    for (int a = 0; a < kMaxAxes; ++a) {
      if (extent[a] > kMaxIndex && s.parent_ != nullptr && extent[a] != 1 &&
          std::find(s.axes_.begin(), s.axes_.end(), a) != s.axes_.end()) {
        errors.push_back(absl::StrCat(s.DebugPath(), ": index space of axis ", a,
                                      " exceeds 2^31-1 (does not fit the 32-bit index)"));
      }
    }
  }
  if (errors.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("invalid SNode tree: ", absl::StrJoin(errors, "; ")));
}

absl::Status SNodeTree::ComputeLayout() {
  // Bottom-up (children have larger ids): cells and containers.
  for (int id = num_snodes() - 1; id >= 0; --id) {
    SNode& s = *nodes_[id];
    s.num_cells_ = 1;
    for (int a : s.axes_) s.num_cells_ *= s.shape_[a];
    if (s.type_ == SNodeType::kPlace) {
      s.container_size_ = s.container_alignment_ = DataTypeSize(s.dtype_);
      continue;
    }
    uint64_t offset = 0;
    uint64_t align = 1;
    s.has_sparse_descendant_ = false;
    for (SNode* c : s.children_) {
      offset = RoundUp(offset, c->container_alignment_);
      c->offset_in_parent_cell_ = offset;
      if (__builtin_add_overflow(offset, c->container_size_, &offset)) {
        return absl::InvalidArgumentError(absl::StrCat(s.DebugPath(), ": cell size overflows"));
      }
      align = std::max(align, c->container_alignment_);
      s.has_sparse_descendant_ =
          s.has_sparse_descendant_ || IsSparse(c->type_) || c->has_sparse_descendant_;
    }
    s.cell_alignment_ = align;
    s.cell_size_ = RoundUp(offset, align);
    const uint64_t n = static_cast<uint64_t>(s.num_cells_);
    uint64_t bytes = 0;
    switch (s.type_) {
      case SNodeType::kRoot:
        s.container_size_ = s.cell_size_;
        s.container_alignment_ = align;
        break;
      case SNodeType::kDense:
        if (__builtin_mul_overflow(n, s.cell_size_, &bytes)) {
          return absl::InvalidArgumentError(absl::StrCat(s.DebugPath(), ": size overflows"));
        }
        s.container_size_ = bytes;
        s.container_alignment_ = align;
        break;
      case SNodeType::kBitmasked:
        if (__builtin_mul_overflow(n, s.cell_size_, &bytes)) {
          return absl::InvalidArgumentError(absl::StrCat(s.DebugPath(), ": size overflows"));
        }
        s.container_alignment_ = std::max<uint64_t>(align, 4);
        s.container_size_ =
            RoundUp(Bitmasked_container_size(s.cell_size_, s.num_cells_), s.container_alignment_);
        break;
      case SNodeType::kPointer:
        s.container_size_ = Pointer_container_size(s.num_cells_);
        s.container_alignment_ = alignof(PointerSlot);  // u32 slots (4-byte atomics)
        s.allocator_node_size_ = s.cell_size_;
        s.allocator_alignment_ = std::max<uint64_t>(8, align);
        break;
      case SNodeType::kDynamic:
        s.container_size_ = sizeof(DynamicNode);
        s.container_alignment_ = alignof(DynamicNode);
        if (__builtin_mul_overflow(static_cast<uint64_t>(s.chunk_size_), s.cell_size_, &bytes)) {
          return absl::InvalidArgumentError(absl::StrCat(s.DebugPath(), ": chunk size overflows"));
        }
        s.allocator_node_size_ = Dynamic_node_size(s.cell_size_, align, s.chunk_size_);
        s.allocator_alignment_ = std::max<uint64_t>(8, align);
        break;
      case SNodeType::kPlace:
        break;
    }
  }
  // Top-down: paths, extents, index axes.
  for (int id = 0; id < num_snodes(); ++id) {
    SNode& s = *nodes_[id];
    if (s.parent_ == nullptr) {
      s.path_ = {&s};
      s.extent_.fill(1);
      s.index_axes_.clear();
      continue;
    }
    const SNode& p = *s.parent_;
    s.path_ = p.path_;
    s.path_.push_back(&s);
    s.extent_ = p.extent_;
    s.index_axes_ = p.index_axes_;
    for (int a : s.axes_) {
      s.extent_[a] *= s.shape_[a];
      if (std::find(s.index_axes_.begin(), s.index_axes_.end(), a) == s.index_axes_.end()) {
        s.index_axes_.push_back(a);
      }
    }
    std::sort(s.index_axes_.begin(), s.index_axes_.end());
  }
  return absl::OkStatus();
}

absl::Status SNodeTree::Finalize() {
  if (finalized_ && build_errors_.empty()) return absl::OkStatus();
  absl::Status status = Validate();
  if (!status.ok()) return status;
  status = ComputeLayout();
  if (!status.ok()) return status;
  finalized_ = true;
  return absl::OkStatus();
}

}  // namespace sparse_runtime
}  // namespace accelmem
