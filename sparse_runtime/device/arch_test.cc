#include "sparse_runtime/device/arch.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

// Fetch-and-op atomics return the previous value and apply the operation.
TEST(ArchTest, AtomicsReturnPreviousValue) {
  i32 x = 5;
  EXPECT_EQ(atomic_add(&x, 3), 5);
  EXPECT_EQ(x, 8);
  EXPECT_EQ(atomic_exchange(&x, 1), 8);
  EXPECT_EQ(atomic_or(&x, 6), 1);
  EXPECT_EQ(x, 7);
  EXPECT_EQ(atomic_and(&x, 3), 7);
  EXPECT_EQ(x, 3);
  u64 y = 10;
  EXPECT_EQ(atomic_max(&y, u64{4}), 10u);
  EXPECT_EQ(y, 10u);
  EXPECT_EQ(atomic_max(&y, u64{40}), 10u);
  EXPECT_EQ(y, 40u);
}

// CAS succeeds only on the expected value and reports the current value on failure.
TEST(ArchTest, CompareAndSwap) {
  i64 x = 1;
  i64 expected = 2;
  EXPECT_FALSE(atomic_cas(&x, &expected, i64{9}));
  EXPECT_EQ(expected, 1);
  EXPECT_TRUE(atomic_cas(&x, &expected, i64{9}));
  EXPECT_EQ(x, 9);
  int v = 0;
  int* p = nullptr;
  int* want = nullptr;
  EXPECT_TRUE(atomic_cas(&p, &want, &v));
  EXPECT_EQ(atomic_load_acquire(&p), &v);
}

// locked_task skips the body when the test fails before or after locking.
TEST(ArchTest, LockedTaskIsDoubleChecked) {
  i32 lock = 0;
  int runs = 0;
  locked_task(
      &lock, [&] { ++runs; }, [] { return false; });
  EXPECT_EQ(runs, 0);
  int calls = 0;
  locked_task(
      &lock, [&] { ++runs; }, [&] { return ++calls == 1; });  // true, then false
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(calls, 2);
  locked_task(&lock, [&] { ++runs; });
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(lock, 0);
}

// The spinlock gives mutual exclusion: unsynchronized increments under it are never lost.
TEST(ArchTest, LockedTaskExcludesConcurrentBodies) {
  i32 lock = 0;
  long counter = 0;
  constexpr int kPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      for (int k = 0; k < kPerThread; ++k) locked_task(&lock, [&] { counter = counter + 1; });
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(counter, 2L * kPerThread);
}

// Only one of several racing initializers runs when the test observes its effect (the pattern of
// touch_chunk and Pointer_activate).
TEST(ArchTest, WarpLockedTaskRunsInitializationOnce) {
  i32 lock = 0;
  int* slot = nullptr;
  std::atomic<int> inits{0};
  static int storage[4];
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      warp_locked_task(
          &lock,
          [&] {
            inits.fetch_add(1);
            atomic_store_release(&slot, &storage[t]);
          },
          [&] { return atomic_load_acquire(&slot) == nullptr; });
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(inits.load(), 1);
  EXPECT_NE(slot, nullptr);
}

// Waiters leave without taking the lock once the task is done: the holder publishes its result
// and then keeps the lock until every waiter has returned. (Before, each waiter took the lock just
// to re-check: none could return while it was held.) Deadlines keep a regression from hanging.
TEST(ArchTest, LockedTaskWaitersLeaveWithoutTheLockOnceTheTaskIsDone) {
  constexpr int kWaiters = 6;
  i32 lock = 0;
  int* slot = nullptr;
  static int storage;
  std::atomic<int> runs{0}, waiting{0}, returned{0}, returned_while_held{-1};
  std::atomic<bool> holding{false};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  auto before_deadline = [&] { return std::chrono::steady_clock::now() < deadline; };
  auto missing = [&] { return atomic_load_acquire(&slot) == nullptr; };
  std::thread holder([&] {
    locked_task(
        &lock,
        [&] {
          runs.fetch_add(1);
          holding = true;
          while (waiting.load() < kWaiters && before_deadline()) std::this_thread::yield();
          atomic_store_release(&slot, &storage);
          while (returned.load() < kWaiters && before_deadline()) std::this_thread::yield();
          returned_while_held = returned.load();
        },
        missing);
  });
  while (!holding.load()) std::this_thread::yield();
  std::vector<std::thread> waiters;
  for (int t = 0; t < kWaiters; ++t) {
    waiters.emplace_back([&] {
      int calls = 0;
      locked_task(
          &lock, [&] { runs.fetch_add(1); },
          [&] {
            if (++calls == 2) waiting.fetch_add(1);  // a second test: waiting for the lock
            return missing();
          });
      returned.fetch_add(1);
    });
  }
  holder.join();
  for (auto& th : waiters) th.join();
  EXPECT_EQ(waiting.load(), kWaiters);
  EXPECT_EQ(returned_while_held.load(), kWaiters);
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(lock, 0);
}

// Racing threads that all find the task needed: it runs exactly once per round, and the lock is
// free afterwards.
TEST(ArchTest, LockedTaskRunsOnceAmongRacingThreads) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 200;
  static int storage;
  for (int round = 0; round < kRounds; ++round) {
    i32 lock = 0;
    int* slot = nullptr;
    std::atomic<int> runs{0}, ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();
        locked_task(
            &lock,
            [&] {
              runs.fetch_add(1);
              atomic_store_release(&slot, &storage);
            },
            [&] { return atomic_load_acquire(&slot) == nullptr; });
      });
    }
    for (auto& th : threads) th.join();
    ASSERT_EQ(runs.load(), 1) << "round " << round;
    ASSERT_EQ(slot, &storage);
    ASSERT_EQ(lock, 0);
  }
}

// CPU ids describe a single thread of a single block.
TEST(ArchTest, CpuThreadIds) {
  EXPECT_EQ(thread_idx(), 0);
  EXPECT_EQ(block_idx(), 0);
  EXPECT_EQ(block_dim(), 1);
  EXPECT_EQ(grid_dim(), 1);
  int key = 0;
  EXPECT_TRUE(is_representative(active_mask(), &key));
}

// Power-of-two helpers.
TEST(ArchTest, PowerOfTwoHelpers) {
  EXPECT_TRUE(is_power_of_two_u64(1));
  EXPECT_TRUE(is_power_of_two_u64(4096));
  EXPECT_FALSE(is_power_of_two_u64(0));
  EXPECT_FALSE(is_power_of_two_u64(12));
  EXPECT_EQ(next_power_of_two_u64(1), 1u);
  EXPECT_EQ(next_power_of_two_u64(5), 8u);
  EXPECT_EQ(next_power_of_two_u64(8), 8u);
  EXPECT_EQ(next_power_of_two_u64((u64{1} << 20) + 8), u64{1} << 21);
  EXPECT_EQ(log2_floor_u64(1), 0);
  EXPECT_EQ(log2_floor_u64(16384), 14);
  EXPECT_EQ(round_up_u64(28, 8), 32u);
}

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem
