// A model check of the protocol between StructMeta_mark_changed (struct_meta.h), the writers'
// side, and the host's struct-for list builder (SparseRuntime::ListGen), which clears the flag and
// then walks the tree. Independent of the runtime's code: a tiny machine with explicit per-thread
// store buffers runs every interleaving of a few straight-line programs, and the test checks the
// invariant the list cache relies on, for several protocols:
//
//   once every thread has finished (and every buffer has drained), either the builder saw each
//   writer's new cell or the flag is still set (so the next struct-for makes a new list).
//
// Threads: W0 and W1 each store their cell and then mark; B (the builder) reads the flag, clears it
// with an exchange if it was set, and reads both cells. Memory models: TSO (one FIFO store buffer
// per thread, as x86) and PSO (stores to different addresses may also drain out of order), with
// the buffers drained by nondeterministic steps; an exchange or a fence needs its thread's buffer
// empty. The heavy fence is membarrier's: it completes only after every other thread has passed a
// point at which its own buffer was empty (the IPI's barrier), interleaved with the other steps.
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

// The model's memory: the flag and the two writers' cells.
constexpr int kFlag = 0;
constexpr int kCell0 = 1;
constexpr int kCell1 = 2;
constexpr int kNumAddrs = 3;
constexpr int kNumRegs = 4;

enum class Op {
  kStore,       // addr = value, into the thread's store buffer
  kLoad,        // reg = addr (the youngest own buffered store to addr, else memory)
  kExchange,    // reg = addr; addr = value: atomic on memory, needs an empty buffer (x86 XCHG)
  kFence,       // needs an empty buffer (MFENCE, or any locked instruction)
  kHeavyFence,  // needs an empty buffer, then waits until every other thread passed a barrier
};

struct Instr {
  Op op;
  int addr = 0;
  int value = 0;
  int reg = 0;
  // Executed only when regs[guard] == 0 (guard_zero) or != 0 (!guard_zero); -1: always.
  int guard = -1;
  bool guard_zero = true;
};

Instr Store(int addr, int value) { return {Op::kStore, addr, value}; }
Instr Load(int reg, int addr) { return {Op::kLoad, addr, 0, reg}; }
Instr Exchange(int reg, int addr, int value) { return {Op::kExchange, addr, value, reg}; }
Instr Fence() { return {Op::kFence}; }
Instr HeavyFence() { return {Op::kHeavyFence}; }
Instr IfZero(int reg, Instr i) {
  i.guard = reg;
  i.guard_zero = true;
  return i;
}
Instr IfNonzero(int reg, Instr i) {
  i.guard = reg;
  i.guard_zero = false;
  return i;
}

using Program = std::vector<Instr>;

// One protocol: how a writer marks after storing its cell, and how the builder clears and reads.
struct Protocol {
  const char* name;
  Program (*writer)(int cell);
  Program builder;
};

// The builder's reads of the cells land in these registers.
constexpr int kSawCell0 = 2;
constexpr int kSawCell1 = 3;

// ListGen: a load of the flag, the exchange only if it was set, then the walk (the cell reads).
Program Builder(bool heavy_fence_after_clear) {
  Program p = {Load(0, kFlag), IfNonzero(0, Exchange(1, kFlag, 0))};
  if (heavy_fence_after_clear) p.push_back(IfNonzero(1, HeavyFence()));
  p.push_back(Load(kSawCell0, kCell0));
  p.push_back(Load(kSawCell1, kCell1));
  return p;
}

// The mark before the fix: a load, and a store only if the flag read 0.
Program LoadThenStore(int cell) {
  return {Store(cell, 1), Load(0, kFlag), IfZero(0, Store(kFlag, 1))};
}
// Unconditional read-modify-write of the flag.
Program ExchangeMark(int cell) { return {Store(cell, 1), Exchange(0, kFlag, 1)}; }
// A full fence between the cell's store and the flag's load.
Program FenceThenLoad(int cell) {
  return {Store(cell, 1), Fence(), Load(0, kFlag), IfZero(0, Store(kFlag, 1))};
}
// The cell changed by a read-modify-write (a CAS or AND, as pointer publish and bitmasked
// deactivation do), then the old mark.
Program RmwCellThenLoad(int cell) {
  return {Exchange(1, cell, 1), Load(0, kFlag), IfZero(0, Store(kFlag, 1))};
}

// Scenario: which threads run, and what memory holds when they start.
struct Scenario {
  const char* name;
  bool w0_runs;  // false: W0's change is complete before the others start (cell0 = flag = 1)
};

enum class Model { kTso, kPso };

struct Thread {
  Program program;
  int pc = 0;
  int regs[kNumRegs] = {0, 0, 0, 0};
  std::vector<std::pair<int, int>> buffer;  // (addr, value), oldest first
  bool passed_barrier = false;
  bool done() const { return pc == static_cast<int>(program.size()); }
};

struct State {
  int mem[kNumAddrs] = {0, 0, 0};
  std::vector<Thread> threads;
  int heavy = -1;  // the thread waiting in a heavy fence, or -1
};

