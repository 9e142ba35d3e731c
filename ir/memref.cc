#include "ir/memref.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace accelmem {
namespace ir {

MemRefPtr MemRef::MakeRoot(std::string name, MemorySpace space, int64_t addr, int64_t size,
                           int64_t id, int64_t slots, bool declared) {
  return std::make_shared<MemRef>(std::move(name), space, addr, size, id, nullptr, 0, slots, -1,
                                  declared);
}

MemRefPtr MemRef::MakeView(const MemRefPtr& base, int64_t offset, int64_t size) {
  MemRefPtr root = base->root_ptr();
  return std::make_shared<MemRef>(std::string(), root->space_, kUnplanned, size, root->id_, root,
                                  SaturatingAdd(base->offset_, offset), 0, base->slot_);
}

MemRefPtr MemRef::MakeSlot(const MemRefPtr& base, int64_t slot, int64_t offset, int64_t size) {
  MemRefPtr root = base->root_ptr();
  const int64_t start = SaturatingAdd(SaturatingMul(slot, root->slot_size()), offset);
  return std::make_shared<MemRef>(std::string(), root->space_, kUnplanned, size, root->id_, root,
                                  start, 0, slot);
}

MemRefPtr MemRef::Rebase(const MemRef& like, const MemRefPtr& new_root) {
  if (like.slot() < 0) return MakeView(new_root, like.offset(), like.size());
  // A root that lost slots (a shed pipeline depth) keeps slot k mod its new count; one without
  // slots is the slot itself.
  if (new_root->is_slotted()) {
    return MakeSlot(new_root, like.slot() % new_root->slots(), like.offset_in_slot(), like.size());
  }
  if (like.offset_in_slot() == 0 && like.size() == new_root->size()) return new_root;
  return MakeView(new_root, like.offset_in_slot(), like.size());
}

int64_t MemRef::slot_size() const {
  const MemRef* r = root();
  return r->slots_ > 0 ? r->size_ / r->slots_ : r->size_;
}

int64_t MemRef::offset_in_slot() const {
  if (slot_ < 0) return offset_;
  return offset_ - SaturatingMul(slot_, slot_size());
}

std::string MemRef::RootName(MemorySpace space, int64_t id) {
  return absl::StrCat("mem_", MemorySpaceLowerName(space), "_", id);
}

MemRefPtr MemRef::WithAddr(int64_t addr) const {
  const MemRef* r = root();
  return MakeRoot(r->name_, r->space_, addr, r->size_, r->id_, r->slots_, r->declared_);
}

MemRefPtr MemRef::WithAddrAndSize(int64_t addr, int64_t size) const {
  const MemRef* r = root();
  return MakeRoot(r->name_, r->space_, addr, size, r->id_, r->slots_, r->declared_);
}

int64_t MemRef::addr() const {
  const int64_t base = root()->addr_;
  return base < 0 ? kUnplanned : SaturatingAdd(base, offset_);
}

bool SameAllocation(const MemRef& a, const MemRef& b) { return a.root() == b.root(); }

bool MayAlias(const MemRef& a, const MemRef& b) {
  if (!SameAllocation(a, b)) return false;
  return a.offset() < b.end_offset() && b.offset() < a.end_offset();
}

std::string MemRefToString(const MemRef& m) {
  if (m.is_root()) return m.name();
  if (m.slot() >= 0) {
    const int64_t in_slot = m.offset_in_slot();
    if (in_slot == 0) return absl::StrCat(m.name(), "[", m.slot(), "]");
    return absl::StrCat(m.name(), "[", m.slot(), "]+", in_slot);
  }
  return absl::StrCat(m.name(), "+", m.offset());
}

}  // namespace ir
}  // namespace accelmem
