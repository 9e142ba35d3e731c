#include "ir/memref.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace accelmem {
namespace ir {

MemRefPtr MemRef::MakeRoot(std::string name, MemorySpace space, int64_t addr, int64_t size,
                           int64_t id) {
  return std::make_shared<MemRef>(std::move(name), space, addr, size, id, nullptr, 0);
}

MemRefPtr MemRef::MakeView(const MemRefPtr& base, int64_t offset, int64_t size) {
  MemRefPtr root = base->root_ptr();
  return std::make_shared<MemRef>(std::string(), root->space_, kUnplanned, size, root->id_, root,
                                  SaturatingAdd(base->offset_, offset));
}

std::string MemRef::RootName(MemorySpace space, int64_t id) {
  return absl::StrCat("mem_", MemorySpaceLowerName(space), "_", id);
}

MemRefPtr MemRef::WithAddr(int64_t addr) const {
  const MemRef* r = root();
  return MakeRoot(r->name_, r->space_, addr, r->size_, r->id_);
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
  return absl::StrCat(m.name(), "+", m.offset());
}

}  // namespace ir
}  // namespace accelmem
