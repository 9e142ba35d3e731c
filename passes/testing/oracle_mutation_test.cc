// Evidence that the plan_simulator oracle can fail: correct plans broken on purpose, each of which
// it must flag with the finding its bug calls for, and the one pipeline configuration known to be
// unsafe, which it must flag on fixed seeds. An oracle that accepted every plan would still pass
// the property test; it cannot pass these.
//
// Each mutation applies only where the bug it makes is certain from the IR alone (a read of a
// value after a write over its bytes, in blocks every simulation runs), so "caught == made" is a
// claim about the oracle, not about which mutants happen to be harmless.
#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/expr.h"
#include "ir/function.h"
#include "ir/memref.h"
#include "ir/mutator.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/program.h"
#include "ir/stmt.h"
#include "ir/types.h"
#include "passes/testing/pipeline_check.h"
#include "passes/testing/plan_simulator.h"
#include "passes/testing/program_generator.h"

namespace accelmem {
namespace passes_testing {
namespace {

constexpr uint64_t kSeeds = 100;  // generated programs planned by the default pipeline
constexpr int kPerProgram = 3;    // mutants of one kind per program, at most

struct Planned {
  uint64_t seed = 0;
  ir::ProgramPtr program;
};

// Generated programs planned by the default pipeline (none:reuse:sequential), each checked clean
// first: a finding on a mutant must come from the mutation.
const std::vector<Planned>& Corpus() {
  static const std::vector<Planned>* corpus = [] {
    auto* out = new std::vector<Planned>();
    const PipelineConfig config;
    for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
      const CheckResult r = CheckProgram(GenerateProgram(seed).text, config);
      EXPECT_TRUE(r.failures.empty())
          << "seed " << seed << ": " << r.failures[0].kind << " " << r.failures[0].detail;
      if (!r.failures.empty() || r.planned.empty()) continue;
      absl::StatusOr<ir::ProgramPtr> p = ir::ParseProgram(r.planned, "<planned>");
      EXPECT_TRUE(p.ok()) << p.status();
      if (p.ok()) out->push_back({seed, *p});
    }
    return out;
  }();
  return *corpus;
}

std::string Dump(const std::vector<Finding>& fs) {
  std::vector<std::string> lines;
  for (const Finding& f : fs) lines.push_back(f.ToString());
  return fs.empty() ? "(no finding)" : absl::StrJoin(lines, "\n");
}

bool HasKind(const std::vector<Finding>& fs, FindingKind kind) {
  for (const Finding& f : fs) {
    if (f.kind == kind) return true;
  }
  return false;
}

// A mutant and the finding it must produce.
struct Mutant {
  std::string what;  // seed, function and the change, for the failure message
  ir::ProgramPtr program;
};

// Simulates every mutant; each must have a finding of `kind`. Returns the number caught.
int CountCaught(const std::string& name, const std::vector<Mutant>& mutants, FindingKind kind) {
  int caught = 0;
  for (const Mutant& m : mutants) {
    const std::vector<Finding> fs = SimulatePlannedProgram(*m.program);
    if (HasKind(fs, kind)) {
      ++caught;
    } else {
      ADD_FAILURE() << name << " not caught as " << FindingKindName(kind) << ": " << m.what << "\n"
                    << Dump(fs) << "\n"
                    << ir::PrintProgram(*m.program);
    }
  }
  std::cout << "mutation " << name << ": made " << mutants.size() << ", caught " << caught
            << std::endl;
  return caught;
}

// ---- reading planned IR (independently of the simulator) ----

// The MemRef of a tile value when it is exactly a root (not a view, not DDR), else null.
const ir::MemRef* ExactRoot(const ir::Var& v) {
  const ir::TileType* t = ir::AsTile(v.type);
  if (t == nullptr || t->memref == nullptr || !t->memref->is_root()) return nullptr;
  if (!ir::IsOnChip(t->space) || t->memref->addr() < 0) return nullptr;
  return t->memref.get();
}

// The roots of a function, from its tile.alloc statements.
std::vector<ir::MemRefPtr> Roots(const ir::Function& f) {
  std::vector<ir::MemRefPtr> out;
  for (const ir::StmtPtr& s : ir::BodyStmts(f.body)) {
    if (ir::AsAllocCall(*s) == nullptr) continue;
    out.push_back(ir::MemRefOf(*ir::AsAssign(s.get())->var->type));
  }
  return out;
}

// The call of an assignment or evaluation, else null.
const ir::Call* CallOf(const ir::Stmt& s) {
  if (const ir::AssignStmt* a = ir::AsAssign(&s)) return ir::AsCall(a->value.get());
  if (const ir::EvalStmt* e = ir::AsEval(&s)) return ir::AsCall(e->expr.get());
  return nullptr;
}

// A statement that writes a new value into its result's bytes: an assignment of a call that is
// not a view and not a tile.alloc, with a tile result.
const ir::Var* Writes(const ir::Stmt& s) {
  const ir::AssignStmt* a = ir::AsAssign(&s);
  const ir::Call* c = CallOf(s);
  if (a == nullptr || c == nullptr || ir::AsTile(a->var->type) == nullptr) return nullptr;
  if (c->op == "tile.slice" || c->op == "tile.reshape" || c->op == "tile.alloc") return nullptr;
  return a->var.get();
}

// The tile values a statement reads: call arguments, or a yield's values.
std::vector<const ir::Var*> Reads(const ir::Stmt& s) {
  std::vector<const ir::Var*> out;
  const std::vector<ir::ExprPtr>* args = nullptr;
  if (const ir::Call* c = CallOf(s)) args = &c->args;
  if (const ir::YieldStmt* y = ir::AsYield(&s)) args = &y->values;
  if (args == nullptr) return out;
  for (const ir::ExprPtr& e : *args) {
    const ir::Var* v = ir::AsVar(e.get());
    if (v != nullptr && ir::AsTile(v->type) != nullptr) out.push_back(v);
  }
  return out;
}

// The trip count of a loop with literal bounds, else -1.
int64_t Trips(const ir::ForStmt& fs) {
  const ir::IntImm* a = ir::AsInt(fs.start.get());
  const ir::IntImm* b = ir::AsInt(fs.stop.get());
  const ir::IntImm* c = ir::AsInt(fs.step.get());
  if (a == nullptr || b == nullptr || c == nullptr || c->value <= 0) return -1;
  return b->value <= a->value ? 0 : (b->value - a->value + c->value - 1) / c->value;
}

// Calls `fn` on each block that some simulated path runs for sure: the function body, both
// branches of every if, and bodies of loops with at least one trip (none of these inside a loop
// that may not run).
void ForEachRunBlock(const ir::StmtPtr& body,
                     const std::function<void(const std::vector<ir::StmtPtr>&)>& fn) {
  if (body == nullptr) return;
  const std::vector<ir::StmtPtr> stmts = ir::BodyStmts(body);
  fn(stmts);
  for (const ir::StmtPtr& s : stmts) {
    if (const ir::ForStmt* fs = ir::AsFor(s.get())) {
      if (Trips(*fs) >= 1) ForEachRunBlock(fs->body, fn);
    } else if (const ir::IfStmt* is = ir::AsIf(s.get())) {
      ForEachRunBlock(is->then_body, fn);
      ForEachRunBlock(is->else_body, fn);
    }
  }
}

// Retypes chosen definitions (and so every use of them).
class Retype : public ir::IRMutator {
 public:
  explicit Retype(std::map<const ir::Var*, ir::TypePtr> types) : types_(std::move(types)) {}
  ir::TypePtr MutateDefType(const ir::Var& v) override {
    auto it = types_.find(&v);
    return it == types_.end() ? ir::IRMutator::MutateDefType(v) : it->second;
  }

 private:
  std::map<const ir::Var*, ir::TypePtr> types_;
};

ir::ProgramPtr WithRootAt(const ir::Program& p, size_t fn, const ir::MemRefPtr& root,
                          int64_t addr) {
  return p.WithFunction(fn,
                        ir::RemapMemRefs(p.functions[fn], {{root.get(), root->WithAddr(addr)}}));
}

std::string Where(const Planned& p, size_t fn) {
  return absl::StrCat("seed ", p.seed, ", function '", p.program->functions[fn]->name, "'");
}

// ---- the mutations ----

// (a) Two values read by one statement, each defined earlier in the same block into its own root:
// both are live there. Moving the first one's root onto the other's address makes the later
// definition overwrite the earlier value before that read.
std::vector<Mutant> RootOntoLiveRoot(const Planned& p) {
  std::vector<Mutant> out;
  for (size_t fn = 0; fn < p.program->functions.size(); ++fn) {
    const ir::Function& f = *p.program->functions[fn];
    std::map<const ir::MemRef*, ir::MemRefPtr> roots;
    for (const ir::MemRefPtr& r : Roots(f)) roots[r.get()] = r;
    std::set<std::pair<const ir::MemRef*, const ir::MemRef*>> done;
    ForEachRunBlock(f.body, [&](const std::vector<ir::StmtPtr>& stmts) {
      std::map<const ir::Var*, size_t> defined;
      for (size_t j = 0; j < stmts.size(); ++j) {
        const std::vector<const ir::Var*> reads = Reads(*stmts[j]);
        for (const ir::Var* a : reads) {
          for (const ir::Var* b : reads) {
            const ir::MemRef* ra = ExactRoot(*a);
            const ir::MemRef* rb = ExactRoot(*b);
            if (a == b || !defined.count(a) || !defined.count(b) || ra == nullptr ||
                rb == nullptr || ra == rb || ra->space() != rb->space() ||
                ra->addr() == rb->addr() || !roots.count(ra) ||
                static_cast<int>(out.size()) >= kPerProgram || !done.insert({ra, rb}).second) {
              continue;
            }
            out.push_back({absl::StrCat(Where(p, fn), ": ", ra->name(), " moved to ", rb->name(),
                                        "'s address ", rb->addr(), " (", a->name, " and ", b->name,
                                        " are read by `", ir::PrintStmt(*stmts[j]), "`)"),
                           WithRootAt(*p.program, fn, roots[ra], rb->addr())});
          }
        }
        if (const ir::Var* w = Writes(*stmts[j])) defined[w] = j;
      }
    });
  }
  return out;
}

// (b) Two carries of a loop whose body writes a value at the start of carry l's root and later
// reads carry k (or the reverse). With the carries' MemRefs exchanged, carry k lives in that root
// and the write clobbers it before the read.
std::vector<Mutant> SwappedCarries(const Planned& p) {
  std::vector<Mutant> out;
  for (size_t fn = 0; fn < p.program->functions.size(); ++fn) {
    const ir::FunctionPtr& f = p.program->functions[fn];
    ForEachRunBlock(f->body, [&](const std::vector<ir::StmtPtr>& stmts) {
      for (const ir::StmtPtr& s : stmts) {
        const ir::ForStmt* fs = ir::AsFor(s.get());
        if (fs == nullptr || Trips(*fs) < 1) continue;
        const std::vector<ir::StmtPtr> body = ir::BodyStmts(fs->body);
        // Is `carry` read after a write that starts at `root`, in the body's first iteration?
        auto clobbered_if_at = [&](const ir::Var& carry, const ir::MemRef* root) {
          bool written = false;
          for (const ir::StmtPtr& b : body) {
            for (const ir::Var* r : Reads(*b)) {
              if (written && r == &carry) return true;
            }
            const ir::Var* w = Writes(*b);
            const ir::TileType* t = w ? ir::AsTile(w->type) : nullptr;
            if (t != nullptr && t->memref != nullptr && t->memref->root() == root &&
                t->memref->offset() == 0) {
              written = true;
            }
          }
          return false;
        };
        for (size_t k = 0; k < fs->iter_args.size(); ++k) {
          for (size_t l = k + 1; l < fs->iter_args.size(); ++l) {
            const ir::Var& ck = *fs->iter_args[k];
            const ir::Var& cl = *fs->iter_args[l];
            const ir::MemRef* rk = ExactRoot(ck);
            const ir::MemRef* rl = ExactRoot(cl);
            if (rk == nullptr || rl == nullptr || rk == rl || rk->space() != rl->space() ||
                rk->addr() == rl->addr() || static_cast<int>(out.size()) >= kPerProgram) {
              continue;
            }
            if (!clobbered_if_at(ck, rl) && !clobbered_if_at(cl, rk)) continue;
            const ir::TileType* tk = ir::AsTile(ck.type);
            const ir::TileType* tl = ir::AsTile(cl.type);
            Retype swap({{&ck, tk->WithMemRef(tl->memref)}, {&cl, tl->WithMemRef(tk->memref)}});
            out.push_back({absl::StrCat(Where(p, fn), ": carries ", ck.name, " (", rk->name(),
                                        ") and ", cl.name, " (", rl->name(), ") swapped"),
                           p.program->WithFunction(fn, swap.MutateFunction(f))});
          }
        }
      }
    });
  }
  return out;
}

// (c) A slice (literal origin, in a block that runs) moved 32 bytes off its physical offset.
std::vector<Mutant> ShiftedSlices(const Planned& p) {
  std::vector<Mutant> out;
  for (size_t fn = 0; fn < p.program->functions.size(); ++fn) {
    const ir::FunctionPtr& f = p.program->functions[fn];
    ForEachRunBlock(f->body, [&](const std::vector<ir::StmtPtr>& stmts) {
      for (const ir::StmtPtr& s : stmts) {
        const ir::AssignStmt* a = ir::AsAssign(s.get());
        const ir::Call* c = CallOf(*s);
        std::vector<int64_t> origin;
        if (a == nullptr || c == nullptr || c->op != "tile.slice" || c->args.size() < 3 ||
            !ir::GetIntList(*c->args[2], &origin) || static_cast<int>(out.size()) >= kPerProgram) {
          continue;
        }
        const ir::TileType* t = ir::AsTile(a->var->type);
        if (t == nullptr || t->memref == nullptr || !t->memref->is_planned()) continue;
        const ir::MemRefPtr shifted = ir::MemRef::MakeView(
            t->memref->root_ptr(), t->memref->offset() + 32, t->memref->size());
        Retype shift({{a->var.get(), t->WithMemRef(shifted)}});
        out.push_back({absl::StrCat(Where(p, fn), ": slice ", a->var->name, " from offset ",
                                    t->memref->offset(), " to ", t->memref->offset() + 32),
                       p.program->WithFunction(fn, shift.MutateFunction(f))});
      }
    });
  }
  return out;
}

// (d) A planned root 16 bytes off its (aligned) address.
std::vector<Mutant> MisalignedRoots(const Planned& p) {
  std::vector<Mutant> out;
  for (size_t fn = 0; fn < p.program->functions.size(); ++fn) {
    for (const ir::MemRefPtr& r : Roots(*p.program->functions[fn])) {
      if (!ir::IsOnChip(r->space()) || r->addr() < 0) continue;
      if (static_cast<int>(out.size()) >= kPerProgram) break;
      out.push_back({absl::StrCat(Where(p, fn), ": ", r->name(), " at ", r->addr() + 16),
                     WithRootAt(*p.program, fn, r, r->addr() + 16)});
    }
  }
  return out;
}

// (e) A root of the reserve space (Mat in AIC functions, Vec otherwise) moved onto the base of a
// planned system.reserve_buffer range.
std::vector<Mutant> RootsOnReserves(const Planned& p) {
  std::vector<Mutant> out;
  for (size_t fn = 0; fn < p.program->functions.size(); ++fn) {
    const ir::Function& f = *p.program->functions[fn];
    const ir::MemorySpace space =
        f.type == ir::FunctionType::kAIC ? ir::MemorySpace::kMat : ir::MemorySpace::kVec;
    ir::MemRefPtr root;
    for (const ir::MemRefPtr& r : Roots(f)) {
      if (r->space() == space && r->addr() >= 0) root = r;
    }
    if (root == nullptr) continue;
    for (const ir::StmtPtr& s : ir::BodyStmts(f.body)) {
      const ir::Call* c = CallOf(*s);
      if (c == nullptr || c->op != "system.reserve_buffer") continue;
      const ir::ExprPtr* base = c->FindKwarg("base");
      const ir::ExprPtr* size = c->FindKwarg("size");
      const ir::IntImm* b = base ? ir::AsInt(base->get()) : nullptr;
      const ir::IntImm* n = size ? ir::AsInt(size->get()) : nullptr;
      if (b == nullptr || n == nullptr || b->value < 0 || n->value <= 0) continue;
      if (static_cast<int>(out.size()) >= kPerProgram) break;
      out.push_back(
          {absl::StrCat(Where(p, fn), ": ", root->name(), " moved to reserve base ", b->value),
           WithRootAt(*p.program, fn, root, b->value)});
    }
  }
  return out;
}

// Makes the mutants of every corpus program, checks each is caught, and that enough were made.
void CheckMutation(const std::string& name,
                   const std::function<std::vector<Mutant>(const Planned&)>& mutate,
                   FindingKind kind, int min_made) {
  // min_made is about half of what seeds 1..kSeeds give: a generator change that starves a
  // mutation fails here instead of leaving it untested.
  std::vector<Mutant> mutants;
  for (const Planned& p : Corpus()) {
    for (Mutant& m : mutate(p)) mutants.push_back(std::move(m));
  }
  const int caught = CountCaught(name, mutants, kind);
  EXPECT_EQ(caught, static_cast<int>(mutants.size()));
  EXPECT_GE(static_cast<int>(mutants.size()), min_made) << name << ": too few mutants";
}

// The corpus itself is clean (else a finding on a mutant proves nothing).
TEST(OracleMutationTest, CorpusPlansAreClean) {
  ASSERT_EQ(Corpus().size(), kSeeds);
  for (const Planned& p : Corpus()) {
    const std::vector<Finding> fs = SimulatePlannedProgram(*p.program);
    EXPECT_TRUE(fs.empty()) << "seed " << p.seed << ":\n" << Dump(fs);
  }
}

TEST(OracleMutationTest, RootMovedOntoALiveRoot) {
  CheckMutation("root-onto-live-root", RootOntoLiveRoot, FindingKind::kClobberedRead, 100);
}

TEST(OracleMutationTest, ViewShiftedBy32Bytes) {
  CheckMutation("slice-shifted-32", ShiftedSlices, FindingKind::kViewOffset, 100);
}

TEST(OracleMutationTest, RootMisalignedBy16Bytes) {
  CheckMutation("root-misaligned-16", MisalignedRoots, FindingKind::kMisaligned, 150);
}

TEST(OracleMutationTest, RootOnAReserveRange) {
  CheckMutation("root-on-reserve", RootsOnReserves, FindingKind::kReserveTileOverlap, 50);
}

TEST(OracleMutationTest, LoopCarryRootsSwapped) {
  CheckMutation("carries-swapped", SwappedCarries, FindingKind::kClobberedRead, 40);
}

// A hand-written loop whose two carries are each updated in place, q's first: with their roots
// exchanged, q2 lands on p before p is read. The same swap done by hand keeps this kind covered
// whatever the generator emits.
TEST(OracleMutationTest, HandWrittenCarrySwap) {
  const std::string text = R"(@function(type=AIV)
def f(x: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 1024, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 1024, 1024, 1)
    a: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [16, 16])
    b: Tile[[16, 16], FP32, memref=mem_vec_1] = tile.load(x, [16, 0], [16, 16])
    for i, (p, q) in range(0, 3, 1, init=(a, b)) -> (po: Tile[[16, 16], FP32, memref=mem_vec_0], qo: Tile[[16, 16], FP32, memref=mem_vec_1]):
        q2: Tile[[16, 16], FP32, memref=mem_vec_1] = tile.mul(q, p)
        p2: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.exp(p)
        yield (p2, q2)
    s: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.sub(po, qo)
    o: Tensor[[64, 64], FP32] = tile.store(s, [0, 0], x)
    return o
)";
  absl::StatusOr<ir::ProgramPtr> program = ir::ParseProgram(text, "<test>");
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_TRUE(SimulatePlannedProgram(**program).empty()) << Dump(SimulatePlannedProgram(**program));
  const std::vector<Mutant> mutants = SwappedCarries({0, *program});
  ASSERT_EQ(mutants.size(), 1u);
  const std::vector<Finding> fs = SimulatePlannedProgram(*mutants[0].program);
  ASSERT_TRUE(HasKind(fs, FindingKind::kClobberedRead)) << Dump(fs);
  EXPECT_EQ(fs[0].values[0], "p") << Dump(fs);
}

