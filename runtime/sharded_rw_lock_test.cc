#include "runtime/sharded_rw_lock.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace accelmem {
namespace runtime {
namespace {

// The writer excludes readers and other writers: a pair of plain counters updated together by
// the writer is always seen equal by readers, and no writer update is lost.
TEST(ShardedRwLockTest, WriterExcludesReaders) {
  ShardedRwLock mu;
  long a = 0;
  long b = 0;
  std::atomic<bool> torn{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      for (int k = 0; k < 2000; ++k) {
        mu.Lock();
        a = a + 1;
        b = b + 1;
        mu.Unlock();
      }
    });
    threads.emplace_back([&] {
      for (int k = 0; k < 5000; ++k) {
        const int shard = mu.LockShared();
        if (a != b) torn = true;
        mu.UnlockShared(shard);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_FALSE(torn.load());
  EXPECT_EQ(a, 4000);
  EXPECT_EQ(b, 4000);
}

// Readers do not exclude each other: two readers can hold the lock at the same time.
TEST(ShardedRwLockTest, ReadersShare) {
  ShardedRwLock mu;
  std::atomic<int> inside{0};
  std::atomic<bool> both{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      const int shard = mu.LockShared();
      inside.fetch_add(1);
      for (int spin = 0; spin < 1000000 && !both.load(); ++spin) {
        if (inside.load() == 2) both = true;
        std::this_thread::yield();
      }
      mu.UnlockShared(shard);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_TRUE(both.load());
}

}  // namespace
}  // namespace runtime
}  // namespace accelmem
