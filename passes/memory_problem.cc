#include "passes/memory_problem.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ir/visitor.h"

namespace accelmem {
namespace passes {
namespace {

using ir::MemRef;
using ir::Pipe;

struct Access {
  int64_t order = -1;  // call number in program order
  Pipe pipe = Pipe::kNone;
};

// The first write and the last access of every root, by the pipes of the calls that touch it,
// in program order (views add no access: their users count for the root).
class AccessCollector final : public ir::IRVisitor {
 public:
  void VisitAssign(const ir::AssignStmt& s) override { Note(s.value.get(), s.var.get()); }
  void VisitEval(const ir::EvalStmt& s) override { Note(s.expr.get(), nullptr); }

  absl::flat_hash_map<const MemRef*, Access> first_write, last_access;

 private:
  static const MemRef* RootOf(const ir::Var* v) {
    if (v == nullptr || v->type == nullptr) return nullptr;
    const ir::MemRefPtr& m = ir::MemRefOf(*v->type);
    return m != nullptr ? m->root() : nullptr;
  }
  void Note(const ir::Expr* e, const ir::Var* result) {
    const ir::Call* call = e != nullptr ? ir::AsCall(e) : nullptr;
    if (call == nullptr) return;
    const ir::OpDef* def = ir::OpRegistry::Global().Find(call->op);
    if (def == nullptr) return;
    const int64_t order = next_++;
    for (size_t i = 0; i < call->args.size(); ++i) {
      const Pipe pipe = def->OperandPipe(*call, static_cast<int>(i));
      if (pipe == Pipe::kNone) continue;
      if (const MemRef* root = RootOf(ir::AsVar(call->args[i].get()))) {
        last_access[root] = {order, pipe};
      }
    }
    const Pipe pipe = def->OperandPipe(*call, -1);
    if (pipe == Pipe::kNone) return;
    if (const MemRef* root = RootOf(result)) {
      first_write.try_emplace(root, Access{order, pipe});
      last_access[root] = {order, pipe};
    }
  }
  int64_t next_ = 0;
};

// The depth each slotted root's pipelined loop asks for: the `pipeline=` of the innermost
// pipelined loop around a value that names one of its slots (a root used outside any such loop
// has only fixed slots: its own slot count).
class PipelineDepths final : public ir::IRVisitor {
 public:
  void VisitFor(const ir::ForStmt& f) override {
    if (f.pipeline > 0) depths_.push_back(f.pipeline);
    IRVisitor::VisitFor(f);
    if (f.pipeline > 0) depths_.pop_back();
  }
  void VisitVarDef(const ir::Var& v) override {
    const ir::MemRefPtr& m = ir::MemRefOf(*v.type);
    if (m == nullptr || !m->is_slotted() || m->slot() < 0 || depths_.empty()) return;
    depth.try_emplace(m->root(), depths_.back());
  }

  absl::flat_hash_map<const MemRef*, int64_t> depth;

 private:
  std::vector<int64_t> depths_;
};

// One pipeline group per slotted root (ir/memref.h): accelmem places a slotted root as one block
// of N slots, so the group's one member is that block, whose slots are the stages (stage 0,
// residue 0: slot k holds iteration k mod N's values); depth is the loop's `pipeline=`, effective
// depth the slots the root keeps (fewer where memory-reuse shed depth), slot size the block's
// size over its slots.
void AddPipelineGroups(const ir::Function& function, MemoryProblem* out) {
  PipelineDepths depths;
  depths.VisitFunction(function);
  policy::DsaProblem& p = out->document.problem;
  for (size_t i = 0; i < out->buffers.size(); ++i) {
    const MemRef* root = out->buffers[i].root;
    if (!root->is_slotted()) continue;
    auto d = depths.depth.find(root);
    const int64_t depth = std::max(root->slots(), d != depths.depth.end() ? d->second : 0);
    policy::DsaPipelineGroup g;
    g.pool = static_cast<uint32_t>(root->space());
    g.slot_size = std::max<uint64_t>(1, p.buffers[i].size / static_cast<uint64_t>(root->slots()));
    g.depth = static_cast<uint32_t>(depth);
    g.effective_depth = static_cast<uint32_t>(root->slots());
    g.members.push_back({static_cast<uint32_t>(i), 0, 0});
    if (!p.pypto_structure) p.pypto_structure.emplace();
    g.group = static_cast<uint32_t>(p.pypto_structure->pipeline_groups.size());
    p.pypto_structure->pipeline_groups.push_back(std::move(g));
  }
}

// The separations of `out`'s problem, whatever the lifetimes: storage layouts and declared
// allocations (see memory_problem.h).
void AddSeparations(MemoryProblem* problem) {
  MemoryProblem& out = *problem;
  policy::DsaProblem& p = out.document.problem;
  // Storage layouts: every ND/NZ pair of a separating pool, whatever the lifetimes.
  for (size_t a = 0; a < p.buffers.size(); ++a) {
    const ProblemBuffer& x = out.buffers[a];
    if (!x.layout) continue;
    for (size_t b = a + 1; b < p.buffers.size(); ++b) {
      const ProblemBuffer& y = out.buffers[b];
      if (x.space != y.space || !y.layout || *x.layout == *y.layout) continue;
      out.layout_pairs.push_back({static_cast<uint32_t>(a), static_cast<uint32_t>(b)});
      p.constraints.separations.push_back({static_cast<uint32_t>(a),
                                           static_cast<uint32_t>(b),
                                           {policy::DsaSeparationReason::kTargetHazard}});
    }
  }
  // Declared allocations: closed to every other buffer of their pool, whatever the lifetimes
  // (upstream's DeclaredAllocation separation; schema v1's reason for it is semantic_no_alias).
  // A pair that is also a layout pair gets the reason added to its separation.
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, size_t> layout_separation;
  for (size_t i = 0; i < p.constraints.separations.size(); ++i) {
    const policy::DsaSeparation& s = p.constraints.separations[i];
    layout_separation[{s.first, s.second}] = i;
  }
  for (size_t a = 0; a < p.buffers.size(); ++a) {
    const ProblemBuffer& x = out.buffers[a];
    if (!x.root->declared()) continue;
    for (size_t b = 0; b < p.buffers.size(); ++b) {
      const ProblemBuffer& y = out.buffers[b];
      // Each pair once: a declared pair by its smaller index.
      if (b == a || x.space != y.space || (y.root->declared() && b < a)) continue;
      const policy::DsaPair pair{static_cast<uint32_t>(std::min(a, b)),
                                 static_cast<uint32_t>(std::max(a, b))};
      out.declared_pairs.push_back(pair);
      const policy::DsaSeparationReason reason = policy::DsaSeparationReason::kSemanticNoAlias;
      auto same = layout_separation.find({pair.first, pair.second});
      if (same != layout_separation.end()) {
        p.constraints.separations[same->second].reasons.push_back(reason);
      } else {
        p.constraints.separations.push_back({pair.first, pair.second, {reason}});
      }
    }
  }
}

}  // namespace

MemoryProblem BuildMemoryProblem(const ir::Function& function, const Liveness& liveness,
                                 const MemoryProblemOptions& options) {
  const policy::MemoryAllocatorPolicy& pol = *options.policy;
  MemoryProblem out;
  policy::DsaProblemDocument& doc = out.document;
  doc.profile = "pypto_research_v1";
  doc.instance = function.name;
  doc.metadata["producer"] = "accelmem";
  doc.metadata["backend"] = options.backend_name;
  doc.metadata["lifetime_ordering"] = "accelmem_liveness_3_steps_per_statement";
  doc.metadata["memory_space_ids"] = "accelmem_memory_space_v1";
  doc.metadata["solver_input"] = "after_init_memref_and_carry_fixups";
  policy::DsaProblem& p = doc.problem;
  p.objective.terms = {policy::DsaObjectiveTerm::kCapacityOverflow,
                       policy::DsaObjectiveTerm::kReuseCost, policy::DsaObjectiveTerm::kTotalPeak};

  // Roots and slots, in first-definition order.
  std::vector<const MemRef*> roots;
  absl::flat_hash_map<const MemRef*, int64_t> slot;
  ir::ForEachDef(function, [&](const ir::Var& v) {
    const ir::MemRefPtr& m = ir::MemRefOf(*v.type);
    if (m == nullptr || !pol.ShouldAllocate(m->space())) return;
    auto [it, fresh] = slot.try_emplace(m->root(), m->root()->size());
    if (fresh) roots.push_back(m->root());
    it->second = std::max(it->second, m->end_offset());
  });
  absl::flat_hash_map<const MemRef*, std::pair<int64_t, int64_t>> life;
  for (const RootLifetime& l : ComputeRootLifetimes(liveness)) life[l.root] = {l.start, l.end};
  // The values each root holds, and the one written first.
  absl::flat_hash_map<const MemRef*, std::vector<const ValueLife*>> held;
  for (const ValueLife& v : liveness.values) {
    if (v.memref != nullptr) held[v.memref->root()].push_back(&v);
  }
  AccessCollector access;
  access.VisitFunction(function);

  std::set<int> pooled;  // spaces that have their pool
  // The pool of `space`, made on first use: the backend's capacity, the reserves in its space.
  auto add_pool = [&](ir::MemorySpace space) {
    if (!pooled.insert(static_cast<int>(space)).second) return;
    policy::DsaPool pool;
    pool.id = static_cast<uint32_t>(space);
    pool.name = std::string(ir::MemorySpaceName(space));
    const int64_t cap = backends::MemSize(options.backend, space);
    if (cap > 0) pool.capacity = static_cast<uint64_t>(cap);
    if (space == options.reserve_space) pool.reserved_ranges = options.reserved;
    p.pools.push_back(std::move(pool));
  };
  for (const MemRef* root : roots) {
    auto l = life.find(root);
    if (l == life.end()) {
      out.lifeless.push_back(root);
      continue;
    }
    const ir::MemorySpace space = root->space();
    add_pool(space);
    policy::DsaBuffer b;
    b.id = static_cast<uint32_t>(p.buffers.size());
    b.name = root->name();
    b.size = static_cast<uint64_t>(slot[root]);
    b.alignment = std::max<uint64_t>(1, pol.AlignAddress(1, space));
    b.live_intervals = {{l->second.first, std::max(l->second.second, l->second.first + 1)}};
    b.allowed_pools = {static_cast<uint32_t>(space)};
    ProblemBuffer info;
    info.root = root;
    info.space = space;
    std::vector<std::string> members;
    const ValueLife* first = nullptr;
    for (const ValueLife* v : held[root]) {
      members.push_back(v->var->name);
      if (first == nullptr || v->start < first->start) first = v;
    }
    if (first != nullptr) {
      info.first_value = first->var->name;
      info.first_loc = first->var->loc;
    }
    for (const ValueLife* v : held[root]) {
      if (const ir::TileType* t = ir::AsTile(v->var->type)) {
        info.layout = backends::SeparatedLayout(options.backend, *t);
        if (info.layout) break;
      }
    }
    if (auto it = access.first_write.find(root); it != access.first_write.end()) {
      info.first_write = it->second.pipe;
    }
    if (auto it = access.last_access.find(root); it != access.last_access.end()) {
      info.last_access = it->second.pipe;
    }
    if (members.size() > 1) {
      if (!p.pypto_structure) p.pypto_structure.emplace();
      p.pypto_structure->alias_classes.push_back({b.id, std::move(members)});
    }
    p.buffers.push_back(std::move(b));
    out.buffers.push_back(std::move(info));
  }
  // A reserve space without tiles still gets its pool, so that the reserves are checked.
  if (!options.reserved.empty()) add_pool(options.reserve_space);
  AddPipelineGroups(function, &out);

  // Penalties and in-place pairs, pool by pool (buffers of one pool only).
  for (size_t a = 0; a < p.buffers.size(); ++a) {
    for (size_t b = 0; b < p.buffers.size(); ++b) {
      if (a == b || out.buffers[a].space != out.buffers[b].space) continue;
      const policy::DsaInterval& la = p.buffers[a].live_intervals[0];
      const policy::DsaInterval& lb = p.buffers[b].live_intervals[0];
      if (la.upper > lb.lower) continue;  // a does not end before b starts
      // A declared allocation shares no byte at all (its separations, below).
      if (la.upper == lb.lower && !out.buffers[a].root->declared() &&
          !out.buffers[b].root->declared()) {
        out.in_place.push_back({static_cast<uint32_t>(a), static_cast<uint32_t>(b)});
      }
      const Pipe before = out.buffers[a].last_access, after = out.buffers[b].first_write;
      if (before != Pipe::kNone && after != Pipe::kNone && before != after) {
        if (!p.cost_model) p.cost_model.emplace();
        p.cost_model->reuse_penalties.push_back({static_cast<uint32_t>(a), static_cast<uint32_t>(b),
                                                 1, policy::DsaPenaltyReason::kCrossPipe});
      }
    }
  }
  AddSeparations(&out);
  p.extensions.exact_or_disjoint = out.in_place;
  return out;
}

std::vector<policy::DsaPair> ShiftedInPlace(const MemoryProblem& problem,
                                            const std::vector<uint64_t>& offsets) {
  std::vector<policy::DsaPair> out;
  const std::vector<policy::DsaBuffer>& bufs = problem.document.problem.buffers;
  for (const policy::DsaPair& pair : problem.in_place) {
    const uint64_t a = offsets[pair.first], b = offsets[pair.second];
    const bool overlap = a < b + bufs[pair.second].size && b < a + bufs[pair.first].size;
    if (overlap && a != b) out.push_back(pair);
  }
  return out;
}

PoolPeak ComputePoolPeak(const MemoryProblem& problem, uint32_t pool) {
  const policy::DsaProblem& p = problem.document.problem;
  PoolPeak peak;
  for (const policy::DsaPool& pl : p.pools) {
    if (pl.id != pool) continue;
    for (const policy::DsaAddressRange& r : pl.reserved_ranges) peak.reserved += r.end - r.begin;
  }
  // Sweep: at equal times ends (-) before starts (+), the intervals being half-open.
  std::vector<std::pair<int64_t, int64_t>> events;  // (time, +-size)
  for (const policy::DsaBuffer& b : p.buffers) {
    if (b.allowed_pools.empty() || b.allowed_pools[0] != pool) continue;
    const int64_t size = static_cast<int64_t>(policy::AlignUp(b.size, b.alignment));
    for (const policy::DsaInterval& i : b.live_intervals) {
      events.push_back({i.lower, size});
      events.push_back({i.upper, -size});
    }
  }
  std::sort(events.begin(), events.end());
  int64_t load = 0;
  peak.load = peak.reserved;
  for (const auto& [t, delta] : events) {
    load += delta;
    if (static_cast<uint64_t>(load) + peak.reserved > peak.load) {
      peak.load = static_cast<uint64_t>(load) + peak.reserved;
      peak.time = t;
    }
  }
  for (const policy::DsaBuffer& b : p.buffers) {
    if (b.allowed_pools.empty() || b.allowed_pools[0] != pool) continue;
    for (const policy::DsaInterval& i : b.live_intervals) {
      if (i.lower <= peak.time && peak.time < i.upper) {
        peak.live.push_back(b.id);
        break;
      }
    }
  }
  std::stable_sort(peak.live.begin(), peak.live.end(),
                   [&](uint32_t x, uint32_t y) { return p.buffers[x].size > p.buffers[y].size; });
  return peak;
}

std::string DescribeProgramPoint(const MemoryProblem& problem, int64_t time) {
  std::string out = absl::StrCat("statement ", time / 3);
  const std::vector<policy::DsaBuffer>& bufs = problem.document.problem.buffers;
  for (size_t i = 0; i < bufs.size(); ++i) {
    if (bufs[i].live_intervals[0].lower != time || problem.buffers[i].first_value.empty()) {
      continue;
    }
    const ir::SourceLoc loc = problem.buffers[i].first_loc;
    absl::StrAppend(&out, " (", loc.known() ? absl::StrCat("line ", loc.line, ", ") : "", "where '",
                    problem.buffers[i].first_value, "' is defined)");
    break;
  }
  return out;
}

std::string DescribePoolPeak(const MemoryProblem& problem, uint32_t pool) {
  const PoolPeak peak = ComputePoolPeak(problem, pool);
  const policy::DsaProblem& p = problem.document.problem;
  std::string out = absl::StrCat("the peak is at ", DescribeProgramPoint(problem, peak.time),
                                 ": LOAD ", peak.load, " bytes");
  if (peak.reserved > 0) absl::StrAppend(&out, " (", peak.reserved, " of them reserved)");
  for (const policy::DsaPool& pl : p.pools) {
    if (pl.id == pool && pl.capacity) {
      absl::StrAppend(&out, " against a capacity of ", *pl.capacity);
    }
  }
  absl::StrAppend(&out, "; largest live buffers:");
  for (size_t i = 0; i < peak.live.size() && i < 5; ++i) {
    const uint32_t id = peak.live[i];
    const std::string& value = problem.buffers[id].first_value;
    absl::StrAppend(&out, i == 0 ? " " : ", ", "'", p.buffers[id].name, "'",
                    value.empty() ? "" : absl::StrCat(" ('", value, "')"), " ", p.buffers[id].size,
                    " bytes");
  }
  if (peak.live.empty()) absl::StrAppend(&out, " none");
  return out;
}

}  // namespace passes
}  // namespace accelmem