// Seeds on which init-memref,allocate-memory-addr with the sequential placement (no carry
// fix-ups) gives a plan the oracle must flag; found with
//   pipeline_soak --with_unsafe_sequential --configs=none:no-reuse:sequential
//     --over_capacity_percent=0 --programs=300 --shrink=false --show=1000
// The same programs plan cleanly under the safe configurations: the findings come from the plan.
constexpr uint64_t kUnsafeSeeds[] = {1, 12, 45, 120, 250};

TEST(OracleMutationTest, UnsafeSequentialConfigurationIsFlagged) {
  PipelineConfig unsafe;
  bool found = false;
  for (const PipelineConfig& c : AllPipelineConfigs(/*with_unsafe_sequential=*/true)) {
    if (c.Name() == "none:no-reuse:sequential") {
      unsafe = c;
      found = true;
    }
  }
  ASSERT_TRUE(found);
  PipelineConfig safe = unsafe;
  safe.strategy = passes::PlacementStrategy::kGreedy;
  for (uint64_t seed : kUnsafeSeeds) {
    const std::string text = GenerateProgram(seed).text;
    std::vector<std::string> sim;
    for (const CheckFailure& f : CheckProgram(text, unsafe).failures) {
      if (absl::StartsWith(f.kind, "sim:")) sim.push_back(f.detail);
    }
    EXPECT_FALSE(sim.empty()) << "seed " << seed << ": no finding under " << unsafe.Name();
    const CheckResult r = CheckProgram(text, safe);
    EXPECT_TRUE(r.failures.empty())
        << "seed " << seed << " fails under " << safe.Name() << ": " << r.failures[0].detail;
  }
}

}  // namespace
}  // namespace passes_testing
}  // namespace accelmem
