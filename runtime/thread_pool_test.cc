#include "runtime/thread_pool.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace accelmem {
namespace runtime {
namespace {

// Every index runs exactly once, with a worker id inside [0, num_threads).
TEST(ThreadPoolTest, EveryIndexRunsOnce) {
  ThreadPool pool(3);
  EXPECT_EQ(pool.num_threads(), 3);
  for (int64_t n : {0, 1, 7, 1000, 100003}) {
    std::vector<std::atomic<int>> hits(n);
    std::atomic<bool> bad_worker{false};
    pool.ParallelFor(
        n,
        [&](int64_t i, int worker) {
          hits[i].fetch_add(1);
          if (worker < 0 || worker >= 3) bad_worker = true;
        },
        /*grain=*/16);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << i;
    EXPECT_FALSE(bad_worker.load());
  }
}

// More than one thread takes part when there is enough work.
TEST(ThreadPoolTest, WorkIsShared) {
  ThreadPool pool(2);
  std::atomic<int> seen_mask{0};
  pool.ParallelFor(1 << 16, [&](int64_t, int worker) {
    seen_mask.fetch_or(1 << worker);
    if (worker == 0) std::this_thread::yield();
  });
  // Worker 0 (the caller) always participates; worker 1 usually does, but that is scheduling.
  EXPECT_NE(seen_mask.load() & 1, 0);
}

// A ParallelFor inside a task runs inline instead of deadlocking.
TEST(ThreadPoolTest, NestedCallsRunInline) {
  ThreadPool pool(2);
  std::atomic<int> inner{0};
  pool.ParallelFor(
      4, [&](int64_t, int) { pool.ParallelFor(10, [&](int64_t, int) { inner.fetch_add(1); }); });
  EXPECT_EQ(inner.load(), 40);
}

// Calls from two threads at once are serialized and both complete.
TEST(ThreadPoolTest, ConcurrentCallersBothComplete) {
  ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 2; ++t) {
    callers.emplace_back([&] {
      for (int r = 0; r < 20; ++r) pool.ParallelFor(500, [&](int64_t i, int) { sum += i; });
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(sum.load(), 2 * 20 * (499 * 500 / 2));
}

}  // namespace
}  // namespace runtime
}  // namespace accelmem
