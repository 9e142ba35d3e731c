#include "sparse_runtime/asymmetric_fence.h"

#include <atomic>
#include <thread>

#include "gtest/gtest.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

// The heavy fence works on Linux kernels with membarrier (4.14 and later) unless a seccomp
// filter refuses it; where it works, every call does.
TEST(AsymmetricFenceTest, HeavyFenceRunsWhereAvailable) {
  if (!AsymmetricFenceHeavyAvailable()) {
    EXPECT_FALSE(AsymmetricFenceHeavy());
    GTEST_SKIP() << "membarrier's private expedited command is not available here";
  }
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(AsymmetricFenceHeavy());
}

// Rule: the pair forbids the store-buffering outcome. One thread stores x, passes a light
// (compiler-only) fence and loads y; the other stores y, runs the heavy fence and loads x: never
// both loads 0 (without fences x86 gives that outcome routinely, from its store buffers).
TEST(AsymmetricFenceTest, PairForbidsStoreBuffering) {
  if (!AsymmetricFenceHeavyAvailable()) GTEST_SKIP() << "no heavy fence here";
  constexpr int kRounds = 2000;
  std::atomic<int> x{0}, y{0};
  std::atomic<int> go{0}, done{0};
  int light_saw[kRounds];
  std::thread light([&] {
    for (int r = 1; r <= kRounds; ++r) {
      while (go.load(std::memory_order_acquire) != r) std::this_thread::yield();
      x.store(1, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      light_saw[r - 1] = y.load(std::memory_order_relaxed);
      done.fetch_add(1, std::memory_order_acq_rel);
    }
  });
  int both_zero = 0;
  for (int r = 1; r <= kRounds; ++r) {
    x.store(0, std::memory_order_relaxed);
    y.store(0, std::memory_order_relaxed);
    go.store(r, std::memory_order_release);
    y.store(1, std::memory_order_relaxed);
    ASSERT_TRUE(AsymmetricFenceHeavy());
    const int heavy_saw = x.load(std::memory_order_relaxed);
    while (done.load(std::memory_order_acquire) != r) std::this_thread::yield();
    if (heavy_saw == 0 && light_saw[r - 1] == 0) ++both_zero;
  }
  light.join();
  EXPECT_EQ(both_zero, 0);
}

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem
