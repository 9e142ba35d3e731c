// Threads that share cells. Every thread activates, deactivates and queries the same pointer and
// bitmasked cells and appends to the same dynamic lists, while struct-fors (serial and parallel)
// run and GCs and invariant checks interrupt them; then, round by round, the threads deactivate
// and re-activate the same cells together, add to every active cell through concurrent
// struct-fors (atomically), and read everything back. Only outcomes the runtime defines under
// concurrency are checked, but those exactly: append positions are unique and hold their values,
// a cell activated by many threads at once is allocated once, struct-for visits match the active
// set, cells that nobody deactivates are visited every time, and the allocator invariants
// (CheckInvariants) hold at the end.
//
// Host-API writes and reads of one cell from two threads are data races by the runtime's
// contract (memcpy), so values are written either by one owner thread per cell (while the others
// only change or test activity; a pointer deactivation never touches the cell's memory) or by
// atomic adds through the cell addresses struct-fors hand out, while nobody deactivates. Bitmasked
// deactivation zero-fills the cell, so bitmasked values are written only in the atomic phase.
//
// Sizes: ACCELMEM_STRESS_OPS host-API calls in all (at least; default 20000) from
// ACCELMEM_STRESS_THREADS threads (default 4). The soak target sets one million.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "runtime/sparse_runtime.h"

namespace accelmem {
namespace runtime {

using sparse_runtime::Axis;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;
namespace {

const Axis i(0), j(1);

constexpr int kCells = 64;  // pointer cells of p and bitmasked cells of b, shared by all threads
constexpr int kLists = 4;   // dynamic lists of l, shared by all threads
// Race-phase calls per thread per round; a list's capacity covers every thread appending to it
// on every call of one round (lists are emptied each round), so an append never overflows.
constexpr int kRaceCallsPerRound = 400;
constexpr int kMaxThreads = 8;
constexpr int kListCapacity = 4096;
static_assert(kListCapacity >= kMaxThreads * kRaceCallsPerRound, "a list could overflow");

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoll(v, nullptr, 10);
}

// Cells no thread deactivates (activated before the threads start): every struct-for must visit
// them, and they accumulate the atomic adds of every round.
bool Pinned(int cell) { return cell % 4 == 0; }
// The one thread that writes and reads a non-pinned pointer cell's value through the host API.
int Owner(int cell, int threads) { return (cell / 4) % threads; }

// Cells activated in round r's activation phase (the same sets in every thread).
struct RoundSets {
  bool p[kCells] = {};
  bool b[kCells] = {};
  int p_count = 0;
  int b_count = 0;
};
RoundSets SetsOf(int round) {
  RoundSets s;
  std::mt19937 rng(977u * static_cast<unsigned>(round) + 5u);
  for (int c = 0; c < kCells; ++c) {
    if (Pinned(c)) continue;
    s.p[c] = rng() % 2 == 0;
    s.b[c] = rng() % 3 != 0;
    s.p_count += s.p[c];
    s.b_count += s.b[c];
  }
  return s;
}
constexpr int kPinnedCount = kCells / 4;

// Failures counted instead of asserted inside the threads: a thread that returned early would
// leave the others waiting at the next barrier.
struct Failures {
  int64_t calls = 0;
  int64_t count = 0;
  std::vector<std::string> examples;
  void Fail(std::string what) {
    ++count;
    if (examples.size() < 8) examples.push_back(std::move(what));
  }
  void Ok(const char* what, const absl::Status& s) {
    ++calls;
    if (!s.ok()) Fail(absl::StrCat(what, ": ", s.ToString()));
  }
  template <typename T>
  bool Value(const char* what, const absl::StatusOr<T>& got, T* out) {
    ++calls;
    if (!got.ok()) {
      Fail(absl::StrCat(what, ": ", got.status().ToString()));
      return false;
    }
    *out = *got;
    return true;
  }
  void Expect(bool ok, const std::string& what) {
    if (!ok) Fail(what);
  }
};

// std::barrier (C++20) in C++17: the last thread to arrive runs `on_completion` before any leaves.
class Barrier {
 public:
  Barrier(int n, std::function<void()> on_completion)
      : n_(n), on_completion_(std::move(on_completion)) {}
  void ArriveAndWait() {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t generation = generation_;
    if (++arrived_ == n_) {
      on_completion_();
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  const int n_;
  std::function<void()> on_completion_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
};

struct SharedTree {
  SharedTree() {
    tree.root().pointer(i, kCells).place<int32_t>("p");
    tree.root().bitmasked(i, kCells).place<int32_t>("b");
    tree.root().dense(i, kLists).dynamic(j, kListCapacity, 32).place<int32_t>("l");
    EXPECT_TRUE(tree.Finalize().ok());
    SparseRuntimeOptions options;
    options.chunk_num_elements = 16;  // small chunks: the allocators cross many chunk boundaries
    options.num_threads = 2;
    rt = std::move(SparseRuntime::Create(tree, options)).value();
    p = tree.FindPlace("p");
    b = tree.FindPlace("b");
    l = tree.FindPlace("l");
    ptr = p->parent();
    bm = b->parent();
    dyn = l->parent();
  }
  SNodeTree tree;
  std::unique_ptr<SparseRuntime> rt;
  const SNode* p;
  const SNode* b;
  const SNode* l;
  const SNode* ptr;
  const SNode* bm;
  const SNode* dyn;
};

// One struct-for over `place` (serial or parallel): every visited index in range and visited at
// most once, every pinned cell visited; with `add`, adds 1 to each visited value atomically.
// Returns the number of visits (-1 when the struct-for failed).
int64_t VisitAll(SharedTree& st, const SNode& place, bool parallel, bool add, Failures& f) {
  std::atomic<int> visits[kCells];
  for (auto& v : visits) v.store(0, std::memory_order_relaxed);
  std::atomic<bool> out_of_range{false};
  auto visit = [&](absl::Span<const int32_t> index, void* value) {
    if (index.size() != 1 || index[0] < 0 || index[0] >= kCells) {
      out_of_range.store(true);
      return;
    }
    visits[index[0]].fetch_add(1, std::memory_order_relaxed);
    if (add) __atomic_fetch_add(static_cast<int32_t*>(value), 1, __ATOMIC_RELAXED);
  };
  absl::Status status =
      parallel ? st.rt->ParallelStructFor(
                     place, [&](absl::Span<const int32_t> index, void* v, int) { visit(index, v); })
               : st.rt->StructFor(
                     place, [&](absl::Span<const int32_t> index, void* v) { visit(index, v); });
  f.Ok(parallel ? "parallel struct-for" : "struct-for", status);
  if (!status.ok()) return -1;
  f.Expect(!out_of_range.load(), "struct-for visited an index out of range");
  int64_t total = 0;
  for (int c = 0; c < kCells; ++c) {
    const int n = visits[c].load();
    total += n;
    f.Expect(n <= 1,
             absl::StrCat(place.name(), "[", c, "] visited ", n, " times by one struct-for"));
    if (Pinned(c)) {
      f.Expect(n == 1, absl::StrCat("pinned ", place.name(), "[", c, "] visited ", n, " times"));
    }
  }
  return total;
}

// Per thread and round: the appends it made (list, position, value).
struct Append {
  int list;
  int32_t position;
  int32_t value;
};

// Shared state of one run.
struct StressRun {
  StressRun(SharedTree& st, int threads, int64_t target)
      : st(st), threads(threads), target(target), barrier(threads, [this] { OnBarrier(); }) {}
  // Runs on the last thread to reach a barrier: counts the phase, and at a round's end decides
  // whether another round follows (all threads then see the same decision).
  void OnBarrier() {
    if (++phase % kPhases == 0) {
      ++rounds;
      more = calls.load() < target;
    }
  }
  static constexpr int kPhases = 6;
  SharedTree& st;
  const int threads;
  const int64_t target;
  Barrier barrier;
  Barrier start{threads, [] {}};  // so that no thread races alone while the others start
  std::atomic<int64_t> calls{0};
  std::atomic<int32_t> appended[kLists] = {};  // appends this round, per list
  int64_t phase = 0;                           // guarded by the barrier
  int rounds = 0;                              // guarded by the barrier
  bool more = true;                            // written by the barrier, read after it
  std::atomic<int64_t> lost_writes{0};         // owner writes undone by another's deactivation
};

void RaceCall(StressRun& run, int t, std::mt19937& rng, std::vector<Append>& appends, int32_t& seq,
              Failures& f) {
  SharedTree& st = run.st;
  SparseRuntime& rt = *st.rt;
  const uint32_t r = rng();
  const int c = static_cast<int>((r >> 8) % kCells);
  const int list = static_cast<int>((r >> 16) % kLists);
  bool active = false;
  switch (r % 20) {
    case 0:
    case 1:
    case 2:
      f.Ok("pointer activate", rt.Activate(*st.ptr, {c}));
      break;
    case 3:
    case 4:
      if (!Pinned(c)) f.Ok("pointer deactivate", rt.Deactivate(*st.ptr, {c}));
      break;
    case 5:
      if (f.Value("pointer is_active", rt.IsActive(*st.ptr, {c}), &active) && Pinned(c)) {
        f.Expect(active, absl::StrCat("pinned p[", c, "] inactive"));
      }
      break;
    case 6:
    case 7: {  // the owner writes, then reads back its value, or 0 if someone deactivated it
      const int cell = (c & ~3) + 1 + static_cast<int>((r >> 4) % 3);  // a non-pinned cell
      if (Owner(cell, run.threads) != t) break;
      const int32_t v = static_cast<int32_t>(r >> 1) | 1;
      f.Ok("pointer write", rt.Write<int32_t>(*st.p, {cell}, v));
      int32_t got = 0;
      if (f.Value("pointer read", rt.Read<int32_t>(*st.p, {cell}), &got)) {
        f.Expect(got == v || got == 0, absl::StrCat("p[", cell, "] read ", got, " after writing ",
                                                    v, " (only 0 may replace it)"));
        if (got == 0) run.lost_writes.fetch_add(1, std::memory_order_relaxed);
      }
      break;
    }
    case 8:
    case 9:
      f.Ok("bitmasked activate", rt.Activate(*st.bm, {c}));
      break;
    case 10:
      if (!Pinned(c)) f.Ok("bitmasked deactivate", rt.Deactivate(*st.bm, {c}));
      break;
    case 11:
      if (f.Value("bitmasked is_active", rt.IsActive(*st.bm, {c}), &active) && Pinned(c)) {
        f.Expect(active, absl::StrCat("pinned b[", c, "] inactive"));
      }
      break;
    case 12:
    case 13:
    case 14: {  // unique values: thread t's k-th append is t + threads * k
      const int32_t v = t + run.threads * seq++;
      int32_t position = 0;
      if (f.Value("append", rt.Append<int32_t>(*st.l, {list}, v), &position)) {
        appends.push_back({list, position, v});
        run.appended[list].fetch_add(1, std::memory_order_relaxed);
      }
      break;
    }
    case 15: {  // lists only grow during the race: at least this thread's appends are there
      int32_t length = 0;
      if (f.Value("length", rt.Length(*st.dyn, {list}), &length)) {
        int32_t mine = 0;
        for (const Append& a : appends) mine += a.list == list;
        f.Expect(length >= mine, absl::StrCat("list ", list, " length ", length, " < ", mine));
      }
      break;
    }
    case 16:
      if (!appends.empty()) {  // an earlier append of this thread reads back while others append
        const Append& a = appends[(r >> 4) % appends.size()];
        int32_t got = 0;
        if (f.Value("list read", rt.Read<int32_t>(*st.l, {a.list, a.position}), &got)) {
          f.Expect(got == a.value, absl::StrCat("l[", a.list, "][", a.position, "] = ", got,
                                                ", appended ", a.value));
        }
      }
      break;
    case 17:
      VisitAll(st, (r >> 4) % 2 ? *st.p : *st.b, (r >> 5) % 2 == 1, /*add=*/false, f);
      break;
    case 18:
      if ((r >> 4) % 4 == 0) f.Ok("collect garbage", rt.CollectGarbage());
      if ((r >> 6) % 8 == 0) f.Ok("check invariants", rt.CheckInvariants());
      break;
    default:
      if (!appends.empty()) {
        const Append& a = appends[(r >> 4) % appends.size()];
        if (f.Value("list is_active", rt.IsActive(*st.dyn, {a.list, a.position}), &active)) {
          f.Expect(active, absl::StrCat("appended l[", a.list, "][", a.position, "] inactive"));
        }
      }
      break;
  }
}

void Worker(StressRun& run, int t, Failures& f) {
  SharedTree& st = run.st;
  SparseRuntime& rt = *st.rt;
  std::mt19937 rng(0xC0FFEEu + static_cast<unsigned>(t));
  int32_t seq = 0;
  run.start.ArriveAndWait();
  for (int round = 0;; ++round) {
    const int64_t calls_before = f.calls;
    // 1. Race on the shared cells.
    std::vector<Append> appends;
    for (int k = 0; k < kRaceCallsPerRound; ++k) RaceCall(run, t, rng, appends, seq, f);
    run.barrier.ArriveAndWait();
    // 2. Read-back of the race: the lists hold every append at the position it returned, and
    //    nothing else (their lengths are the numbers of appends).
    for (const Append& a : appends) {
      int32_t got = 0;
      if (f.Value("list read-back", rt.Read<int32_t>(*st.l, {a.list, a.position}), &got)) {
        f.Expect(got == a.value, absl::StrCat("round ", round, ": l[", a.list, "][", a.position,
                                              "] = ", got, ", appended ", a.value));
      }
    }
    for (int list = 0; list < kLists; ++list) {
      int32_t length = 0;
      if (f.Value("length read-back", rt.Length(*st.dyn, {list}), &length)) {
        f.Expect(length == run.appended[list].load(),
                 absl::StrCat("round ", round, ": list ", list, " length ", length, ", appended ",
                              run.appended[list].load()));
      }
    }
    run.barrier.ArriveAndWait();
    // 3. Every thread deactivates the same cells and lists (each one is recycled once).
    for (int c = 0; c < kCells; ++c) {
      if (Pinned(c)) continue;
      f.Ok("reset pointer", rt.Deactivate(*st.ptr, {c}));
      f.Ok("reset bitmasked", rt.Deactivate(*st.bm, {c}));
    }
    for (int list = 0; list < kLists; ++list) f.Ok("reset list", rt.Deactivate(*st.dyn, {list}));
    run.barrier.ArriveAndWait();
    if (t == 0) {
      for (auto& a : run.appended) a.store(0);  // no appends until the next round's race
    }
    // 4. Every thread activates the same cells of this round's sets (each allocated once).
    const RoundSets sets = SetsOf(round);
    for (int c = 0; c < kCells; ++c) {
      if (sets.p[c]) f.Ok("activate pointer", rt.Activate(*st.ptr, {c}));
      if (sets.b[c]) f.Ok("activate bitmasked", rt.Activate(*st.bm, {c}));
    }
    run.barrier.ArriveAndWait();
    // 5. Concurrent struct-fors add 1 to every active cell (serial in some threads, parallel in
    //    others): each visits exactly the active set.
    const bool parallel = (t + round) % 2 == 1;
    const int64_t p_visits = VisitAll(st, *st.p, parallel, /*add=*/true, f);
    const int64_t b_visits = VisitAll(st, *st.b, !parallel, /*add=*/true, f);
    f.Expect(p_visits == kPinnedCount + sets.p_count,
             absl::StrCat("round ", round, ": ", p_visits, " pointer visits, ",
                          kPinnedCount + sets.p_count, " active"));
    f.Expect(b_visits == kPinnedCount + sets.b_count,
             absl::StrCat("round ", round, ": ", b_visits, " bitmasked visits, ",
                          kPinnedCount + sets.b_count, " active"));
    run.barrier.ArriveAndWait();
    // 6. Read-back (reads only): a pinned cell holds one add per thread per round so far, a cell
    //    of this round's set one per thread, every other cell is inactive and reads 0; the
    //    pointer allocator has exactly one cell in use per active cell.
    for (int c = 0; c < kCells; ++c) {
      const int32_t pinned = run.threads * (round + 1);
      const int32_t want_p = Pinned(c) ? pinned : sets.p[c] ? run.threads : 0;
      const int32_t want_b = Pinned(c) ? pinned : sets.b[c] ? run.threads : 0;
      int32_t got = 0;
      bool active = false;
      if (f.Value("read p", rt.Read<int32_t>(*st.p, {c}), &got)) {
        f.Expect(got == want_p,
                 absl::StrCat("round ", round, ": p[", c, "] = ", got, ", want ", want_p));
      }
      if (f.Value("read b", rt.Read<int32_t>(*st.b, {c}), &got)) {
        f.Expect(got == want_b,
                 absl::StrCat("round ", round, ": b[", c, "] = ", got, ", want ", want_b));
      }
      if (f.Value("is_active p", rt.IsActive(*st.ptr, {c}), &active)) {
        f.Expect(active == (want_p != 0),
                 absl::StrCat("round ", round, ": p[", c, "] active ", active ? "true" : "false"));
      }
      if (f.Value("is_active b", rt.IsActive(*st.bm, {c}), &active)) {
        f.Expect(active == (want_b != 0),
                 absl::StrCat("round ", round, ": b[", c, "] active ", active ? "true" : "false"));
      }
    }
    const int64_t in_use = rt.Stats(*st.ptr).cells_in_use;
    f.Expect(in_use == kPinnedCount + sets.p_count,
             absl::StrCat("round ", round, ": ", in_use, " pointer cells in use, ",
                          kPinnedCount + sets.p_count, " active"));
    run.calls.fetch_add(f.calls - calls_before);
    run.barrier.ArriveAndWait();  // the last arrival decides `more`
    if (!run.more) return;
  }
}

TEST(SparseRuntimeSharedStressTest, ThreadsSharingCellsKeepEveryDefinedOutcome) {
  SharedTree st;
  const int threads =
      static_cast<int>(std::clamp<int64_t>(EnvInt("ACCELMEM_STRESS_THREADS", 4), 2, kMaxThreads));
  const int64_t target = EnvInt("ACCELMEM_STRESS_OPS", 20000);
  for (int c = 0; c < kCells; ++c) {
    if (!Pinned(c)) continue;
    ASSERT_TRUE(st.rt->Activate(*st.ptr, {c}).ok());
    ASSERT_TRUE(st.rt->Activate(*st.bm, {c}).ok());
  }
  StressRun run(st, threads, target);
  std::vector<Failures> failures(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { Worker(run, t, failures[t]); });
  for (std::thread& th : pool) th.join();
  Failures all;
  for (const Failures& f : failures) {
    all.calls += f.calls;
    all.count += f.count;
    for (const std::string& e : f.examples) {
      if (all.examples.size() < 8) all.examples.push_back(e);
    }
  }
  std::cout << "[shared stress] " << threads << " threads, " << run.rounds << " rounds, "
            << all.calls << " calls, " << run.lost_writes.load()
            << " owner writes undone by a concurrent deactivation, " << all.count << " failures\n";
  EXPECT_EQ(all.count, 0) << absl::StrJoin(all.examples, "\n");
  EXPECT_GE(all.calls, target);
  EXPECT_EQ(run.rounds * StressRun::kPhases, run.phase);

  // The end state, single-threaded: allocator invariants before and after a collection, the last
  // round's values, and one more struct-for against the model.
  absl::Status status = st.rt->CheckInvariants();
  EXPECT_TRUE(status.ok()) << status;
  ASSERT_TRUE(st.rt->CollectGarbage().ok());
  status = st.rt->CheckInvariants();
  EXPECT_TRUE(status.ok()) << status;
  const RoundSets last = SetsOf(run.rounds - 1);
  int64_t want_sum = 0;
  for (int c = 0; c < kCells; ++c) {
    const int32_t want = Pinned(c) ? threads * run.rounds : last.p[c] ? threads : 0;
    want_sum += want;
    EXPECT_EQ(st.rt->Read<int32_t>(*st.p, {c}).value(), want) << "p[" << c << "]";
    EXPECT_EQ(st.rt->Read<int32_t>(*st.b, {c}).value(), Pinned(c)   ? threads * run.rounds
                                                        : last.b[c] ? threads
                                                                    : 0)
        << "b[" << c << "]";
  }
  for (int list = 0; list < kLists; ++list) EXPECT_EQ(st.rt->Length(*st.dyn, {list}).value(), 0);
  std::atomic<int64_t> visits{0};
  std::atomic<int64_t> sum{0};
  ASSERT_TRUE(st.rt
                  ->ParallelStructFor(*st.p,
                                      [&](absl::Span<const int32_t>, void* v, int) {
                                        visits.fetch_add(1);
                                        sum.fetch_add(*static_cast<int32_t*>(v));
                                      })
                  .ok());
  EXPECT_EQ(visits.load(), kPinnedCount + last.p_count);
  EXPECT_EQ(sum.load(), want_sum);
  EXPECT_EQ(st.rt->Stats(*st.ptr).cells_in_use, kPinnedCount + last.p_count);
}

}  // namespace
}  // namespace runtime
}  // namespace accelmem
