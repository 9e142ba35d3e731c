// File: sparse_runtime/snode_tree.h
//
// Host-side SNode tree: a builder in Taichi's style, validation with clear errors, and the layout
// (cell sizes and alignments, offsets, container sizes, allocator node sizes) that the runtime
// materializes. Ordinary C++ (host code).
//
//   SNodeTree tree;
//   const Axis i(0), j(1), k(2);
//   tree.root().dense({i, j}, {4, 4}).pointer({i, j}, {8, 8}).dynamic(k, 64, /*chunk_size=*/16)
//       .place<float>("x");
//   absl::Status status = tree.Finalize();   // validation + layout
//
// Builder calls never fail on the spot (they chain); problems are recorded and Finalize() reports
// all of them. Rules (upstream runtime.cpp, plus ours):
//   * shapes and chunk sizes are positive; each call names 1..12 distinct axes in [0, 12) with one
//     size per axis;
//   * a `dynamic` has exactly one axis, not used by any ancestor, and is terminal: only `place`
//     children (at least one);
//   * every non-place SNode has at least one child; a place has none; place names are non-empty
//     and unique;
//   * the index space fits: every axis extent (product of shapes along the path) and every
//     container's cell count is at most 2^31 - 1, and sizes do not overflow 64 bits;
//   * no builder call after Finalize();
//   * no limit on the number of SNodes (#4065).
//
// Indices: an SNode's index has one coordinate per axis used on its path, in ascending axis
// order; coordinate a ranges over [0, extent(a)). Shapes need not be powers of two (no padding,
// Taichi's "packed" mode).
//
// Layout (natural alignment, as the LLVM struct types upstream): a cell is a struct of its
// children's containers in declaration order. Containers: root = one cell; dense = n cells;
// bitmasked = n cells then a flag byte per cell at round_up(n * cell, 4), padded to a multiple of
// 4; pointer = u32 slot[n] (cell indices); dynamic = 32-byte DynamicNode; place = the scalar.
#ifndef ACCELMEM_SPARSE_RUNTIME_SNODE_TREE_H_
#define ACCELMEM_SPARSE_RUNTIME_SNODE_TREE_H_

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "sparse_runtime/device/snode_kind_table.h"

namespace accelmem {
namespace sparse_runtime {

inline constexpr int kMaxAxes = 12;

// One enumerator per row of sparse_runtime/device/snode_kind_table.h, in its order (kRoot,
// kDense, kBitmasked, kPointer, kDynamic, kPlace today).
enum class SNodeType {
#define ACCELMEM_SNODE_TYPE_ENUMERATOR(Kind, ...) k##Kind,
  ACCELMEM_SNODE_KINDS(ACCELMEM_SNODE_TYPE_ENUMERATOR)
#undef ACCELMEM_SNODE_TYPE_ENUMERATOR
};
// The table's lower-case name ("dense"), "?" for a value outside the enum.
const char* SNodeTypeName(SNodeType type);
// The table's kSNodeSparse flag (pointer, bitmasked, dynamic): cells can be (de)activated.
bool IsSparse(SNodeType type);
// The table's kSNodeAllocator flag (pointer, dynamic): cells come from a NodeManager and need GC.
bool HasAllocator(SNodeType type);

enum class DataType { kI8, kI16, kI32, kI64, kU8, kU16, kU32, kU64, kF32, kF64 };
int DataTypeSize(DataType dtype);
const char* DataTypeName(DataType dtype);

template <typename T>
constexpr DataType DataTypeOf();

struct Axis {
  constexpr explicit Axis(int axis_id) : id(axis_id) {}
  int id;
};

class SNodeTree;

class SNode {
 public:
  SNode(const SNode&) = delete;
  SNode& operator=(const SNode&) = delete;

  // --- builders: each returns the new child (place returns *this, so places chain) ---
  SNode& dense(std::initializer_list<Axis> axes, std::initializer_list<int64_t> sizes);
  SNode& dense(Axis axis, int64_t size) { return dense({axis}, {size}); }
  SNode& bitmasked(std::initializer_list<Axis> axes, std::initializer_list<int64_t> sizes);
  SNode& bitmasked(Axis axis, int64_t size) { return bitmasked({axis}, {size}); }
  SNode& pointer(std::initializer_list<Axis> axes, std::initializer_list<int64_t> sizes);
  SNode& pointer(Axis axis, int64_t size) { return pointer({axis}, {size}); }
  // chunk_size 0 means `size` (Taichi's default).
  SNode& dynamic(Axis axis, int64_t size, int64_t chunk_size = 0);
  SNode& place(DataType dtype, absl::string_view name);
  template <typename T>
  SNode& place(absl::string_view name) {
    return place(DataTypeOf<T>(), name);
  }

  // --- structure ---
  int id() const { return id_; }
  SNodeType type() const { return type_; }
  const SNode* parent() const { return parent_; }
  const std::vector<SNode*>& children() const { return children_; }
  const std::string& name() const { return name_; }  // places only
  DataType dtype() const { return dtype_; }          // places only
  // Axes of this level, ascending, and the shape per axis (1 for unused axes).
  const std::vector<int>& axes() const { return axes_; }
  int64_t shape(int axis) const { return shape_[axis]; }
  int64_t chunk_size() const { return chunk_size_; }  // dynamic only
  // Human-readable path, e.g. "root.dense(i0:4).pointer(i0:8).place(f32 x)".
  std::string DebugPath() const;

