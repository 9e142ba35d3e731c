// The concurrency part of the host-API suite (sparse_runtime_test_suite.h): errors belong to the
// call that raised them, under any concurrency; instantiated with the rest of the suite.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/sparse_runtime_test_suite.h"
#include "sparse_runtime/device/snode_pointer.h"

namespace accelmem {
namespace runtime {

using sparse_runtime::Axis;
using sparse_runtime::Dynamic_allocate;
using sparse_runtime::kRuntimeOk;
using sparse_runtime::Pointer_activate;
using sparse_runtime::Pointer_deactivate;
using sparse_runtime::Ptr;
using sparse_runtime::runtime_error_code;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;
namespace {

using ::testing::HasSubstr;

const Axis i(0), j(1), k(2);

SparseRuntimeOptions Threads(int n) {
  SparseRuntimeOptions options;
  options.num_threads = n;
  return options;
}

// ---------------------------------------------------------------------------------------------
// Errors belong to the call that raised them, under any concurrency.

// An integer from the environment (the stress sizes: e.g. ACCELMEM_STRESS_OPS=1000000 by hand),
// or `fallback`.
int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoll(v, nullptr, 10);
}

// Counts the calls whose status (or value) is not the one that call must return.
struct Tally {
  int64_t calls = 0;
  int64_t wrong_status = 0;
  int64_t wrong_value = 0;
  std::vector<std::string> examples;  // the first few, for the failure message

  void Status(const char* what, const absl::Status& got, absl::StatusCode want) {
    ++calls;
    if (got.code() == want) return;
    ++wrong_status;
    if (examples.size() < 8) {
      examples.push_back(
          absl::StrCat(what, ": want ", absl::StatusCodeToString(want), ", got ", got.ToString()));
    }
  }
  void Value(const char* what, int64_t got, int64_t want) {
    if (got == want) return;
    ++wrong_value;
    if (examples.size() < 8) examples.push_back(absl::StrCat(what, ": want ", want, ", got ", got));
  }
  template <typename T>
  void Result(const char* what, const absl::StatusOr<T>& got, absl::StatusCode want,
              int64_t want_value) {
    Status(what, got.status(), want);
    if (got.ok() && want == absl::StatusCode::kOk) Value(what, *got, want_value);
  }
  void Add(const Tally& other) {
    calls += other.calls;
    wrong_status += other.wrong_status;
    wrong_value += other.wrong_value;
    for (const std::string& e : other.examples) {
      if (examples.size() < 8) examples.push_back(e);
    }
  }
  std::string Summary() const {
    return absl::StrCat(wrong_status, " misattributed statuses and ", wrong_value,
                        " wrong values in ", calls,
                        " calls; first: ", absl::StrJoin(examples, " | "));
  }
};

// Starts `n` threads that spin until all are running, then run body(t); joins them.
template <typename Fn>
void RunTogether(int n, const Fn& body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < n) std::this_thread::yield();
      body(t);
    });
  }
  for (std::thread& th : threads) th.join();
}

// The reported scenario: one thread appends to a full dynamic list (every call must be
// OutOfRange), another writes and deactivates pointer cells (every call must succeed); no call
// may get the other thread's status or an error-less failure. With automatic collection (each
// deactivation collects, exclusively) and without (the two threads overlap more).
TEST_P(SparseRuntimeTest, ConcurrentErrorsStayWithTheirCall) {
  const int64_t rounds = EnvInt("ACCELMEM_STRESS_OPS", 30000) / 6;
  for (const bool auto_collect : {true, false}) {
    SNodeTree tree;
    tree.root().dense(i, 1).dynamic(j, 4, 4).place<int32_t>("d");
    tree.root().pointer(k, 64).place<int32_t>("p");
    SparseRuntimeOptions options;
    options.auto_collect = auto_collect;
    auto rt = Make(tree, options);
    const SNode& d = *tree.FindPlace("d");
    const SNode& p = *tree.FindPlace("p");
    for (int n = 0; n < 4; ++n) ASSERT_TRUE(rt->Append<int32_t>(d, {0}, n).ok());
    Tally tallies[2];
    RunTogether(2, [&](int t) {
      Tally& tally = tallies[t];
      for (int64_t r = 0; r < rounds; ++r) {
        if (t == 0) {
          tally.Status("append to a full list", rt->Append<int32_t>(d, {0}, 1).status(),
                       absl::StatusCode::kOutOfRange);
        } else {
          const int32_t cell = static_cast<int32_t>(r % 64);
          tally.Status("pointer write", rt->Write<int32_t>(p, {cell}, 7), absl::StatusCode::kOk);
          tally.Status("pointer deactivate", rt->Deactivate(*p.parent(), {cell}),
                       absl::StatusCode::kOk);
        }
      }
    });
    tallies[0].Add(tallies[1]);
    std::cout << "[reported scenario] auto_collect " << auto_collect << ": " << tallies[0].Summary()
              << "\n";
    EXPECT_EQ(tallies[0].wrong_status, 0)
        << "auto_collect " << auto_collect << ": " << tallies[0].Summary();
    EXPECT_EQ(rt->Length(*d.parent(), {0}).value(), 4);
    EXPECT_TRUE(rt->CollectGarbage().ok());
    EXPECT_TRUE(rt->CheckInvariants().ok());
  }
}

