#include "passes/testing/plan_simulator.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/dtype.h"
#include "ir/expr.h"
#include "ir/function.h"
#include "ir/memory_space.h"
#include "ir/printer.h"
#include "ir/stmt.h"
#include "ir/types.h"
#include "passes/testing/internal/value_fingerprint.h"

namespace accelmem {
namespace passes_testing {

const char* FindingKindName(FindingKind kind) {
  switch (kind) {
    case FindingKind::kClobberedRead:
      return "clobbered-read";
    case FindingKind::kNotInplaceOverlap:
      return "not-inplace-overlap";
    case FindingKind::kShiftedInplaceOverlap:
      return "shifted-inplace-overlap";
    case FindingKind::kViewOffset:
      return "view-offset";
    case FindingKind::kViewRoot:
      return "view-root";
    case FindingKind::kViewOutsideRoot:
      return "view-outside-root";
    case FindingKind::kWritesIntoMismatch:
      return "writes-into-mismatch";
    case FindingKind::kReserveOverlap:
      return "reserve-overlap";
    case FindingKind::kReserveTileOverlap:
      return "reserve-tile-overlap";
    case FindingKind::kCapacity:
      return "capacity";
    case FindingKind::kMisaligned:
      return "misaligned";
    case FindingKind::kUnplanned:
      return "unplanned";
    case FindingKind::kMemRefTooSmall:
      return "memref-too-small";
    case FindingKind::kUnlocatable:
      return "unlocatable";
    case FindingKind::kMalformed:
      return "malformed";
    case FindingKind::kStageOverlap:
      return "stage-overlap";
    case FindingKind::kDeclaredShare:
      return "declared-share";
    case FindingKind::kLayoutShare:
      return "layout-share";
  }
  return "?";
}

std::string Finding::ToString() const {
  std::string s = absl::StrCat(FindingKindName(kind), " in function '", function, "'");
  if (stmt >= 0) absl::StrAppend(&s, " at statement ", stmt, " `", stmt_text, "`");
  absl::StrAppend(&s, ": ", message);
  if (!values.empty()) absl::StrAppend(&s, " (values: ", absl::StrJoin(values, ", "), ")");
  if (hi > lo) {
    absl::StrAppend(&s, " ", space, " [", lo, ", ", hi, ")");
    if (other_hi > other_lo) absl::StrAppend(&s, " vs [", other_lo, ", ", other_hi, ")");
  }
  return s;
}

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// a + b without overflow (saturates).
int64_t SatAdd(int64_t a, int64_t b) {
  if (b > 0 && a > kMax - b) return kMax;
  return a + b;
}

// Storage bits of an element, our own table by dtype name.
int64_t ElementBits(ir::DType d) {
  static const std::map<std::string, int64_t> kBits = {
      {"FP32", 32},  {"FP16", 16},  {"BF16", 16}, {"INT8", 8}, {"UINT8", 8}, {"INT16", 16},
      {"INT32", 32}, {"INT64", 64}, {"INT4", 4},  {"FP4", 4},  {"BOOL", 8}};
  auto it = kBits.find(std::string(ir::DTypeName(d)));
  return it == kBits.end() ? 8 : it->second;
}

// Capacity of a space per backend, our own table (0 = unchecked).
int64_t Capacity(const std::string& backend, const std::string& space) {
  static const std::map<std::string, std::map<std::string, int64_t>> kCap = {
      {"ascend910b",
       {{"Vec", 188416},
        {"Mat", 524288},
        {"Left", 65536},
        {"Right", 65536},
        {"Acc", 131072},
        {"Bias", 1024}}},
      {"ascend950",
       {{"Vec", 245760},
        {"Mat", 524288},
        {"Left", 65536},
        {"Right", 65536},
        {"Acc", 262144},
        {"Bias", 4096}}},
  };
  auto b = kCap.find(backend);
  if (b == kCap.end()) return 0;
  auto s = b->second.find(space);
  return s == b->second.end() ? 0 : s->second;
}

// Acc row alignment per backend (0 = no padding).
int64_t AccRowAlign(const std::string& backend, ir::DType d) {
  if (backend == "ascend910b") return ir::DTypeName(d) == "INT32" ? 32 : 16;
  if (backend == "ascend950") return 16;
  return 0;
}

// The layout class of a tile written in `space` where `backend` keeps storage layouts apart (our
// own table: Vec on the ascend950, pypto #2100 / #2517): "ND" or "NZ", a tile stating none
// counting as ND; "" elsewhere (any tiles may share bytes).
std::string LayoutClass(const std::string& backend, const ir::Type* type) {
  const ir::TileType* t = ir::AsTile(type);
  if (t == nullptr || backend != "ascend950" || t->space != ir::MemorySpace::kVec) return "";
  return t->layout == ir::TileLayout::kNZ ? "NZ" : "ND";
}

bool IsNotInplaceSafe(const ir::Call& call) {
  static const std::set<std::string> kOps = {"tile.recip", "tile.rsqrt", "tile.move",
                                             "tile.transpose"};
  if (kOps.count(call.op)) return true;
  if (call.op == "tile.cast" && call.args.size() == 2) {
    const ir::TileType* src = ir::AsTile(ir::TypeOfExpr(*call.args[0]));
    const ir::DTypeImm* dst = ir::AsDType(call.args[1].get());
    return src != nullptr && dst != nullptr && ElementBits(dst->dtype) > ElementBits(src->dtype);
  }
  return false;
}

struct Root {
  std::string name;
  std::string space;
  int64_t addr = -1;
  int64_t size = 0;
  int64_t slots = 0;      // `slots=N` of its tile.alloc (0: not slotted)
  bool declared = false;  // `declared=1`: the author's, no other root may touch its bytes
};

// Where a value's elements lie: the root, the bit offset of its first element, strides in
// elements, and whether it is a whole (contiguous, maybe padded) tile.
struct Layout {
  const Root* root = nullptr;
  int64_t off_bits = 0;
  std::vector<int64_t> dims, strides;
  int64_t bits = 0;
  bool whole = true;
};

struct Inst {
  uint64_t token = 0;
  std::string space;
  int64_t lo = 0, hi = 0;
  Layout layout;
};

struct Seg {
  int64_t lo, hi;
  uint64_t token;
};

std::vector<int64_t> RowMajor(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

using internal::Fingerprint;

class FunctionSim {
 public:
  // `trace` (may be null) receives one output trace per simulated path.
  FunctionSim(const ir::Function& f, const SimulatorOptions& o, std::vector<Finding>* out,
              std::set<std::string>* seen, std::vector<std::vector<TraceEntry>>* trace)
      : f_(f), o_(o), out_(out), seen_(seen), trace_(trace) {}

  void Run() {
    Number(f_.body);
    CollectStatic(f_.body);
    CheckStatic();
    for (int p = 0; p < std::max(1, o_.paths); ++p) {
      path_ = p;
      if_count_ = 0;
      mem_.clear();
      insts_.clear();
      fp_.clear();
      outputs_.clear();
      control_ = Fingerprint("control");
      for (const ir::VarPtr& param : f_.params) {
        fp_[param.get()] = Fingerprint("param").Add(param->name).value();
        Define(*param, nullptr, -1, nullptr);
      }
      ExecBody(f_.body);
      outputs_.push_back({"control", control_.value()});
      if (trace_ != nullptr) trace_->push_back(std::move(outputs_));
      if (!any_if_) break;  // no branches: one path is all there is
    }
  }

 private:
  void Report(FindingKind kind, const ir::Stmt* s, std::vector<std::string> values,
              const std::string& space, int64_t lo, int64_t hi, int64_t olo, int64_t ohi,
              std::string message) {
    Finding fd;
    fd.kind = kind;
    fd.function = f_.name;
    if (s != nullptr) {
      auto it = number_.find(s);
      fd.stmt = it == number_.end() ? -1 : it->second;
      std::string text = ir::PrintStmt(*s);
      fd.stmt_text = text.substr(0, text.find('\n'));
    }
    fd.values = std::move(values);
    fd.space = space;
    fd.lo = lo;
    fd.hi = hi;
    fd.other_lo = olo;
    fd.other_hi = ohi;
    fd.message = std::move(message);
    const std::string key = absl::StrCat(static_cast<int>(kind), "|", fd.function, "|", fd.stmt,
                                         "|", absl::StrJoin(fd.values, ","));
    if (seen_->insert(key).second) out_->push_back(std::move(fd));
  }

  void Number(const ir::StmtPtr& s) {
    if (s == nullptr) return;
    if (const ir::SeqStmts* seq = ir::AsSeq(s.get())) {
      for (const ir::StmtPtr& c : seq->stmts) Number(c);
      return;
    }
    number_[s.get()] = static_cast<int>(number_.size());
    if (const ir::ForStmt* fs = ir::AsFor(s.get())) Number(fs->body);
    if (const ir::IfStmt* is = ir::AsIf(s.get())) {
      any_if_ = true;
      Number(is->then_body);
      Number(is->else_body);
    }
  }

  void CollectStatic(const ir::StmtPtr& s) {
    if (s == nullptr) return;
    if (const ir::SeqStmts* seq = ir::AsSeq(s.get())) {
      for (const ir::StmtPtr& c : seq->stmts) CollectStatic(c);
      return;
    }
    if (const ir::Call* alloc = ir::AsAllocCall(*s)) {
      const ir::AssignStmt* a = ir::AsAssign(s.get());
      const ir::SpaceImm* sp = ir::AsSpace(alloc->args[0].get());
      const ir::IntImm* addr = ir::AsInt(alloc->args[1].get());
      const ir::IntImm* size = ir::AsInt(alloc->args[2].get());
      if (sp == nullptr || addr == nullptr || size == nullptr) {
        Report(FindingKind::kMalformed, s.get(), {a->var->name}, "", 0, 0, 0, 0,
               "tile.alloc without a space, address and size");
        return;
      }
      Root r{a->var->name, std::string(ir::MemorySpaceName(sp->space)), addr->value, size->value};
      if (const ir::ExprPtr* slots = alloc->FindKwarg("slots")) {
        if (const ir::IntImm* n = ir::AsInt(slots->get()); n != nullptr && n->value > 0) {
          r.slots = n->value;
        }
      }
      if (const ir::ExprPtr* d = alloc->FindKwarg("declared")) {
        const ir::IntImm* n = ir::AsInt(d->get());
        r.declared = n != nullptr && n->value == 1;
      }
      roots_[r.name] = r;
      root_stmt_[r.name] = s.get();
      return;
    }
    if (const ir::EvalStmt* e = ir::AsEval(s.get())) {
      const ir::Call* c = ir::AsCall(e->expr.get());
      if (c != nullptr && c->op == "system.reserve_buffer") {
        const ir::ExprPtr* name = c->FindKwarg("name");
        const ir::ExprPtr* size = c->FindKwarg("size");
        const ir::ExprPtr* base = c->FindKwarg("base");
        Reserve r;
        r.stmt = s.get();
        r.name = name && ir::AsString(name->get()) ? ir::AsString(name->get())->value : "?";
        r.size = size && ir::AsInt(size->get()) ? ir::AsInt(size->get())->value : 0;
        r.base = base && ir::AsInt(base->get()) ? ir::AsInt(base->get())->value : -1;
        reserves_.push_back(r);
      }
      return;
    }
    if (const ir::ForStmt* fs = ir::AsFor(s.get())) CollectStatic(fs->body);
    if (const ir::IfStmt* is = ir::AsIf(s.get())) {
      CollectStatic(is->then_body);
      CollectStatic(is->else_body);
    }
  }

  void CheckStatic() {
    for (const auto& kv : roots_) {
      const Root& r = kv.second;
      const ir::Stmt* s = root_stmt_[r.name];
      if (r.space == "DDR") continue;
      if (r.addr < 0) {
        Report(FindingKind::kUnplanned, s, {r.name}, r.space, 0, 0, 0, 0, "root has no address");
        continue;
      }
      if (r.addr % 32 != 0) {
        Report(FindingKind::kMisaligned, s, {r.name}, r.space, r.addr, SatAdd(r.addr, r.size), 0, 0,
               absl::StrCat("address ", r.addr, " is not a multiple of 32"));
      }
      const int64_t cap = Capacity(o_.backend, r.space);
      if (cap > 0 && SatAdd(r.addr, r.size) > cap) {
        Report(FindingKind::kCapacity, s, {r.name}, r.space, r.addr, SatAdd(r.addr, r.size), 0, cap,
               absl::StrCat("root ends beyond the ", r.space, " capacity ", cap));
      }
    }
    // A declared root shares no byte with any other root of its space, whatever the lifetimes.
    for (const auto& [name, d] : roots_) {
      if (!d.declared || d.space == "DDR" || d.addr < 0) continue;
      const int64_t dend = SatAdd(d.addr, d.size);
      for (const auto& [other_name, r] : roots_) {
        if (other_name == name || r.space != d.space || r.addr < 0) continue;
        if (r.declared && other_name < name) continue;  // the pair is reported once
        const int64_t rend = SatAdd(r.addr, r.size);
        if (r.addr < dend && d.addr < rend) {
          Report(FindingKind::kDeclaredShare, root_stmt_[other_name], {other_name, name}, d.space,
                 r.addr, rend, d.addr, dend, "root overlaps a declared allocation");
        }
      }
    }
    const std::string rspace = f_.type == ir::FunctionType::kAIC ? "Mat" : "Vec";
    const int64_t cap = Capacity(o_.backend, rspace);
    for (size_t i = 0; i < reserves_.size(); ++i) {
      const Reserve& a = reserves_[i];
      if (a.base < 0) {
        Report(FindingKind::kUnplanned, a.stmt, {a.name}, rspace, 0, 0, 0, 0,
               "reserve_buffer has no base");
        continue;
      }
      const int64_t aend = SatAdd(a.base, a.size);
      if (cap > 0 && aend > cap) {
        Report(FindingKind::kCapacity, a.stmt, {a.name}, rspace, a.base, aend, 0, cap,
               absl::StrCat("reserve_buffer ends beyond the ", rspace, " capacity ", cap));
      }
      for (size_t j = i + 1; j < reserves_.size(); ++j) {
        const Reserve& b = reserves_[j];
        if (b.base < 0) continue;
        const int64_t bend = SatAdd(b.base, b.size);
        if (a.base < bend && b.base < aend) {
          Report(FindingKind::kReserveOverlap, b.stmt, {b.name, a.name}, rspace, b.base, bend,
                 a.base, aend, "reserve_buffer ranges overlap");
        }
      }
      for (const auto& kv : roots_) {
        const Root& r = kv.second;
        if (r.space != rspace || r.addr < 0) continue;
        const int64_t rend = SatAdd(r.addr, r.size);
        if (r.addr < aend && a.base < rend) {
          Report(FindingKind::kReserveTileOverlap, root_stmt_[r.name], {r.name, a.name}, rspace,
                 r.addr, rend, a.base, aend, "root overlaps a reserve_buffer range");
        }
      }
    }
  }

  // ---- execution ----

  // A function of the path and the if's dynamic index only, never of the plan: traces of
  // differently planned programs compare the same paths (the control entry checks it).
  bool Decide() {
    const int idx = if_count_++;
    bool then = path_ == 0;
    if (path_ >= 2) {
      uint64_t z =
          static_cast<uint64_t>(path_) * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(idx);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      then = ((z ^ (z >> 31)) & 1) != 0;
    }
    control_.Add(then ? "then" : "else");
    return then;
  }

  // Bytes of a whole tile (Acc rows padded per backend).
  int64_t WholeBytes(const ir::TileType& t, const std::vector<int64_t>& dims) const {
    std::vector<int64_t> d = dims;
    if (t.space == ir::MemorySpace::kAcc && d.size() >= 2) {
      const int64_t a = AccRowAlign(o_.backend, t.dtype);
      if (a > 0) d[d.size() - 2] = (d[d.size() - 2] + a - 1) / a * a;
    }
    int64_t n = 1;
    for (int64_t x : d) n = n > 0 && x > kMax / std::max<int64_t>(n, 1) ? kMax : n * x;
    const int64_t bits = ElementBits(t.dtype);
    if (n > kMax / bits) return kMax;
    return (n * bits + 7) / 8;
  }

  // Bytes from the first to the last element of a layout.
  static int64_t SpanBytes(const Layout& l) {
    int64_t last = 0;
    for (size_t i = 0; i < l.dims.size(); ++i) {
      if (l.dims[i] == 0) return 0;
      last += (l.dims[i] - 1) * l.strides[i];
    }
    return ((last + 1) * l.bits + 7) / 8;
  }

  const Root* RootOf(const ir::MemRef& m, const ir::Stmt* s, const std::string& value) {
    auto it = roots_.find(m.name());
    if (it == roots_.end()) {
      Report(FindingKind::kMalformed, s, {value}, "", 0, 0, 0, 0,
             absl::StrCat("memref names no tile.alloc: ", m.name()));
      return nullptr;
    }
    if (m.root()->addr() != it->second.addr) {
      Report(FindingKind::kMalformed, s, {value}, it->second.space, 0, 0, 0, 0,
             absl::StrCat("memref address ", m.root()->addr(), " differs from its tile.alloc's ",
                          it->second.addr));
    }
    return &it->second;
  }

  static bool IsOnChipTile(const ir::Var& v) {
    const ir::TileType* t = ir::AsTile(v.type);
    return t != nullptr && ir::IsOnChip(t->space);
  }

  // An on-chip tile whose bytes are unknown is a finding: every read of it would otherwise go
  // unchecked, and a plan could hide a clobber behind it.
  void Unlocatable(const ir::Var& v, const ir::Stmt* s, const std::string& why) {
    unlocated_.insert(&v);
    insts_.erase(&v);  // no stale bytes from an earlier iteration
    const ir::TileType* t = ir::AsTile(v.type);
    Report(FindingKind::kUnlocatable, s, {v.name},
           t ? std::string(ir::MemorySpaceName(t->space)) : "", 0, 0, 0, 0,
           absl::StrCat("cannot place '", v.name, "': ", why));
  }

  // Gives `v` the instance of its MemRef as a new whole tile (the caller refines views and
  // aliases). Returns false for values that are not tiles, DDR tiles, and tiles it cannot place,
  // which it reports.
  bool Locate(const ir::Var& v, const ir::Stmt* s, Inst* inst) {
    const ir::TileType* t = ir::AsTile(v.type);
    if (t == nullptr || !ir::IsOnChip(t->space)) return false;
    if (t->memref == nullptr) {
      Unlocatable(v, s, "the tile has no MemRef");
      return false;
    }
    auto dims = ir::StaticDims(t->shape);
    if (!dims) {
      Unlocatable(v, s, absl::StrCat("the shape ", ir::ShapeToString(t->shape), " is not static"));
      return false;
    }
    const Root* root = RootOf(*t->memref, s, v.name);
    if (root == nullptr) {
      unlocated_.insert(&v);  // RootOf reported the MemRef naming no tile.alloc
      return false;
    }
    if (root->addr < 0) {
      Unlocatable(v, s, absl::StrCat("its root ", root->name, " has no address"));
      return false;
    }
    inst->space = root->space;
    inst->layout.root = root;
    inst->layout.dims = *dims;
    inst->layout.strides = RowMajor(*dims);
    inst->layout.bits = ElementBits(t->dtype);
    const int64_t offset = PhysicalOffset(*t->memref, *root);
    inst->layout.off_bits = offset * 8;
    inst->layout.whole = true;
    inst->lo = SatAdd(root->addr, offset);
    inst->hi = SatAdd(inst->lo, WholeBytes(*t, *dims));
    return true;
  }

  // The byte offset of a MemRef in its root at this point of the execution: a slot of a slotted
  // root rotates with the iterations of the innermost pipelined loop of its depth (the value of
  // iteration j of slot k lives in slot (k + j) mod N), and is fixed elsewhere.
  int64_t PhysicalOffset(const ir::MemRef& m, const Root& root) const {
    if (m.slot() < 0 || root.slots <= 0) return m.offset();
    const int64_t slot_size = root.size / root.slots;
    const int64_t in_slot = m.offset() - m.slot() * slot_size;
    int64_t slot = m.slot();
    if (!pipelines_.empty() && pipelines_.back().depth >= root.slots) {
      slot = (slot + pipelines_.back().iteration) % root.slots;
    }
    return SatAdd(slot * slot_size, in_slot);
  }

  // A pipelined loop of depth N keeps N iterations in flight: a value written in iteration j
  // must not overlap a value the body wrote in iterations j - N + 1 .. j - 1 (they may still be
  // read by the stages running beside it), whatever the sequential order says. Values in the
  // buffer of one of the loop's carried values are exempt: the carry orders them.
  void CheckStages(const ir::Var& v, const Inst& inst, const ir::Stmt* s) {
    if (pipelines_.empty()) return;
    Pipeline& p = pipelines_.back();
    // A carried value's buffer passes from one iteration to the next: its writes are ordered by
    // the carry, not in flight beside each other.
    if (p.carried_roots.count(inst.layout.root->name)) return;
    for (const InFlight& f : p.in_flight) {
      if (f.iteration == p.iteration || p.iteration - f.iteration >= p.in_flight_depth) continue;
      if (f.space != inst.space || f.hi <= inst.lo || f.lo >= inst.hi) continue;
      Report(FindingKind::kStageOverlap, s, {v.name, f.value}, inst.space, inst.lo, inst.hi,
             std::max(f.lo, inst.lo), std::min(f.hi, inst.hi),
             absl::StrCat("'", v.name, "' of iteration ", p.iteration, " is written over bytes '",
                          f.value, "' of iteration ", f.iteration, " holds; the loop over '",
                          p.loop_var, "' keeps ", p.depth, " iterations in flight"));
    }
    p.in_flight.push_back({v.name, inst.space, inst.lo, inst.hi, p.iteration});
  }

  // How many iterations of a pipelined loop really run at once: its depth, but no more than the
  // slots of any on-chip tile its body defines (a buffer of M slots makes iteration j + M wait
  // for iteration j; a plain buffer serialises the loop, as where memory-reuse shed its depth).
  // Tiles in a carried value's buffer do not count: the carry orders them anyway.
  int64_t InFlightDepth(const ir::ForStmt& fs, const std::set<std::string>& carried) const {
    int64_t depth = fs.pipeline;
    std::function<void(const ir::StmtPtr&)> walk = [&](const ir::StmtPtr& body) {
      if (body == nullptr) return;
      for (const ir::StmtPtr& st : ir::BodyStmts(body)) {
        if (const ir::ForStmt* f = ir::AsFor(st.get())) walk(f->body);
        if (const ir::IfStmt* is = ir::AsIf(st.get())) {
          walk(is->then_body);
          walk(is->else_body);
        }
        if (ir::AsSeq(st.get()) != nullptr) walk(st);
        const ir::AssignStmt* a = ir::AsAssign(st.get());
        const ir::TileType* t = a != nullptr ? ir::AsTile(a->var->type) : nullptr;
        if (t == nullptr || t->memref == nullptr || !ir::IsOnChip(t->space)) continue;
        if (carried.count(t->memref->name())) continue;
        auto it = roots_.find(t->memref->name());
        depth = std::min<int64_t>(
            depth, it != roots_.end() && it->second.slots > 0 ? it->second.slots : 1);
      }
    };
    walk(fs.body);
    return depth;
  }

  void CheckFits(const ir::Var& v, const Inst& inst, const ir::Stmt* s) {
    const Root* r = inst.layout.root;
    if (inst.hi > SatAdd(r->addr, r->size)) {
      Report(FindingKind::kMemRefTooSmall, s, {v.name, r->name}, inst.space, inst.lo, inst.hi,
             r->addr, SatAdd(r->addr, r->size),
             absl::StrCat("value needs ", inst.hi - inst.lo, " bytes at offset ", inst.lo - r->addr,
                          " but its root has ", r->size));
    }
  }

  void Write(const Inst& inst) {
    std::vector<Seg>& segs = mem_[inst.space];
    std::vector<Seg> out;
    const Writer& me = writers_[inst.token];
    for (const Seg& g : segs) {
      if (g.hi <= inst.lo || g.lo >= inst.hi) {
        out.push_back(g);
        continue;
      }
      const Writer& was = writers_[g.token];
      if (!me.layout.empty() && !was.layout.empty() && me.layout != was.layout) {
        Report(FindingKind::kLayoutShare, me.stmt, {me.value, was.value}, inst.space, inst.lo,
               inst.hi, std::max(g.lo, inst.lo), std::min(g.hi, inst.hi),
               absl::StrCat("'", me.value, "' (", me.layout, ") is written over bytes '", was.value,
                            "' (", was.layout, ") held; ", o_.backend,
                            " keeps storage layouts apart in ", inst.space));
      }
      if (g.lo < inst.lo) out.push_back({g.lo, inst.lo, g.token});
      if (g.hi > inst.hi) out.push_back({inst.hi, g.hi, g.token});
    }
    out.push_back({inst.lo, inst.hi, inst.token});
    segs.swap(out);
  }

  uint64_t NewToken(const ir::Var& v, const ir::Stmt* s) {
    writers_.push_back({v.name, s, LayoutClass(o_.backend, v.type.get())});
    return writers_.size() - 1;
  }

  // A new value written at its MemRef (reads done by the caller).
  void Define(const ir::Var& v, const ir::Stmt* s, int, const ir::Call*) {
    Inst inst;
    if (!Locate(v, s, &inst)) return;
    inst.token = NewToken(v, s);
    CheckFits(v, inst, s);
    Write(inst);
    insts_[&v] = inst;
  }

  // Returns false when another value overwrote some of v's bytes (reported).
  bool Read(const ir::Var& v, const ir::Stmt* s) {
    auto it = insts_.find(&v);
    if (it == insts_.end()) {
      // A safety net: whatever left an on-chip tile without bytes, its reads are not checked.
      if (IsOnChipTile(v) && !unlocated_.count(&v)) {
        Unlocatable(v, s, "it is read but the simulation gave it no bytes");
      }
      return true;
    }
    const Inst& inst = it->second;
    for (const Seg& g : mem_[inst.space]) {
      if (g.hi <= inst.lo || g.lo >= inst.hi || g.token == inst.token) continue;
      const Writer& w = writers_[g.token];
      std::string where;
      if (w.stmt != nullptr && number_.count(w.stmt)) {
        where = absl::StrCat(" (written at statement ", number_[w.stmt], ")");
      }
      Report(FindingKind::kClobberedRead, s, {v.name, w.value}, inst.space, inst.lo, inst.hi,
             std::max(g.lo, inst.lo), std::min(g.hi, inst.hi),
             absl::StrCat("reads '", v.name, "' but '", w.value, "' overwrote some of its bytes",
                          where));
      return false;
    }
    return true;
  }

  // The fingerprint of v as computed (not read): for non-tile values, views and aliases.
  uint64_t FpOf(const ir::Var& v) const {
    auto it = fp_.find(&v);
    return it != fp_.end() ? it->second : Fingerprint("undefined").Add(v.name).value();
  }

  // What a read of v yields: its value, or garbage if its bytes were overwritten.
  uint64_t ReadFp(const ir::Var& v, const ir::Stmt* s) {
    return Read(v, s) ? FpOf(v) : internal::kGarbageFingerprint;
  }

  // An op's result: its name, arguments (tile operands by `arg_fps`, as read), keyword
  // arguments and result shape/dtype.
  uint64_t CallFp(const ir::Call& call, const ir::Var* result,
                  const std::vector<uint64_t>& arg_fps) const {
    Fingerprint fp("op");
    fp.Add(call.op).Add(call.args.size());
    auto var_fp = [this](const ir::Var& v) { return FpOf(v); };
    for (size_t k = 0; k < call.args.size(); ++k) {
      const ir::Var* v = ir::AsVar(call.args[k].get());
      if (v != nullptr && ir::AsTile(v->type) != nullptr && k < arg_fps.size()) {
        fp.Add("tile").Add(arg_fps[k]);
      } else {
        internal::AddExpr(*call.args[k], var_fp, &fp);
      }
    }
    fp.Add(call.kwargs.size());
    for (const auto& [key, value] : call.kwargs) {
      fp.Add(key);
      internal::AddExpr(*value, var_fp, &fp);
    }
    if (result != nullptr) internal::AddShapeAndDType(result->type.get(), &fp);
    return fp.value();
  }

  // Reads the tile arguments; `fps` (parallel to the arguments) gets what each read yields.
  void ReadArgs(const ir::Call& call, const ir::Stmt* s, std::vector<const ir::Var*>* tiles,
                std::vector<uint64_t>* fps) {
    for (const ir::ExprPtr& a : call.args) {
      const ir::Var* v = ir::AsVar(a.get());
      if (fps != nullptr) fps->push_back(0);
      if (v == nullptr || ir::AsTile(v->type) == nullptr) continue;
      const uint64_t fp = ReadFp(*v, s);
      if (fps != nullptr) fps->back() = fp;
      if (tiles != nullptr && insts_.count(v)) tiles->push_back(v);
    }
  }

  static bool SameLoc(const Inst& a, const Inst& b) {
    return a.space == b.space && a.lo == b.lo && a.hi == b.hi;
  }

  void View(const ir::Var& v, const ir::Call& call, const ir::Stmt* s) {
    const ir::Var* src = ir::AsVar(call.args[0].get());
    // A view reads nothing: its reads check its bytes, which are its source's.
    fp_[&v] = CallFp(call, &v, {src != nullptr ? FpOf(*src) : 0});
    Inst inst;
    if (src == nullptr || !Locate(v, s, &inst)) return;
    if (!insts_.count(src)) {
      Unlocatable(v, s, absl::StrCat("it is a view of '", src->name, "', which has no bytes"));
      return;
    }
    const Inst& from = insts_[src];
    Layout l = from.layout;
    const std::vector<int64_t> dims = inst.layout.dims;
    if (call.op == "tile.slice") {
      std::vector<int64_t> origin;
      const bool literal = call.args.size() >= 3 && ir::GetIntList(*call.args[2], &origin);
      if (!literal || origin.size() != l.strides.size()) {
        // The physical offset cannot be computed, so the MemRef cannot be checked: say so, and go
        // on at the MemRef's bytes so that later reads are still checked.
        Unlocatable(v, s,
                    literal ? "the slice origin's rank differs from its source frame's"
                            : "the slice origin is not a list of integer literals (dynamic); its "
                              "offset cannot be checked");
        inst.token = from.token;
        insts_[&v] = inst;
        return;
      }
      for (size_t d = 0; d < origin.size(); ++d) l.off_bits += origin[d] * l.strides[d] * l.bits;
      l.dims = dims;
      l.whole = false;
    } else {  // tile.reshape: same first element, the new shape's row-major strides
      l.dims = dims;
      l.strides = RowMajor(dims);
    }
    // Where the elements are: from the actual MemRef offset, spanning the physical strides.
    if (inst.layout.root != from.layout.root) {
      Report(FindingKind::kViewRoot, s, {v.name, src->name}, inst.space, inst.lo, inst.hi, from.lo,
             from.hi,
             absl::StrCat("view in root ", inst.layout.root->name, " but its source is in ",
                          from.layout.root->name));
    } else if (l.off_bits % 8 != 0 || inst.layout.off_bits != l.off_bits) {
      Report(FindingKind::kViewOffset, s, {v.name, src->name}, inst.space, inst.lo,
             inst.lo + (inst.hi - inst.lo), from.layout.root->addr + l.off_bits / 8,
             from.layout.root->addr + l.off_bits / 8 + (inst.hi - inst.lo),
             absl::StrCat("view at offset ", inst.layout.off_bits / 8, " of ",
                          inst.layout.root->name, ", physically at ", l.off_bits / 8,
                          l.off_bits % 8 ? " (not byte aligned)" : ""));
    }
    const int64_t span = l.whole ? inst.hi - inst.lo : SpanBytes(l);
    const Root* r = from.layout.root;
    if (l.off_bits / 8 + span > r->size) {
      Report(FindingKind::kViewOutsideRoot, s, {v.name, src->name}, inst.space,
             r->addr + l.off_bits / 8, SatAdd(r->addr + l.off_bits / 8, span), r->addr,
             SatAdd(r->addr, r->size), "view's elements reach beyond its root");
    }
    Inst out;
    out.token = from.token;
    out.space = inst.space;
    out.layout = l;
    out.layout.root = inst.layout.root;
    out.lo = inst.lo;
    out.hi = SatAdd(inst.lo, span);
    insts_[&v] = out;
  }

  void Assign(const ir::AssignStmt& a) {
    const ir::Stmt* s = &a;
    const ir::Call* call = ir::AsCall(a.value.get());
    if (call == nullptr) {
      if (const ir::Var* src = ir::AsVar(a.value.get())) {
        fp_[a.var.get()] = FpOf(*src);
        if (insts_.count(src)) {
          insts_[a.var.get()] = insts_[src];
        } else if (IsOnChipTile(*a.var)) {
          Unlocatable(*a.var, s, absl::StrCat("it aliases '", src->name, "', which has no bytes"));
        }
      }
      return;
    }
    if (call->op == "tile.alloc") return;
    if ((call->op == "tile.slice" || call->op == "tile.reshape") && !call->args.empty()) {
      View(*a.var, *call, s);
      return;
    }
    std::vector<const ir::Var*> operands;
    std::vector<uint64_t> fps;
    ReadArgs(*call, s, &operands, &fps);
    if (call->op == "tile.move" && !fps.empty()) {
      fp_[a.var.get()] = fps[0];  // a copy: the value it read
    } else if (call->op == "tile.store" && call->args.size() == 3) {
      Fingerprint fp("store");
      fp.Add(fps[0]);
      internal::AddExpr(
          *call->args[1], [this](const ir::Var& v) { return FpOf(v); }, &fp);
      internal::AddExpr(
          *call->args[2], [this](const ir::Var& v) { return FpOf(v); }, &fp);
      fp_[a.var.get()] = fp.value();  // the tensor after the store
      outputs_.push_back({"store " + a.var->name, fp.value()});
    } else {
      fp_[a.var.get()] = CallFp(*call, a.var.get(), fps);
    }
    Inst res;
    if (!Locate(*a.var, s, &res)) return;
    if (call->op == "tile.matmul_acc" && !operands.empty() &&
        operands[0] == ir::AsVar(call->args[0].get())) {
      const Inst& acc = insts_[operands[0]];
      if (!SameLoc(acc, res)) {
        Report(FindingKind::kWritesIntoMismatch, s, {a.var->name, operands[0]->name}, res.space,
               res.lo, res.hi, acc.lo, acc.hi,
               "tile.matmul_acc's result is not at its accumulator's bytes");
      }
    } else {
      const bool unsafe = IsNotInplaceSafe(*call);
      for (const ir::Var* op : operands) {
        const Inst& in = insts_[op];
        if (in.space != res.space || in.hi <= res.lo || in.lo >= res.hi) continue;
        if (unsafe) {
          Report(FindingKind::kNotInplaceOverlap, s, {a.var->name, op->name}, res.space, res.lo,
                 res.hi, in.lo, in.hi,
                 absl::StrCat(call->op, " is not in-place safe but its result overlaps '", op->name,
                              "'"));
        } else if (res.lo > in.lo) {
          Report(FindingKind::kShiftedInplaceOverlap, s, {a.var->name, op->name}, res.space, res.lo,
                 res.hi, in.lo, in.hi,
                 absl::StrCat("result starts inside '", op->name,
                              "' (writes ahead of the reads of an element-wise op)"));
        }
      }
    }
    res.token = NewToken(*a.var, s);
    CheckFits(*a.var, res, s);
    CheckStages(*a.var, res, s);
    Write(res);
    insts_[a.var.get()] = res;
  }

  // Moves values into the locations of `dsts` as one parallel copy: every source is read first,
  // then values not already in place are written.
  void ParallelCopy(const std::vector<const ir::Var*>& srcs, const std::vector<ir::VarPtr>& dsts,
                    const ir::Stmt* s) {
    struct Move {
      const ir::Var* dst;
      Inst inst;
      bool copy;
    };
    std::vector<Move> moves;
    std::vector<std::pair<const ir::Var*, uint64_t>> values;  // copies: each takes what it read
    for (size_t k = 0; k < srcs.size() && k < dsts.size(); ++k) {
      if (srcs[k] == nullptr) continue;
      values.push_back({dsts[k].get(), ReadFp(*srcs[k], s)});
    }
    for (const auto& [dst, fp] : values) fp_[dst] = fp;
    for (size_t k = 0; k < srcs.size() && k < dsts.size(); ++k) {
      Inst dst;
      if (srcs[k] == nullptr || !Locate(*dsts[k], s, &dst)) continue;
      if (!insts_.count(srcs[k])) {
        Unlocatable(
            *dsts[k], s,
            absl::StrCat("it takes the value of '", srcs[k]->name, "', which has no bytes"));
        continue;
      }
      const Inst& from = insts_[srcs[k]];
      if (from.space == dst.space && from.lo == dst.lo) {
        moves.push_back({dsts[k].get(), from, false});  // already in place: the same bytes
        continue;
      }
      dst.token = NewToken(*dsts[k], s);
      moves.push_back({dsts[k].get(), dst, true});
    }
    for (const Move& m : moves) {
      if (m.copy) Write(m.inst);
    }
    for (const Move& m : moves) insts_[m.dst] = m.inst;
  }

  static std::vector<const ir::Var*> Vars(const std::vector<ir::ExprPtr>& es) {
    std::vector<const ir::Var*> out;
    for (const ir::ExprPtr& e : es) out.push_back(ir::AsVar(e.get()));
    return out;
  }

  void For(const ir::ForStmt& fs) {
    const ir::Stmt* s = &fs;
    const ir::IntImm* a = ir::AsInt(fs.start.get());
    const ir::IntImm* b = ir::AsInt(fs.stop.get());
    const ir::IntImm* c = ir::AsInt(fs.step.get());
    int64_t iters = o_.loop_iterations;
    if (a && b && c && c->value != 0) {
      const int64_t span = c->value > 0 ? b->value - a->value : a->value - b->value;
      const int64_t step = c->value > 0 ? c->value : -c->value;
      const int64_t trips = span <= 0 ? 0 : (span + step - 1) / step;
      iters = std::min<int64_t>(trips, o_.loop_iterations);
    }
    control_.Add("for").Add(iters);
    ParallelCopy(Vars(fs.inits), fs.iter_args, s);
    if (fs.pipeline > 0) {
      pipelines_.push_back({fs.pipeline, fs.pipeline, 0, fs.loop_var->name, {}, {}});
      for (const ir::VarPtr& c : fs.iter_args) {
        const ir::TileType* t = ir::AsTile(c->type);
        if (t != nullptr && t->memref != nullptr) {
          pipelines_.back().carried_roots.insert(t->memref->name());
        }
      }
      pipelines_.back().in_flight_depth = InFlightDepth(fs, pipelines_.back().carried_roots);
    }
    for (int64_t i = 0; i < iters; ++i) {
      if (fs.pipeline > 0) pipelines_.back().iteration = i;
      Fingerprint index("index");
      if (a != nullptr && c != nullptr) {
        index.Add(static_cast<uint64_t>(a->value + i * c->value));
      } else {
        index.Add(fs.loop_var->name).Add(i);
      }
      fp_[fs.loop_var.get()] = index.value();
      const ir::YieldStmt* y = ExecBody(fs.body);
      if (y == nullptr) continue;
      std::vector<const ir::Var*> srcs = Vars(y->values);
      ParallelCopy(srcs, fs.iter_args, y);
    }
    if (fs.pipeline > 0) pipelines_.pop_back();
    std::vector<const ir::Var*> finals;
    for (const ir::VarPtr& v : fs.iter_args) finals.push_back(v.get());
    ParallelCopy(finals, fs.return_vars, s);
  }

  void If(const ir::IfStmt& is) {
    const bool then = Decide();
    const ir::StmtPtr& body = then ? is.then_body : is.else_body;
    if (body == nullptr) return;
    const ir::YieldStmt* y = ExecBody(body);
    if (y != nullptr && !is.return_vars.empty()) ParallelCopy(Vars(y->values), is.return_vars, y);
  }

  // Runs a body; returns its yield (not executed), if any.
  const ir::YieldStmt* ExecBody(const ir::StmtPtr& body) {
    const ir::YieldStmt* yield = nullptr;
    for (const ir::StmtPtr& st : ir::BodyStmts(body)) {
      const ir::Stmt* s = st.get();
      if (const ir::AssignStmt* as = ir::AsAssign(s)) {
        Assign(*as);
      } else if (const ir::EvalStmt* e = ir::AsEval(s)) {
        if (const ir::Call* c = ir::AsCall(e->expr.get())) ReadArgs(*c, s, nullptr, nullptr);
      } else if (const ir::ForStmt* fs = ir::AsFor(s)) {
        For(*fs);
      } else if (const ir::IfStmt* is = ir::AsIf(s)) {
        If(*is);
      } else if (const ir::YieldStmt* y = ir::AsYield(s)) {
        yield = y;
      } else if (const ir::ReturnStmt* r = ir::AsReturn(s)) {
        Fingerprint fp("return");
        for (const ir::ExprPtr& v : r->values) {
          if (const ir::Var* var = ir::AsVar(v.get())) fp.Add(ReadFp(*var, s));
        }
        outputs_.push_back({"return", fp.value()});
      } else if (ir::AsSeq(s) != nullptr) {
        ExecBody(st);
      }
    }
    return yield;
  }

  struct Reserve {
    const ir::Stmt* stmt = nullptr;
    std::string name;
    int64_t size = 0, base = -1;
  };
  struct InFlight {
    std::string value;
    std::string space;
    int64_t lo, hi;
    int64_t iteration;
  };
  struct Pipeline {
    int64_t depth;
    int64_t in_flight_depth;  // iterations really in flight (InFlightDepth)
    int64_t iteration;
    std::string loop_var;
    std::vector<InFlight> in_flight;      // the body's values, by iteration
    std::set<std::string> carried_roots;  // the roots of the loop's carried values
  };
  struct Writer {
    std::string value;
    const ir::Stmt* stmt;
    std::string layout;  // LayoutClass: "" where layouts may share
  };

  const ir::Function& f_;
  const SimulatorOptions& o_;
  std::vector<Finding>* out_;
  std::set<std::string>* seen_;
  std::unordered_map<const ir::Stmt*, int> number_;
  std::map<std::string, Root> roots_;
  std::map<std::string, const ir::Stmt*> root_stmt_;
  std::vector<Reserve> reserves_;
  bool any_if_ = false;
  int path_ = 0;
  int if_count_ = 0;
  std::map<std::string, std::vector<Seg>> mem_;
  std::unordered_map<const ir::Var*, Inst> insts_;
  std::vector<Writer> writers_;
  std::vector<Pipeline> pipelines_;     // the pipelined loops executing, innermost last
  std::set<const ir::Var*> unlocated_;  // reported as unlocatable (once is enough)
  std::vector<std::vector<TraceEntry>>* trace_;
  std::unordered_map<const ir::Var*, uint64_t> fp_;  // every value's fingerprint on this path
  std::vector<TraceEntry> outputs_;                  // this path's output trace
  Fingerprint control_{"control"};
};

}  // namespace

Simulation SimulateAndTrace(const ir::Program& program, const SimulatorOptions& options) {
  Simulation out;
  std::set<std::string> seen;
  for (const ir::FunctionPtr& f : program.functions) {
    if (f->type == ir::FunctionType::kOrchestration) continue;
    FunctionSim sim(*f, options, &out.findings, &seen, &out.trace[f->name]);
    sim.Run();
  }
  return out;
}

std::vector<Finding> SimulatePlannedProgram(const ir::Program& program,
                                            const SimulatorOptions& options) {
  return SimulateAndTrace(program, options).findings;
}

std::string TraceDifference(const OutputTrace& a, const OutputTrace& b) {
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end() || ib != b.end(); ++ia, ++ib) {
    if (ia == a.end() || ib == b.end() || ia->first != ib->first) {
      return absl::StrCat("function '", ia == a.end() ? ib->first : ia->first,
                          "' is simulated on one side only");
    }
    const auto &pa = ia->second, &pb = ib->second;
    for (size_t p = 0; p < pa.size() || p < pb.size(); ++p) {
      const std::string where = absl::StrCat("function '", ia->first, "', path ", p);
      if (p >= pa.size() || p >= pb.size()) return absl::StrCat(where, " runs on one side only");
      for (size_t k = 0; k < pa[p].size() || k < pb[p].size(); ++k) {
        if (k >= pa[p].size() || k >= pb[p].size()) {
          return absl::StrCat(where, ": ", pa[p].size(), " vs ", pb[p].size(), " outputs");
        }
        if (!(pa[p][k] == pb[p][k])) {
          return absl::StrCat(where, ", output ", k, ": '", pa[p][k].what, "' vs '", pb[p][k].what,
                              "' compute different values");
        }
      }
    }
  }
  return "";
}

}  // namespace passes_testing
}  // namespace accelmem