  // --- layout (valid after SNodeTree::Finalize) ---
  // Axes used on the path root..this, ascending: the coordinates of this SNode's index.
  const std::vector<int>& index_axes() const { return index_axes_; }
  int num_indices() const { return static_cast<int>(index_axes_.size()); }
  // Product of shapes along the path root..this, per axis.
  int64_t extent(int axis) const { return extent_[axis]; }
  int64_t num_cells_per_container() const { return num_cells_; }
  uint64_t cell_size() const { return cell_size_; }
  uint64_t cell_alignment() const { return cell_alignment_; }
  uint64_t container_size() const { return container_size_; }
  uint64_t container_alignment() const { return container_alignment_; }
  uint64_t offset_in_parent_cell() const { return offset_in_parent_cell_; }
  // pointer: the cell; dynamic: chunk header + chunk_size cells; 0 otherwise.
  uint64_t allocator_node_size() const { return allocator_node_size_; }
  uint64_t allocator_alignment() const { return allocator_alignment_; }
  // True when a pointer/bitmasked/dynamic SNode is strictly below this one.
  bool has_sparse_descendant() const { return has_sparse_descendant_; }
  // Root..this (root first).
  const std::vector<const SNode*>& path() const { return path_; }

 private:
  friend class SNodeTree;
  SNode(SNodeTree* tree, SNode* parent, int id, SNodeType type);
  SNode& AddChild(SNodeType type, std::initializer_list<Axis> axes,
                  std::initializer_list<int64_t> sizes, const char* what);

  SNodeTree* tree_;
  SNode* parent_;
  int id_;
  SNodeType type_;
  std::vector<SNode*> children_;
  std::string name_;
  DataType dtype_ = DataType::kI32;
  std::vector<int> axes_;
  std::array<int64_t, kMaxAxes> shape_;
  int64_t chunk_size_ = 0;

  std::vector<int> index_axes_;
  std::array<int64_t, kMaxAxes> extent_;
  int64_t num_cells_ = 1;
  uint64_t cell_size_ = 0;
  uint64_t cell_alignment_ = 1;
  uint64_t container_size_ = 0;
  uint64_t container_alignment_ = 1;
  uint64_t offset_in_parent_cell_ = 0;
  uint64_t allocator_node_size_ = 0;
  uint64_t allocator_alignment_ = 0;
  bool has_sparse_descendant_ = false;
  std::vector<const SNode*> path_;
};

class SNodeTree {
 public:
  SNodeTree();
  SNodeTree(const SNodeTree&) = delete;
  SNodeTree& operator=(const SNodeTree&) = delete;

  SNode& root() { return *nodes_[0]; }
  const SNode& root() const { return *nodes_[0]; }

  // Validates the tree and computes the layout. InvalidArgument listing every problem found.
  // Calling it again after success is a no-op.
  absl::Status Finalize();
  bool finalized() const { return finalized_; }

  int num_snodes() const { return static_cast<int>(nodes_.size()); }
  const SNode& snode(int id) const { return *nodes_[id]; }
  // The place named `name`, or null.
  const SNode* FindPlace(absl::string_view name) const;
  // Bytes of the root container (valid after Finalize).
  uint64_t root_size() const { return nodes_[0]->container_size_; }

 private:
  friend class SNode;
  void RecordError(std::string message) { build_errors_.push_back(std::move(message)); }
  absl::Status Validate() const;
  absl::Status ComputeLayout();

  std::vector<std::unique_ptr<SNode>> nodes_;
  std::vector<std::string> build_errors_;
  bool finalized_ = false;
};

// The range [0, extent) that a struct-for over `snode` splits: the cells of the outermost level of
// its path (for a place, of its parent's path; 1 for the root).
int64_t StructForExtent(const SNode& snode);

template <>
constexpr DataType DataTypeOf<int8_t>() {
  return DataType::kI8;
}
template <>
constexpr DataType DataTypeOf<int16_t>() {
  return DataType::kI16;
}
template <>
constexpr DataType DataTypeOf<int32_t>() {
  return DataType::kI32;
}
template <>
constexpr DataType DataTypeOf<int64_t>() {
  return DataType::kI64;
}
template <>
constexpr DataType DataTypeOf<uint8_t>() {
  return DataType::kU8;
}
template <>
constexpr DataType DataTypeOf<uint16_t>() {
  return DataType::kU16;
}
template <>
constexpr DataType DataTypeOf<uint32_t>() {
  return DataType::kU32;
}
template <>
constexpr DataType DataTypeOf<uint64_t>() {
  return DataType::kU64;
}
template <>
constexpr DataType DataTypeOf<float>() {
  return DataType::kF32;
}
template <>
constexpr DataType DataTypeOf<double>() {
  return DataType::kF64;
}

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_SNODE_TREE_H_