// A write through the host API racing a thread that deactivates and re-activates the same pointer
// cell over and over (through the runtime functions, so that it cycles fast and the write's and
// the cycler's activations race): a write that activates its cell and then finds it deactivated
// must retry, not write into the ambient element that an inactive slot's lookup returns. Every
// write succeeds; the invariants (the ambient element still zero included) hold.
TEST_P(SparseRuntimeTest, WritesRacingReactivationNeverWriteTheAmbientElement) {
  const int64_t rounds = EnvInt("ACCELMEM_STRESS_OPS", 200000) / 2;
  SNodeTree tree;
  tree.root().pointer(i, 2).place<int32_t>("p");
  SparseRuntimeOptions options;
  options.auto_collect = false;
  auto rt = Make(tree, options);
  const SNode& p = *tree.FindPlace("p");
  const Ptr meta = rt->meta(*p.parent());
  const Ptr node = rt->context()->root + p.parent()->offset_in_parent_cell();
  std::atomic<bool> writing{true};
  Tally tally;
  RunTogether(2, [&](int t) {
    if (t == 0) {
      for (int64_t r = 0; r < rounds; ++r) {
        tally.Status("write", rt->Write<int32_t>(p, {0}, 7), absl::StatusCode::kOk);
      }
      writing.store(false);
    } else {
      while (writing.load(std::memory_order_relaxed)) {
        Pointer_deactivate(meta, node, 0);
        Pointer_activate(meta, node, 0);
      }
    }
  });
  EXPECT_EQ(tally.wrong_status, 0) << tally.Summary();
  EXPECT_TRUE(rt->CheckInvariants().ok()) << rt->CheckInvariants();
  ASSERT_TRUE(rt->CollectGarbage().ok());
  EXPECT_TRUE(rt->CheckInvariants().ok()) << rt->CheckInvariants();
}

// Runtime errors raised inside a struct-for's tasks (here by a runtime function the visitor calls
// directly: appending to a full list) are that struct-for's status, serial and parallel; they
// reach no later call and do not stay in the shared slot.
TEST_P(SparseRuntimeTest, StructForOwnsItsTasksErrors) {
  SNodeTree tree;
  tree.root().dense(i, 1).dynamic(j, 2, 2).place<int32_t>("d");
  tree.root().dense(k, 16384).place<int32_t>("s");  // 16 struct-for tasks
  auto rt = Make(tree, Threads(2));
  const SNode& d = *tree.FindPlace("d");
  const SNode& dyn = *d.parent();
  const SNode& s = *tree.FindPlace("s");
  for (int n = 0; n < 2; ++n) ASSERT_TRUE(rt->Append<int32_t>(d, {0}, n).ok());
  Ptr list = nullptr;
  ASSERT_TRUE(rt->StructFor(*dyn.parent(), [&](absl::Span<const int32_t>, void* cell) {
                  list = static_cast<Ptr>(cell) + dyn.offset_in_parent_cell();
                }).ok());
  ASSERT_NE(list, nullptr);
  auto append_directly = [&](absl::Span<const int32_t> index) {
    if (index[0] % 1024 != 3) return;  // once per task
    int32_t length = 0;
    EXPECT_EQ(Dynamic_allocate(rt->meta(dyn), list, &length), nullptr);
  };
  absl::Status status = rt->ParallelStructFor(
      s, [&](absl::Span<const int32_t> index, void*, int) { append_directly(index); });
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange) << status;
  EXPECT_THAT(status.message(), HasSubstr("declared size"));
  status =
      rt->StructFor(s, [&](absl::Span<const int32_t> index, void*) { append_directly(index); });
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange) << status;
  EXPECT_EQ(runtime_error_code(&rt->context()->memory), kRuntimeOk);
  EXPECT_EQ(rt->Length(dyn, {0}).value(), 2);
  EXPECT_TRUE(rt->ParallelStructFor(s, [](absl::Span<const int32_t>, void*, int) {}).ok());
  EXPECT_TRUE(rt->CollectGarbage().ok());
}

// The stress tree. Thread t owns pointer and bitmasked cells [t * kPerThread, (t + 1) *
// kPerThread) of p and b, lists [t * kLists, (t + 1) * kLists) of d, and cell t of s (the
// struct-for driver); e's allocator is exhausted up front (its first kCapacity cells are
// active), so every activation of another e cell fails, deterministically.
constexpr int kMaxStressThreads = 16;
constexpr int kPerThread = 16;
constexpr int kLists = 4;
constexpr int kListSize = 8;
constexpr int kCapacity = 4096;  // cells per allocator: chunk_num_elements, one chunk

struct StressTree {
  StressTree() {
    tree.root().pointer(i, kMaxStressThreads * kPerThread).place<int32_t>("p");
    tree.root().bitmasked(i, kMaxStressThreads * kPerThread).place<int32_t>("b");
    tree.root().dense(i, kMaxStressThreads * kLists).dynamic(j, kListSize, 4).place<int32_t>("d");
    tree.root().pointer(i, 2 * kCapacity).place<int32_t>("e");
    tree.root().dense(i, kMaxStressThreads).place<int32_t>("s");
  }
  void Find() {
    p = tree.FindPlace("p");
    b = tree.FindPlace("b");
    d = tree.FindPlace("d");
    e = tree.FindPlace("e");
    s = tree.FindPlace("s");
  }
  SNodeTree tree;
  const SNode* p = nullptr;
  const SNode* b = nullptr;
  const SNode* d = nullptr;
  const SNode* e = nullptr;
  const SNode* s = nullptr;
};

// What thread t's calls must return: the state of the cells it owns.
struct StressModel {
  int32_t p[kPerThread] = {};  // 0 also when inactive (reads of inactive cells are 0)
  bool p_active[kPerThread] = {};
  int32_t b[kPerThread] = {};
  bool b_active[kPerThread] = {};
  int32_t len[kLists] = {};
  int32_t d[kLists][kListSize] = {};
};

// Appends to thread t's list `c` (through the API), checking the result against the model.
void StressAppend(SparseRuntime& rt, const StressTree& st, StressModel& m, Tally& tally, int t,
                  int c, int32_t v) {
  const int32_t list = t * kLists + c;
  if (m.len[c] < kListSize) {
    tally.Result("append", rt.Append<int32_t>(*st.d, {list}, v), absl::StatusCode::kOk, m.len[c]);
    m.d[c][m.len[c]++] = v;
  } else {
    tally.Status("append to a full list", rt.Append<int32_t>(*st.d, {list}, v).status(),
                 absl::StatusCode::kOutOfRange);
  }
}

void StressWriteP(SparseRuntime& rt, const StressTree& st, StressModel& m, Tally& tally, int t,
                  int x, int32_t v) {
  tally.Status("pointer write", rt.Write<int32_t>(*st.p, {t * kPerThread + x}, v),
               absl::StatusCode::kOk);
  m.p[x] = v;
  m.p_active[x] = true;
}

// One thread of the stress test: `n` calls of every kind of the host API on the cells thread t
// owns (plus out-of-range, malformed and exhausted calls and GC), each checked against what it
// must return.
void StressThread(SparseRuntime& rt, const StressTree& st, int t, int64_t n, Tally& tally) {
  std::mt19937 rng(0x5eed + t);
  StressModel m;
  const SNode& p = *st.p;
  const SNode& ptr = *p.parent();
  const SNode& b = *st.b;
  const SNode& bm = *b.parent();
  const SNode& d = *st.d;
  const SNode& dyn = *d.parent();
  const SNode& e = *st.e;
  const SNode& s = *st.s;
  constexpr auto kOk = absl::StatusCode::kOk;
  constexpr auto kOutOfRange = absl::StatusCode::kOutOfRange;
  constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;
  constexpr auto kExhausted = absl::StatusCode::kResourceExhausted;
  while (tally.calls < n) {
    const uint32_t r = rng();
    const int x = static_cast<int>((r >> 8) % kPerThread);
    const int32_t cell = t * kPerThread + x;
    const int c = static_cast<int>((r >> 12) % kLists);
    const int32_t list = t * kLists + c;
    const int32_t jj = static_cast<int32_t>((r >> 16) % kListSize);
    const int32_t v = static_cast<int32_t>(r >> 4) | 1;
    const int32_t far = static_cast<int32_t>((r >> 20) % 1000);
    switch (r % 32) {
      case 0:
      case 1:
        StressWriteP(rt, st, m, tally, t, x, v);
        break;
      case 2:
        tally.Result("pointer read", rt.Read<int32_t>(p, {cell}), kOk, m.p[x]);
        break;
      case 3:
        tally.Status("pointer activate", rt.Activate(ptr, {cell}), kOk);
        m.p_active[x] = true;
        break;
      case 4:
        tally.Status("pointer deactivate", rt.Deactivate(ptr, {cell}), kOk);
        m.p[x] = 0;
        m.p_active[x] = false;
        break;
      case 5:
        tally.Result("pointer is_active", rt.IsActive(ptr, {cell}), kOk, m.p_active[x]);
        break;
      case 6:
        tally.Status("bitmasked write", rt.Write<int32_t>(b, {cell}, v), kOk);
        m.b[x] = v;
        m.b_active[x] = true;
        break;
      case 7:
        tally.Result("bitmasked read", rt.Read<int32_t>(b, {cell}), kOk, m.b[x]);
        break;
      case 8:
        tally.Status("bitmasked activate", rt.Activate(bm, {cell}), kOk);
        m.b_active[x] = true;
        break;
      case 9:
        tally.Status("bitmasked deactivate", rt.Deactivate(bm, {cell}), kOk);
        m.b[x] = 0;
        m.b_active[x] = false;
        break;
      case 10:
        tally.Result("bitmasked is_active", rt.IsActive(bm, {cell}), kOk, m.b_active[x]);
        break;
      case 11:
      case 12:
      case 13:
        StressAppend(rt, st, m, tally, t, c, v);
        break;
      case 14:
        tally.Result("length", rt.Length(dyn, {list}), kOk, m.len[c]);
        break;
      case 15:
        tally.Status("dynamic write", rt.Write<int32_t>(d, {list, jj}, v), kOk);
        m.d[c][jj] = v;
        m.len[c] = std::max(m.len[c], jj + 1);
        break;
      case 16:
        tally.Result("dynamic read", rt.Read<int32_t>(d, {list, jj}), kOk, m.d[c][jj]);
        break;
      case 17:
        tally.Result("dynamic is_active", rt.IsActive(dyn, {list, jj}), kOk, jj < m.len[c]);
        break;
      case 18:
        tally.Status("dynamic deactivate", rt.Deactivate(dyn, {list}), kOk);
        m.len[c] = 0;
        for (int32_t& value : m.d[c]) value = 0;
        break;
      case 19:  // coordinates outside the index space
        switch (far % 9) {
          case 0:
            tally.Status("write out of range",
                         rt.Write<int32_t>(p, {kMaxStressThreads * kPerThread + far}, v),
                         kOutOfRange);
            break;
          case 1:
            tally.Status("read out of range", rt.Read<int32_t>(b, {-1 - far}).status(),
                         kOutOfRange);
            break;
          case 2:
            tally.Status("activate out of range",
                         rt.Activate(ptr, {kMaxStressThreads * kPerThread + far}), kOutOfRange);
            break;
          case 3:
            tally.Status("is_active out of range", rt.IsActive(bm, {-1 - far}).status(),
                         kOutOfRange);
            break;
          case 4:
            tally.Status("append out of range",
                         rt.Append<int32_t>(d, {kMaxStressThreads * kLists + far}, v).status(),
                         kOutOfRange);
            break;
          case 5:
            tally.Status("length out of range", rt.Length(dyn, {-1 - far}).status(), kOutOfRange);
            break;
          case 6:
            tally.Status("deactivate out of range",
                         rt.Deactivate(ptr, {kMaxStressThreads * kPerThread + far}), kOutOfRange);
            break;
          case 7:
            tally.Status("dynamic read out of range",
                         rt.Read<int32_t>(d, {list, kListSize + far}).status(), kOutOfRange);
            break;
          default:
            tally.Status("exhausted write out of range",
                         rt.Write<int32_t>(e, {2 * kCapacity + far}, v), kOutOfRange);
            break;
        }
        break;
      case 20:  // malformed calls
        switch (far % 4) {
          case 0:
            tally.Status("write with two indices", rt.Write<int32_t>(p, {cell, 0}, v), kInvalid);
            break;
          case 1:
            tally.Status("read of the wrong type", rt.Read<float>(p, {cell}).status(), kInvalid);
            break;
          case 2:
            tally.Status("deactivate a place", rt.Deactivate(p, {cell}), kInvalid);
            break;
          default:
            tally.Status("append to a pointer place", rt.Append<int32_t>(p, {}, v).status(),
                         kInvalid);
            break;
        }
        break;
      case 21:
      case 22: {  // the exhausted allocator: activations fail, reads and queries do not
        const int32_t fresh = kCapacity + static_cast<int32_t>((r >> 8) % kCapacity);
        const int32_t used = static_cast<int32_t>((r >> 8) % kCapacity);
        switch (far % 4) {
          case 0:
            tally.Status("exhausted write", rt.Write<int32_t>(e, {fresh}, v), kExhausted);
            break;
          case 1:
            tally.Status("exhausted activate", rt.Activate(*e.parent(), {fresh}), kExhausted);
            break;
          case 2:
            tally.Result("exhausted read", rt.Read<int32_t>(e, {used}), kOk, used + 1);
            break;
          default:
            tally.Result("exhausted is_active", rt.IsActive(*e.parent(), {fresh}), kOk, 0);
            break;
        }
        break;
      }
      case 23:
        tally.Status("collect garbage", rt.CollectGarbage(), kOk);
        break;
      case 24:
      case 25: {  // struct-fors whose visitor calls the runtime for this thread's cell of s
        const bool parallel = r % 32 == 25;
        auto visit = [&](absl::Span<const int32_t> index) {
          if (index[0] != t) return;
          StressAppend(rt, st, m, tally, t, c, v);
          StressWriteP(rt, st, m, tally, t, x, v);
          tally.Status("nested out of range", rt.Length(dyn, {-1}).status(), kOutOfRange);
          tally.Status("collect garbage inside a visitor", rt.CollectGarbage(),
                       absl::StatusCode::kFailedPrecondition);
        };
        if (parallel) {
          tally.Status("parallel struct-for",
                       rt.ParallelStructFor(
                           s, [&](absl::Span<const int32_t> index, void*, int) { visit(index); }),
                       kOk);
        } else {
          tally.Status(
              "struct-for",
              rt.StructFor(s, [&](absl::Span<const int32_t> index, void*) { visit(index); }), kOk);
        }
        break;
      }
      default:  // the common mix again: writes, appends and deactivations dominate
        if (r & 0x100) {
          StressAppend(rt, st, m, tally, t, c, v);
        } else {
          tally.Status("pointer deactivate", rt.Deactivate(ptr, {cell}), kOk);
          m.p[x] = 0;
          m.p_active[x] = false;
        }
        break;
    }
  }
}

// Threads mixing failing and succeeding calls of every kind get exactly their own statuses and
// values (ACCELMEM_STRESS_OPS calls in all, ACCELMEM_STRESS_THREADS threads).
TEST_P(SparseRuntimeTest, StressEveryCallGetsItsOwnStatus) {
  StressTree st;
  SparseRuntimeOptions options;
  options.chunk_num_elements = kCapacity;
  options.max_num_chunks = 1;
  options.num_threads = 2;
  auto rt = Make(st.tree, options);
  st.Find();
  for (int32_t n = 0; n < kCapacity; ++n) ASSERT_TRUE(rt->Write<int32_t>(*st.e, {n}, n + 1).ok());
  ASSERT_EQ(rt->Write<int32_t>(*st.e, {kCapacity}, 1).code(), absl::StatusCode::kResourceExhausted);
  const int threads = static_cast<int>(std::min<int64_t>(
      kMaxStressThreads, std::max<int64_t>(1, EnvInt("ACCELMEM_STRESS_THREADS", 4))));
  const int64_t total = EnvInt("ACCELMEM_STRESS_OPS", 20000);
  std::vector<Tally> tallies(threads);
  RunTogether(threads, [&](int t) {
    StressThread(*rt, st, t, (total + threads - 1) / threads, tallies[t]);
  });
  Tally all;
  for (const Tally& tally : tallies) all.Add(tally);
  std::cout << "[stress] " << threads << " threads: " << all.Summary() << "\n";
  EXPECT_EQ(all.wrong_status, 0) << all.Summary();
  EXPECT_EQ(all.wrong_value, 0) << all.Summary();
  EXPECT_GE(all.calls, total);
}

}  // namespace
}  // namespace runtime
}  // namespace accelmem
