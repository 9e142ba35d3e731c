#include "passes/memory_reuse.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/mutator.h"
#include "ir/visitor.h"
#include "passes/internal/memory_reuse_steps.h"
#include "policy/memory_allocator_policy.h"

namespace accelmem {
namespace passes {
namespace {

// The slotted roots of one pipelined loop (those its body's values name a slot of, the loop
// being the innermost pipelined one around them), with where the loop sits.
struct PipelineGroup {
  const ir::ForStmt* loop = nullptr;
  size_t nesting = 0;  // pipelined loops around it
  size_t order = 0;    // program order of the loop
  std::vector<ir::MemRefPtr> roots;
};

class PipelineGroups final : public ir::IRVisitor {
 public:
  void VisitFor(const ir::ForStmt& f) override {
    if (f.pipeline > 0) {
      open_.push_back(groups.size());
      groups.push_back({&f, open_.size() - 1, groups.size(), {}});
    }
    IRVisitor::VisitFor(f);
    if (f.pipeline > 0) open_.pop_back();
  }
  void VisitVarDef(const ir::Var& v) override {
    const ir::MemRefPtr& m = ir::MemRefOf(*v.type);
    if (m == nullptr || m->slot() < 0 || !m->is_slotted() || open_.empty()) return;
    std::vector<ir::MemRefPtr>& roots = groups[open_.back()].roots;
    const ir::MemRefPtr root = m->root_ptr();
    if (std::none_of(roots.begin(), roots.end(),
                     [&](const ir::MemRefPtr& r) { return r.get() == root.get(); })) {
      roots.push_back(root);
    }
  }

  std::vector<PipelineGroup> groups;

 private:
  std::vector<size_t> open_;
};

// The bytes the roots of `space` take laid out one after another at the policy's alignment (what
// allocate-memory-addr's default placement needs).
int64_t StackedBytes(const ir::Function& f, ir::MemorySpace space,
                     const policy::MemoryAllocatorPolicy& policy) {
  uint64_t end = 0;
  for (const ir::StmtPtr& s : ir::BodyStmts(f.body)) {
    const ir::AssignStmt* a = ir::AsAssign(s.get());
    const ir::MemRefType* mt =
        a != nullptr && ir::AsAllocCall(*s) != nullptr ? ir::AsMemRefType(a->var->type) : nullptr;
    if (mt == nullptr || mt->memref == nullptr || mt->memref->space() != space) continue;
    end = policy.AlignAddress(end, space) + static_cast<uint64_t>(mt->memref->size());
  }
  return static_cast<int64_t>(end);
}

// A root whose depth the gate may cut: slotted in `space`, more than one slot left, and not
// declared (the author's slot count is the author's).
bool Sheddable(const ir::MemRef& r, ir::MemorySpace space) {
  return r.space() == space && r.slots() > 1 && !r.declared();
}

// The pipeline-stage guard's capacity gate (upstream MemoryReuse, pypto #1475 / #1949 / #2371):
// a pipelined loop keeps one slot per stage while the space can hold its blocks; where the
// space's roots, stacked, exceed its capacity, the innermost group with more than one slot there
// loses one (a root left with one slot is a plain buffer: that loop's stages serialise on it),
// until the space fits or no group has slots left to shed. Each step is a note naming the loop.
ir::FunctionPtr ShedPipelineDepth(ir::FunctionPtr f, const backends::Backend* backend,
                                  const std::function<void(const std::string&)>& on_note) {
  if (backend == nullptr) return f;
  policy::MemoryAllocatorPolicyPtr policy = backends::CreatePolicy(backend);
  for (int i = 0; i < ir::kNumMemorySpaces; ++i) {
    const auto space = static_cast<ir::MemorySpace>(i);
    const int64_t capacity = backends::MemSize(backend, space);
    if (capacity <= 0 || !policy->ShouldAllocate(space)) continue;
    for (;;) {
      const int64_t need = StackedBytes(*f, space, *policy);
      if (need <= capacity) break;
      PipelineGroups finder;
      finder.VisitFunction(*f);
      std::vector<PipelineGroup>& groups = finder.groups;
      std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
        return a.nesting != b.nesting ? a.nesting > b.nesting : a.order > b.order;
      });
      const PipelineGroup* shed = nullptr;
      for (const PipelineGroup& g : groups) {
        for (const ir::MemRefPtr& r : g.roots) {
          if (Sheddable(*r, space) && shed == nullptr) shed = &g;
        }
      }
      if (shed == nullptr) break;
      absl::flat_hash_map<const ir::MemRef*, ir::MemRefPtr> remap;
      std::vector<std::string> names;
      int64_t from = 0;
      for (const ir::MemRefPtr& r : shed->roots) {
        if (!Sheddable(*r, space)) continue;
        const int64_t slots = r->slots() - 1;
        from = std::max(from, r->slots());
        remap[r.get()] = ir::MemRef::MakeRoot(r->name(), space, r->addr(), r->slot_size() * slots,
                                              r->id(), slots > 1 ? slots : 0);
        names.push_back(r->name());
      }
      if (on_note) {
        const ir::SourceLoc loc = shed->loop->loc;
        on_note(absl::StrCat(
            "in function '", f->name, "': ", ir::MemorySpaceName(space),
            " cannot hold the stages of ", "the pipelined loop over '", shed->loop->loop_var->name,
            "'", loc.known() ? absl::StrCat(" (line ", loc.line, ")") : "", ": its buffers need ",
            need, " bytes, above the capacity of ", capacity, "; shed its depth there from ", from,
            " to ", from - 1, " (", absl::StrJoin(names, ", "), ")"));
      }
      f = ir::RemapMemRefs(f, remap);
    }
  }
  return f;
}

}  // namespace

absl::StatusOr<FunctionResult> MemoryReusePass::RunOnFunction(
    const ir::FunctionPtr& function) const {
  absl::StatusOr<FunctionResult> reused =
      internal::Reuse(function, /*share=*/true, options_.backend.get());
  if (!reused.ok()) return reused;
  ir::FunctionPtr shed =
      ShedPipelineDepth(reused->function, options_.backend.get(), options_.on_note);
  if (shed == reused->function) return reused;
  return FunctionResult{shed, true};
}

PassPtr CreateMemoryReusePass(MemoryReuseOptions options) {
  return std::make_unique<MemoryReusePass>(std::move(options));
}

}  // namespace passes
}  // namespace accelmem