class Checker {
 public:
  Checker(Model model, const Protocol& protocol, const Scenario& scenario) : model_(model) {
    State s;
    if (scenario.w0_runs) {
      s.threads.push_back({protocol.writer(kCell0)});
      names_.push_back("W0");
    } else {
      s.mem[kCell0] = 1;
      s.mem[kFlag] = 1;
    }
    s.threads.push_back({protocol.writer(kCell1)});
    names_.push_back("W1");
    s.threads.push_back({protocol.builder});
    names_.push_back("B");
    builder_ = static_cast<int>(s.threads.size()) - 1;
    Explore(s);
  }
  // A violating interleaving (its steps), or empty when the invariant holds in every one.
  const std::vector<std::string>& counterexample() const { return counterexample_; }
  int64_t final_states() const { return final_states_; }
  // Whether some final state has the builder missing W1's cell (with the flag set): the race is
  // real, the invariant is not satisfied by the builder always running last.
  bool builder_can_miss() const { return builder_missed_; }

 private:
  static bool Executes(const Thread& t, const Instr& i) {
    if (i.guard < 0) return true;
    return (t.regs[i.guard] == 0) == i.guard_zero;
  }
  int Read(const Thread& t, const State& s, int addr) const {
    for (auto it = t.buffer.rbegin(); it != t.buffer.rend(); ++it) {
      if (it->first == addr) return it->second;
    }
    return s.mem[addr];
  }
  std::vector<int> Key(const State& s) const {
    std::vector<int> key(s.mem, s.mem + kNumAddrs);
    key.push_back(s.heavy);
    for (const Thread& t : s.threads) {
      key.push_back(t.pc);
      key.insert(key.end(), t.regs, t.regs + kNumRegs);
      key.push_back(t.passed_barrier);
      key.push_back(static_cast<int>(t.buffer.size()));
      for (const auto& [addr, value] : t.buffer) {
        key.push_back(addr);
        key.push_back(value);
      }
    }
    return key;
  }
  void Step(const State& next, const std::string& what) {
    trace_.push_back(what);
    Explore(next);
    trace_.pop_back();
  }
  void Explore(const State& s) {
    if (!counterexample_.empty() || !seen_.insert(Key(s)).second) return;
    bool final_state = s.heavy < 0;
    for (int t = 0; t < static_cast<int>(s.threads.size()); ++t) {
      const Thread& th = s.threads[t];
      const std::string& name = names_[t];
      // Drain steps: the oldest entry (TSO), or the oldest entry of any address (PSO).
      for (size_t e = 0; e < th.buffer.size(); ++e) {
        final_state = false;
        bool older_same_addr = false;
        for (size_t k = 0; k < e; ++k) older_same_addr |= th.buffer[k].first == th.buffer[e].first;
        if (older_same_addr || (model_ == Model::kTso && e > 0)) continue;
        State next = s;
        Thread& n = next.threads[t];
        next.mem[n.buffer[e].first] = n.buffer[e].second;
        n.buffer.erase(n.buffer.begin() + static_cast<std::ptrdiff_t>(e));
        Step(next, name + " drains [" + std::to_string(th.buffer[e].first) +
                       "]=" + std::to_string(th.buffer[e].second));
      }
      // Passing another thread's heavy fence (the IPI's barrier): with an empty buffer.
      if (s.heavy >= 0 && s.heavy != t && !th.passed_barrier && th.buffer.empty()) {
        State next = s;
        next.threads[t].passed_barrier = true;
        Step(next, name + " passes the heavy fence's barrier");
      }
      if (th.done()) continue;
      final_state = false;
      const Instr& i = th.program[th.pc];
      State next = s;
      Thread& n = next.threads[t];
      if (!Executes(th, i)) {
        ++n.pc;
        Step(next, name + " skips a guarded step");
        continue;
      }
      switch (i.op) {
        case Op::kStore:
          n.buffer.push_back({i.addr, i.value});
          ++n.pc;
          Step(next, name + " stores [" + std::to_string(i.addr) + "]=" + std::to_string(i.value));
          break;
        case Op::kLoad:
          n.regs[i.reg] = Read(th, s, i.addr);
          ++n.pc;
          Step(next,
               name + " loads [" + std::to_string(i.addr) + "]=" + std::to_string(n.regs[i.reg]));
          break;
        case Op::kExchange:
          if (!th.buffer.empty()) break;
          n.regs[i.reg] = s.mem[i.addr];
          next.mem[i.addr] = i.value;
          ++n.pc;
          Step(next, name + " exchanges [" + std::to_string(i.addr) +
                         "]: " + std::to_string(n.regs[i.reg]) + " -> " + std::to_string(i.value));
          break;
        case Op::kFence:
          if (!th.buffer.empty()) break;
          ++n.pc;
          Step(next, name + " fences");
          break;
        case Op::kHeavyFence: {
          if (!th.buffer.empty()) break;
          if (s.heavy < 0) {  // enter: every other thread has yet to pass the barrier
            next.heavy = t;
            for (Thread& o : next.threads) o.passed_barrier = false;
            Step(next, name + " enters the heavy fence");
            break;
          }
          bool all_passed = true;
          for (int o = 0; o < static_cast<int>(s.threads.size()); ++o) {
            all_passed &= o == t || s.threads[o].passed_barrier;
          }
          if (!all_passed) break;
          next.heavy = -1;
          ++n.pc;
          Step(next, name + " leaves the heavy fence");
          break;
        }
      }
    }
    if (final_state) Check(s);
  }
  void Check(const State& s) {
    ++final_states_;
    const Thread& b = s.threads[builder_];
    const bool flag_set = s.mem[kFlag] == 1;
    if (b.regs[kSawCell1] == 0 && flag_set) builder_missed_ = true;
    if ((b.regs[kSawCell0] == 1 && b.regs[kSawCell1] == 1) || flag_set) return;
    counterexample_ = trace_;
    counterexample_.push_back("end: flag 0, builder saw cell0 " +
                              std::to_string(b.regs[kSawCell0]) + ", cell1 " +
                              std::to_string(b.regs[kSawCell1]));
  }

  const Model model_;
  std::vector<std::string> names_;
  int builder_ = 0;
  std::set<std::vector<int>> seen_;
  std::vector<std::string> trace_;
  std::vector<std::string> counterexample_;
  int64_t final_states_ = 0;
  bool builder_missed_ = false;
};

const Scenario kScenarios[] = {
    {"W0's change done, flag set", false},
    {"W0 and W1 concurrent", true},
};
const Model kModels[] = {Model::kTso, Model::kPso};
const char* ModelName(Model m) { return m == Model::kTso ? "TSO" : "PSO"; }

std::string Joined(const std::vector<std::string>& steps) {
  std::string out;
  for (const std::string& s : steps) out += "  " + s + "\n";
  return out;
}

// Runs the checker for every scenario and memory model; expects a counterexample in each (`fails`)
// or in none.
void ExpectProtocol(const Protocol& p, bool fails) {
  for (const Scenario& scenario : kScenarios) {
    for (Model model : kModels) {
      Checker checker(model, p, scenario);
      const std::string where =
          std::string(p.name) + ", " + scenario.name + ", " + ModelName(model);
      ASSERT_GT(checker.final_states(), 0) << where;
      if (fails) {
        EXPECT_FALSE(checker.counterexample().empty()) << where << ": no lost mark found";
      } else {
        EXPECT_TRUE(checker.counterexample().empty()) << where << ": lost mark\n"
                                                      << Joined(checker.counterexample());
        EXPECT_TRUE(checker.builder_can_miss()) << where << ": the race never happens";
      }
    }
  }
}

// Rule: the old mark (load the flag, store 1 only if it read 0) loses an invalidation: W1's cell
// store still sits in its buffer while it reads W0's 1, and the builder clears the flag and reads
// the old cell. The checker finds that interleaving (so it can fail).
TEST(StructMetaModelTest, LoadThenStoreLosesTheMark) {
  ExpectProtocol({"load then store", &LoadThenStore, Builder(false)}, /*fails=*/true);
  Checker checker(Model::kTso, {"load then store", &LoadThenStore, Builder(false)}, kScenarios[0]);
  ASSERT_FALSE(checker.counterexample().empty());
  EXPECT_EQ(checker.counterexample().back(), "end: flag 0, builder saw cell0 1, cell1 0");
  std::printf("A lost mark under TSO:\n%s", Joined(checker.counterexample()).c_str());
}

// Rule: with the heavy fence after the builder's clear (membarrier), the old writer-side mark is
// safe: the protocol StructMeta_mark_changed and SparseRuntime::ListGen use.
TEST(StructMetaModelTest, HeavyFenceAfterTheClearKeepsTheMark) {
  ExpectProtocol({"asymmetric fences", &LoadThenStore, Builder(true)}, /*fails=*/false);
}

// Rule: the heavy fence must come after the clear: before it, a writer can store its cell and read
// the old 1 after the fence.
TEST(StructMetaModelTest, HeavyFenceBeforeTheClearLosesTheMark) {
  Program builder = {HeavyFence()};
  for (const Instr& i : Builder(false)) builder.push_back(i);
  ExpectProtocol({"heavy fence before the clear", &LoadThenStore, builder}, /*fails=*/true);
}

// Rule: the writer-side fixes are safe too (what they cost on the hot paths is why the runtime
// uses the asymmetric form): an unconditional exchange of the flag, a full fence before its load,
// or a cell changed by a read-modify-write (which drains the buffer) before the old mark.
TEST(StructMetaModelTest, WriterSideFencesKeepTheMark) {
  ExpectProtocol({"exchange", &ExchangeMark, Builder(false)}, /*fails=*/false);
  ExpectProtocol({"fence then load", &FenceThenLoad, Builder(false)}, /*fails=*/false);
  ExpectProtocol({"rmw cell then load", &RmwCellThenLoad, Builder(false)}, /*fails=*/false);
}

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem
