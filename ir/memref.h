// MemRef: one region of on-chip (or DDR) memory that tile values live in.
//
// A *root* MemRef is one allocation, defined in the text by
//   mem_vec_0: MemRefType = tile.alloc(Vec, -1, 16384, 0)
// and carries the memory space, the address (-1 until AllocateMemoryAddr plans it), the size
// in bytes and a per-function numeric id. A *view* MemRef is a byte range inside a root
// (written `memref=mem_vec_0+256`): it points at its root and stores its byte offset and size.
// Views of views are folded so that root() is always an allocation.
//
// A *slotted* root (`tile.alloc(Vec, -1, 32768, 0, slots=2)`) is one allocation cut into N equal
// slots (size = N x slot size): the ping-pong buffers of a pipelined loop (upstream PyPTO's
// alloc_multi_tile). A tile in it names a slot, `memref=mem_vec_0[1]` (or `mem_vec_0[1]+64`, a
// window inside that slot); the MemRef is then a view at byte slot x slot size (+ 64) that keeps
// the slot number. Inside a pipelined loop (of depth N, or deeper where memory-reuse shed stages)
// the slot rotates: the value of iteration j lives in slot (slot + j) mod N, so consecutive
// iterations never share bytes while slot k is reused every N iterations. Outside such a loop
// the slot is fixed.
//
// A *declared* root (`tile.alloc(Vec, -1, 4096, 0, declared=1)`) is an allocation the author
// wrote (upstream PyPTO's `pl.MemRef("name")`): init-memref keeps the tiles placed in it,
// memory-reuse never merges or packs it, and the planners keep every other root of its space off
// its bytes for the whole function, whatever the lifetimes (upstream's DeclaredAllocation).
//
// Identity is by object: two MemRef objects are the same buffer only if they are the same
// pointer (SameAllocation compares roots). MemRefs are immutable; a pass that plans addresses
// makes new roots with WithAddr() and remaps the IR (see ir/mutator.h).
#ifndef ACCELMEM_IR_MEMREF_H_
#define ACCELMEM_IR_MEMREF_H_

#include <cstdint>
#include <memory>
#include <string>

#include "ir/checked_math.h"
#include "ir/memory_space.h"

namespace accelmem {
namespace ir {

// The depths a pipelined loop may have, and the slot counts of a slotted MemRef (upstream
// PyPTO's alloc_multi_tile takes 2 to 16 slots).
inline constexpr int64_t kMinPipelineDepth = 2;
inline constexpr int64_t kMaxPipelineDepth = 16;

class MemRef;
using MemRefPtr = std::shared_ptr<const MemRef>;

class MemRef : public std::enable_shared_from_this<MemRef> {
 public:
  // Address value of a root that has not been planned yet.
  static constexpr int64_t kUnplanned = -1;

  // A root allocation.
  // `slots` is 0 for an ordinary root, else the slot count N (size is N x the slot size);
  // `declared`: the author's allocation, closed to every other root (above).
  static MemRefPtr MakeRoot(std::string name, MemorySpace space, int64_t addr, int64_t size,
                            int64_t id, int64_t slots = 0, bool declared = false);
  // A view of `base` (a root or a view) at `offset` bytes from base's start, `size` bytes long.
  // A view of `base` keeps base's slot (its offset stays relative to the root).
  static MemRefPtr MakeView(const MemRefPtr& base, int64_t offset, int64_t size);
  // Slot `slot` of the slotted root of `base`, `offset` bytes into the slot, `size` bytes long.
  static MemRefPtr MakeSlot(const MemRefPtr& base, int64_t slot, int64_t offset, int64_t size);
  // The view `like` (not a root) on another root `new_root`: the same slot (mod the new slot
  // count) and offset in the slot when both are slotted (the new root's slot size may differ);
  // for a slot on a root without slots, the offset in the slot (the root itself when the slot
  // covers it); else the same offset.
  static MemRefPtr Rebase(const MemRef& like, const MemRefPtr& new_root);
  // The canonical root name of the contract: "mem_" + lower(space) + "_" + id.
  static std::string RootName(MemorySpace space, int64_t id);

  // A new root equal to this one (which must be a root) with another address.
  MemRefPtr WithAddr(int64_t addr) const;
  // A new root equal to this one (a root) with another address and size (slot count and
  // declared kept).
  MemRefPtr WithAddrAndSize(int64_t addr, int64_t size) const;

  bool is_root() const { return root_ == nullptr; }
  bool is_view() const { return root_ != nullptr; }
  // The allocation this MemRef lives in (itself for a root).
  const MemRef* root() const { return root_ ? root_.get() : this; }
  MemRefPtr root_ptr() const { return root_ ? root_ : shared_from_this(); }

  // Root's name; the text names views by root name plus offset.
  const std::string& name() const { return root()->name_; }
  MemorySpace space() const { return root()->space_; }
  int64_t id() const { return root()->id_; }
  // Byte offset inside the root (0 for a root).
  int64_t offset() const { return offset_; }
  int64_t size() const { return size_; }
  // offset + size, saturated at INT64_MAX so that a huge (parsed) offset compares as past the
  // root's end instead of wrapping.
  int64_t end_offset() const { return SaturatingAdd(offset_, size_); }
  // Absolute address: the root's address plus the offset, or -1 while the root is unplanned.
  int64_t addr() const;
  bool is_planned() const { return root()->addr_ >= 0; }
  // The root's slot count (0: not slotted) and slot size (its size when not slotted).
  int64_t slots() const { return root()->slots_; }
  bool is_slotted() const { return root()->slots_ > 0; }
  int64_t slot_size() const;
  // True for an allocation the author declared (closed to every other root).
  bool declared() const { return root()->declared_; }
  // The slot this MemRef names (-1: none; a root never names one) and its offset in that slot.
  int64_t slot() const { return slot_; }
  int64_t offset_in_slot() const;

  // Use the factories.
  MemRef(std::string name, MemorySpace space, int64_t addr, int64_t size, int64_t id,
         MemRefPtr root, int64_t offset, int64_t slots = 0, int64_t slot = -1,
         bool declared = false)
      : name_(std::move(name)),
        space_(space),
        addr_(addr),
        size_(size),
        id_(id),
        root_(std::move(root)),
        offset_(offset),
        slots_(slots),
        slot_(slot),
        declared_(declared) {}

 private:
  std::string name_;   // roots only
  MemorySpace space_;  // roots only
  int64_t addr_;       // roots only
  int64_t size_;
  int64_t id_;      // roots only
  MemRefPtr root_;  // null for a root
  int64_t offset_;  // 0 for a root
  int64_t slots_;   // roots only: 0, or the slot count
  int64_t slot_;    // views only: -1, or the slot named
  bool declared_;   // roots only
};

// True if both live in the same allocation (same root object).
bool SameAllocation(const MemRef& a, const MemRef& b);
// True if both are in the same allocation and their byte ranges [offset, offset+size) intersect.
bool MayAlias(const MemRef& a, const MemRef& b);
// "mem_vec_0" for a root, "mem_vec_0+256" for a view, "mem_vec_0[1]" / "mem_vec_0[1]+64" for a
// slot (the text form after `memref=`).
std::string MemRefToString(const MemRef& m);

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_MEMREF_H_
