// File: runtime/sharded_rw_lock.h
//
// ShardedRwLock: a reader-writer lock for the host API, where readers (every operation) are many
// and frequent and the writer (garbage collection, invariant checks) is rare. Each reader
// increments a counter on its own cache line (threads are spread over 16 shards), then checks the
// writer flag; the writer raises the flag, then waits for every shard to drain. Both sides use
// seq_cst, so either the reader sees the flag and backs off or the writer sees the reader's count
// and waits (Dekker). Readers never write a shared cache line, so operations from several
// threads do not contend (std::shared_mutex bounces one counter between all of them).
// std::atomic/std::mutex only, so ThreadSanitizer sees the synchronization.
#ifndef ACCELMEM_RUNTIME_SHARDED_RW_LOCK_H_
#define ACCELMEM_RUNTIME_SHARDED_RW_LOCK_H_

#include <atomic>
#include <mutex>
#include <thread>

namespace accelmem {
namespace runtime {

class ShardedRwLock {
 public:
  static constexpr int kShards = 16;

  // Returns the shard to pass to UnlockShared.
  int LockShared() {
    const int shard = ThreadShard();
    std::atomic<int>& readers = shards_[shard].readers;
    for (;;) {
      readers.fetch_add(1, std::memory_order_seq_cst);
      if (!writer_.load(std::memory_order_seq_cst)) return shard;
      readers.fetch_sub(1, std::memory_order_seq_cst);
      while (writer_.load(std::memory_order_acquire)) std::this_thread::yield();
    }
  }
  void UnlockShared(int shard) { shards_[shard].readers.fetch_sub(1, std::memory_order_release); }

  void Lock() {
    writer_mu_.lock();
    writer_.store(true, std::memory_order_seq_cst);
    for (Shard& s : shards_) {
      while (s.readers.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
    }
  }
  void Unlock() {
    writer_.store(false, std::memory_order_release);
    writer_mu_.unlock();
  }

 private:
  struct alignas(64) Shard {
    std::atomic<int> readers{0};
  };
  static int ThreadShard() {
    static std::atomic<int> next{0};
    thread_local const int shard = next.fetch_add(1, std::memory_order_relaxed) % kShards;
    return shard;
  }

  Shard shards_[kShards];
  alignas(64) std::atomic<bool> writer_{false};
  std::mutex writer_mu_;
};

}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_SHARDED_RW_LOCK_H_
