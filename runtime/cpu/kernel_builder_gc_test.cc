// The GC kernels of KernelBuilder on the CPU JIT: after random activate/deactivate/append
// histories, the JIT serial kernel and the phase kernels (1, 2, 4 workers on host threads, barriers
// between phases, phase 1 on one thread) leave the same multiset of free indices as the natively
// compiled gc::gc_serial on an identical history, with every free cell zeroed; the host API then
// reads the expected values and CheckInvariants passes. One compiled module serves every test.
#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/kernel_builder.h"
#include "gc/device/gc_scratch.h"
#include "gc/device/gc_serial.h"
#include "gtest/gtest.h"
#include "runtime/cpu/jit.h"
#include "runtime/kernel_context.h"
#include "runtime/runtime_bitcode.h"
#include "runtime/sparse_runtime.h"

namespace accelmem {
namespace runtime {
namespace cpu {
namespace {

using codegen::GcKernel;
using codegen::GcKernelName;
using codegen::GcPhase0Fn;
using codegen::GcPhase1Fn;
using codegen::GcPhase2Fn;
using codegen::GcPrepareFn;
using codegen::GcSerialFn;
using codegen::KernelBuilder;
using codegen::KernelModule;
using codegen::kNumGcKernels;
using sparse_runtime::Axis;
using sparse_runtime::NodeManager;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;

const Axis i(0), j(1), k(2);

constexpr int kExtent = 16384;     // x coordinates: outer pointer 32 x inner pointer 256 x dense 2
constexpr int kContainers = 8;     // dynamic containers
constexpr int kDynamicSize = 256;  // declared size of each dynamic list

// A reusable barrier for the host threads playing the GC grid.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const int64_t generation = generation_;
    if (++waiting_ == n_) {
      waiting_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  const int n_;
  std::mutex mu_;
  std::condition_variable cv_;
  int waiting_ = 0;
  int64_t generation_ = 0;
};

struct GcFns {
  GcPrepareFn prepare = nullptr;
  GcPhase0Fn phase0 = nullptr;
  GcPhase1Fn phase1 = nullptr;
  GcPhase2Fn phase2 = nullptr;
  GcSerialFn serial = nullptr;
};

// The tree shape, its three allocators and the compiled GC kernels, shared by every test.
struct Shared {
  SNodeTree tree;
  const SNode* outer = nullptr;  // pointer(i, 32)
  const SNode* inner = nullptr;  // pointer(i, 256) below it
  const SNode* x = nullptr;      // dense(i, 2) place<int32_t> below the inner pointer
  const SNode* dyn = nullptr;    // dense(j, 8).dynamic(k, 256, 8)
  const SNode* d = nullptr;      // place<int32_t> of the dynamic
  std::unique_ptr<JitModule> module;
  std::map<int, GcFns> fns;  // by SNode id
};

Shared* g_shared = nullptr;

template <typename Fn>
Fn Lookup(const JitModule& m, const std::string& name) {
  auto address = m.Lookup(name);
  EXPECT_TRUE(address.ok()) << address.status();
  return reinterpret_cast<Fn>(address.ok() ? *address : nullptr);
}

Shared* BuildShared() {
  auto* s = new Shared;
  SNode& outer = s->tree.root().pointer(i, 32);
  SNode& inner = outer.pointer(i, 256);
  inner.dense(i, 2).place<int32_t>("x");
  SNode& dyn = s->tree.root().dense(j, kContainers).dynamic(k, kDynamicSize, 8);
  dyn.place<int32_t>("d");
  absl::Status status = s->tree.Finalize();
  EXPECT_TRUE(status.ok()) << status;
  s->outer = &outer;
  s->inner = &inner;
  s->x = s->tree.FindPlace("x");
  s->dyn = &dyn;
  s->d = s->tree.FindPlace("d");
  auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64), s->tree);
  EXPECT_TRUE(kb.ok()) << kb.status();
  std::vector<const SNode*> allocators = {s->outer, s->inner, s->dyn};
  for (const SNode* a : allocators) {
    status = (*kb)->AddGc(absl::StrCat("gc", a->id()), *a);
    EXPECT_TRUE(status.ok()) << status;
  }
  KernelModule km = (*kb)->Finish();
  auto jit = CpuJit::Create(RuntimeBitcode(RuntimeArch::kX64));
  EXPECT_TRUE(jit.ok()) << jit.status();
  auto m = (*jit)->Compile(std::move(km.module), std::move(km.context), km.entry_points);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return s;
  s->module = std::move(m).value();
  for (const SNode* a : allocators) {
    const std::string p = absl::StrCat("gc", a->id());
    GcFns f;
    f.prepare = Lookup<GcPrepareFn>(*s->module, GcKernelName(p, GcKernel::kPrepare));
    f.phase0 = Lookup<GcPhase0Fn>(*s->module, GcKernelName(p, GcKernel::kPhase0));
    f.phase1 = Lookup<GcPhase1Fn>(*s->module, GcKernelName(p, GcKernel::kPhase1));
    f.phase2 = Lookup<GcPhase2Fn>(*s->module, GcKernelName(p, GcKernel::kPhase2));
    f.serial = Lookup<GcSerialFn>(*s->module, GcKernelName(p, GcKernel::kSerial));
    s->fns[a->id()] = f;
  }
  return s;
}

// Runs the JIT phase kernels with `workers` host threads (worker 0 is the caller): prepare on one
// thread, phase 0 on all, phase 1 on one, phase 2 on all, barriers in between. Returns prepare's
// result.
int64_t RunPhases(const GcFns& f, void* ctx, gc::GcScratch* scratch, int workers) {
  Barrier barrier(workers);
  int64_t prepared = -1;
  auto work = [&](int w) {
    if (w == 0) prepared = f.prepare(ctx, scratch, workers);
    barrier.Wait();
    f.phase0(ctx, scratch, w, workers);
    barrier.Wait();
    if (w == 0) f.phase1(ctx, scratch, workers);
    barrier.Wait();
    f.phase2(ctx, scratch, w, workers, 0, 1);
  };
  std::vector<std::thread> threads;
  for (int w = 1; w < workers; ++w) threads.emplace_back(work, w);
  work(0);
  for (std::thread& t : threads) t.join();
  return prepared;
}

std::vector<int32_t> FreeEntries(const NodeManager& nm) {
  std::vector<int32_t> out;
  for (int32_t e = nm.free_list_used; e < nm.free_list.size(); ++e) {
    out.push_back(nm.free_list.get<int32_t>(e));
  }
  return out;
}

std::vector<int32_t> RecycledEntries(const NodeManager& nm) {
  std::vector<int32_t> out;
  for (int32_t e = 0; e < nm.recycled_list.size(); ++e) {
    out.push_back(nm.recycled_list.get<int32_t>(e));
  }
  return out;
}

// The state the host API should show.
struct Model {
  std::map<int, int32_t> x;  // coordinate -> value (absent: inactive/0)
  std::vector<std::vector<int32_t>> lists = std::vector<std::vector<int32_t>>(kContainers);
};

// Sizes of one random batch.
struct Batch {
  int writes;
  int inner_deactivations;
  int outer_deactivations;
  int appends;
  int dynamic_deactivations;
};

// One random operation batch, applied to every runtime in `rts` and to the model.
void RandomBatch(const Batch& batch, std::mt19937* rng, const std::vector<SparseRuntime*>& rts,
                 Model* model) {
  const Shared& s = *g_shared;
  std::uniform_int_distribution<int> coord(0, kExtent - 1);
  std::uniform_int_distribution<int32_t> value(1, 1 << 30);
  // Writes clustered in one random window so that pointer cells fill up.
  const int window = std::uniform_int_distribution<int>(0, kExtent - 4096)(*rng);
  for (int n = 0; n < batch.writes; ++n) {
    const int c = (*rng)() % 2 ? coord(*rng) : window + static_cast<int>((*rng)() % 4096);
    const int32_t v = value(*rng);
    for (SparseRuntime* rt : rts) ASSERT_TRUE(rt->Write<int32_t>(*s.x, {c}, v).ok());
    model->x[c] = v;
  }
  for (int n = 0; n < batch.inner_deactivations; ++n) {  // inner pointer cells: 2 coordinates each
    const int cell = coord(*rng) / 2;
    for (SparseRuntime* rt : rts) ASSERT_TRUE(rt->Deactivate(*s.inner, {cell}).ok());
    model->x.erase(2 * cell);
    model->x.erase(2 * cell + 1);
  }
  for (int n = 0; n < batch.outer_deactivations;
       ++n) {  // outer pointer cells: 512 coordinates each
    const int cell = static_cast<int>((*rng)() % 32);
    for (SparseRuntime* rt : rts) ASSERT_TRUE(rt->Deactivate(*s.outer, {cell}).ok());
    model->x.erase(model->x.lower_bound(512 * cell), model->x.lower_bound(512 * (cell + 1)));
  }
  for (int n = 0; n < batch.appends; ++n) {
    const int c = static_cast<int>((*rng)() % kContainers);
    if (model->lists[c].size() >= kDynamicSize) continue;
    const int32_t v = value(*rng);
    for (SparseRuntime* rt : rts) ASSERT_TRUE(rt->Append<int32_t>(*s.d, {c}, v).ok());
    model->lists[c].push_back(v);
  }
  for (int n = 0; n < batch.dynamic_deactivations; ++n) {
    const int c = static_cast<int>((*rng)() % kContainers);
    for (SparseRuntime* rt : rts) ASSERT_TRUE(rt->Deactivate(*s.dyn, {c}).ok());
    model->lists[c].clear();
  }
}

// Host-API reads of every coordinate and list match the model.
void ExpectReads(SparseRuntime* rt, const Model& model) {
  const Shared& s = *g_shared;
  int wrong = 0;
  for (int c = 0; c < kExtent; ++c) {
    auto it = model.x.find(c);
    const int32_t want = it == model.x.end() ? 0 : it->second;
    auto got = rt->Read<int32_t>(*s.x, {c});
    ASSERT_TRUE(got.ok()) << got.status();
    if (*got != want && ++wrong < 5)
      ADD_FAILURE() << "x[" << c << "] = " << *got << ", want " << want;
  }
  for (int c = 0; c < kContainers; ++c) {
    auto length = rt->Length(*s.dyn, {c});
    ASSERT_TRUE(length.ok()) << length.status();
    ASSERT_EQ(*length, static_cast<int32_t>(model.lists[c].size())) << c;
    for (int p = 0; p < *length; ++p) {
      EXPECT_EQ(rt->Read<int32_t>(*s.d, {c, p}).value(), model.lists[c][p]) << c << "," << p;
    }
  }
  EXPECT_EQ(wrong, 0);
}

// After a collection: nothing recycled, the cursor at 0, every free cell zero.
void ExpectCollected(const NodeManager& nm) {
  EXPECT_EQ(nm.recycled_list.size(), 0);
  EXPECT_EQ(nm.free_list_used, 0);
  int nonzero = 0;
  for (int32_t index : FreeEntries(nm)) {
    const uint8_t* cell = nm.get_cell(index);
    for (uint64_t b = 0; b < nm.element_size; ++b) nonzero += cell[b] != 0;
  }
  EXPECT_EQ(nonzero, 0) << "bytes of free cells not zeroed";
}

enum class Mode { kSerialKernel, kPhases };

// (mode, phase workers, GcScratch::order)
class GcKernelTest : public ::testing::TestWithParam<std::tuple<Mode, int, int32_t>> {
 protected:
  static void SetUpTestSuite() {
    if (g_shared == nullptr) g_shared = BuildShared();
  }
  void SetUp() override { ASSERT_NE(g_shared->module, nullptr); }

  std::unique_ptr<SparseRuntime> NewRuntime() {
    SparseRuntimeOptions options;
    options.auto_collect = false;
    options.chunk_num_elements = 64;  // many chunks: segments and runs cross chunk boundaries
    auto rt = SparseRuntime::Create(g_shared->tree, options);
    EXPECT_TRUE(rt.ok()) << rt.status();
    return std::move(rt).value();
  }

  // Collects every allocator of `rt` through the JIT GC kernels of the test's mode.
  void JitCollect(SparseRuntime* rt, BoundKernelContext* ctx, gc::GcScratch* scratch) {
    const auto [mode, workers, order] = GetParam();
    scratch->order = order;
    for (const SNode* a : {g_shared->outer, g_shared->inner, g_shared->dyn}) {
      const GcFns& f = g_shared->fns.at(a->id());
      if (mode == Mode::kSerialKernel) {
        EXPECT_EQ(f.serial(ctx->get(), scratch), 1);
      } else {
        EXPECT_EQ(RunPhases(f, ctx->get(), scratch, workers), 1);
      }
    }
    EXPECT_EQ(sparse_runtime::runtime_error_code(rt->context()), sparse_runtime::kRuntimeOk);
  }
};

// The JIT GC gives the free multiset of gc::gc_serial (the exact free-list order with one
// worker), zeroes every free cell, and the host API reads stay correct with invariants intact,
// also after the collected cells were reused and collected again.
TEST_P(GcKernelTest, MatchesNativeGcSerial) {
  const auto [mode, workers, order] = GetParam();
  const bool exact_order = mode == Mode::kSerialKernel || workers == 1;
  std::mt19937 rng(1234 + 7 * workers + 31 * order + (mode == Mode::kSerialKernel ? 101 : 0));
  auto a = NewRuntime();  // collected by the JIT kernels
  auto b = NewRuntime();  // collected by the native gc_serial
  BoundKernelContext ctx(a.get());
  gc::GcScratch scratch_a{};
  gc::GcScratch scratch_b{};
  scratch_b.order = order;
  Model model;
  // A shared history with native collections in between; the last batch allocates less than
  // the previous collection freed, so the free lists are partly used (phase 0 compacts them).
  // Over 4096 inner-pointer cells: several sorted-order buckets for 2 and 4 workers.
  const Batch history[] = {{10000, 2000, 2, 200, 2}, {2000, 600, 1, 100, 3}, {600, 400, 2, 20, 2}};
  for (int round = 0; round < 3; ++round) {
    RandomBatch(history[round], &rng, {a.get(), b.get()}, &model);
    if (HasFatalFailure()) return;
    if (round < 2) {
      ASSERT_TRUE(a->CollectGarbage().ok());
      ASSERT_TRUE(b->CollectGarbage().ok());
    }
  }
  const std::vector<const SNode*> allocators = {g_shared->outer, g_shared->inner, g_shared->dyn};
  for (const SNode* s : allocators) {
    const NodeManager& na = *a->context()->node_managers[s->id()];
    const NodeManager& nb = *b->context()->node_managers[s->id()];
    // Identical histories: identical allocator states before the collection under test.
    ASSERT_EQ(FreeEntries(na), FreeEntries(nb)) << s->DebugPath();
    ASSERT_EQ(RecycledEntries(na), RecycledEntries(nb)) << s->DebugPath();
    EXPECT_GT(na.recycled_list.size(), 0) << s->DebugPath() << ": the history recycled nothing";
  }
  JitCollect(a.get(), &ctx, &scratch_a);
  for (const SNode* s : allocators) {
    NodeManager* nb = b->context()->node_managers[s->id()];
    ASSERT_TRUE(gc::gc_serial(nb, &scratch_b));
  }
  for (const SNode* s : allocators) {
    const NodeManager& na = *a->context()->node_managers[s->id()];
    const NodeManager& nb = *b->context()->node_managers[s->id()];
    std::vector<int32_t> fa = FreeEntries(na), fb = FreeEntries(nb);
    if (exact_order) {
      EXPECT_EQ(fa, fb) << s->DebugPath() << ": free-list order differs from gc_serial";
    }
    std::sort(fa.begin(), fa.end());
    std::sort(fb.begin(), fb.end());
    EXPECT_EQ(fa, fb) << s->DebugPath() << ": free multisets differ";
    EXPECT_EQ(na.data_list.size(), nb.data_list.size()) << s->DebugPath();
    ExpectCollected(na);
  }
  ExpectReads(a.get(), model);
  ExpectReads(b.get(), model);
  absl::Status inv = a->CheckInvariants();
  EXPECT_TRUE(inv.ok()) << inv;
  // Reuse the collected cells (zeroed: unwritten neighbours read 0), then collect by JIT again.
  for (int round = 0; round < 2; ++round) {
    RandomBatch({1500, 500, 1, 60, 2}, &rng, {a.get()}, &model);
    if (HasFatalFailure()) return;
    JitCollect(a.get(), &ctx, &scratch_a);
    for (const SNode* s : allocators) ExpectCollected(*a->context()->node_managers[s->id()]);
    ExpectReads(a.get(), model);
    inv = a->CheckInvariants();
    EXPECT_TRUE(inv.ok()) << inv;
  }
}

std::string ParamName(const ::testing::TestParamInfo<GcKernelTest::ParamType>& info) {
  const auto [mode, workers, order] = info.param;
  const char* orders[] = {"Auto", "Sorted", "Recycle"};
  return absl::StrCat(mode == Mode::kSerialKernel ? "Serial" : absl::StrCat("Workers", workers),
                      orders[order]);
}

INSTANTIATE_TEST_SUITE_P(SerialKernel, GcKernelTest,
                         ::testing::Combine(::testing::Values(Mode::kSerialKernel),
                                            ::testing::Values(1),
                                            ::testing::Values(gc::kGcOrderAuto, gc::kGcOrderSorted,
                                                              gc::kGcOrderRecycle)),
                         ParamName);
INSTANTIATE_TEST_SUITE_P(Phases, GcKernelTest,
                         ::testing::Combine(::testing::Values(Mode::kPhases),
                                            ::testing::Values(1, 2, 4),
                                            ::testing::Values(gc::kGcOrderAuto, gc::kGcOrderSorted,
                                                              gc::kGcOrderRecycle)),
                         ParamName);

// GC kernels need an allocator SNode of the builder's tree and fresh names; the runtime's GC
// functions are found by demangling (gc:: names).
TEST(GcKernelBuildTest, Errors) {
  SNodeTree tree;
  SNode& p = tree.root().pointer(i, 4);
  p.dense(i, 4).place<float>("x");
  ASSERT_TRUE(tree.Finalize().ok());
  SNodeTree other;
  SNode& q = other.root().pointer(i, 4);
  q.dense(i, 4).place<float>("y");
  ASSERT_TRUE(other.Finalize().ok());
  auto kb = KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64), tree);
  ASSERT_TRUE(kb.ok()) << kb.status();
  EXPECT_EQ((*kb)->AddGc("dense", *p.children()[0]).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*kb)->AddGc("place", *tree.FindPlace("x")).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*kb)->AddGc("root", tree.root()).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*kb)->AddGc("foreign", q).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE((*kb)->AddGc("gc", p).ok());
  EXPECT_EQ((*kb)->AddGcKernel("gc_serial", GcKernel::kSerial, p).code(),
            absl::StatusCode::kAlreadyExists);
  KernelModule km = (*kb)->Finish();
  std::vector<std::string> want;
  for (int n = 0; n < kNumGcKernels; ++n) want.push_back(GcKernelName("gc", GcKernel(n)));
  EXPECT_EQ(km.entry_points, want);
}

}  // namespace
}  // namespace cpu
}  // namespace runtime
}  // namespace accelmem
