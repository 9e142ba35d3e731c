// File: benchmarks/baselines/upstream_list_manager.h
//
// A benchmark-only re-implementation of the list manager of Taichi's LLVM runtime
// (https://github.com/taichi-dev/taichi/blob/master/taichi/runtime/llvm/runtime_module/runtime.cpp,
// `struct ListManager`), written to measure accelmem's sparse runtime against the upstream
// algorithms in the same binary. It keeps upstream's choices on purpose, including the slow ones:
//
//   * a fixed table of 128 Ki chunk pointers inside the object, chunks allocated on first touch
//     under a spin lock (one atomic exchange per try) and published with an atomic exchange;
//   * reserve_new_element = one atomic add on the element count, then touch the chunk;
//   * get_element_ptr = chunks[i >> log2] + element_size * (i & mask);
//   * ptr2index = a linear scan over the chunks in index order, comparing the pointer with each
//     chunk's [begin, end) range, then a division by the (run-time) element size;
//   * clear() only resets the count (chunks and contents stay); append copies element_size bytes.
//
// Upstream asserts when the scan reaches an unallocated chunk; here the scan returns -1 instead.
// Chunks come from an injectable allocator, so that a benchmark can hand the baseline the same
// kind of memory (pool, page size) as accelmem's runtime.
#ifndef ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_LIST_MANAGER_H_
#define ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_LIST_MANAGER_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace accelmem {
namespace baselines {

using Ptr = uint8_t*;

// Upstream's mutex_lock_i32 / mutex_unlock_i32: spin on an atomic exchange.
inline void UpstreamLock(int32_t* lock) {
  while (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE) == 1) {
  }
}
inline void UpstreamUnlock(int32_t* lock) { (void)__atomic_exchange_n(lock, 0, __ATOMIC_RELEASE); }

// Where chunks come from: fn(ctx, bytes, alignment), or (fn == nullptr) std::aligned_alloc, in
// which case the list frees its chunks when destroyed.
struct UpstreamAllocator {
  void* (*fn)(void* ctx, uint64_t bytes, uint64_t alignment) = nullptr;
  void* ctx = nullptr;
};

class UpstreamListManager {
 public:
  static constexpr int32_t kMaxNumChunks = 128 * 1024;

  // num_elements_per_chunk must be a power of two.
  UpstreamListManager(std::size_t element_size, int32_t num_elements_per_chunk,
                      UpstreamAllocator allocator = {})
      : element_size_(element_size),
        max_num_elements_per_chunk_(num_elements_per_chunk),
        allocator_(allocator),
        chunks_(kMaxNumChunks, nullptr) {
    while ((int32_t{1} << log2_chunk_num_elements_) < num_elements_per_chunk) {
      ++log2_chunk_num_elements_;
    }
  }
  ~UpstreamListManager() {
    if (allocator_.fn != nullptr) return;
    for (Ptr chunk : chunks_) std::free(chunk);
  }
  UpstreamListManager(const UpstreamListManager&) = delete;
  UpstreamListManager& operator=(const UpstreamListManager&) = delete;

  int32_t reserve_new_element() {
    const int32_t i = __atomic_fetch_add(&num_elements_, 1, __ATOMIC_SEQ_CST);
    touch_chunk(i >> log2_chunk_num_elements_);
    return i;
  }

  void touch_chunk(int32_t c) {
    if (__atomic_load_n(&chunks_[c], __ATOMIC_ACQUIRE) != nullptr) return;
    UpstreamLock(&lock_);
    if (__atomic_load_n(&chunks_[c], __ATOMIC_ACQUIRE) == nullptr) {  // lost a race?
      const uint64_t bytes = element_size_ * static_cast<uint64_t>(max_num_elements_per_chunk_);
      void* chunk = nullptr;
      if (allocator_.fn != nullptr) {
        chunk = allocator_.fn(allocator_.ctx, bytes, 4096);  // fresh pool memory: zero
      } else {
        chunk = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
        if (chunk != nullptr) std::memset(chunk, 0, bytes);  // upstream's pool hands out zeros
      }
      if (chunk == nullptr) std::abort();
      (void)__atomic_exchange_n(&chunks_[c], static_cast<Ptr>(chunk), __ATOMIC_RELEASE);
    }
    UpstreamUnlock(&lock_);
  }

  Ptr get_element_ptr(int32_t i) const {
    return chunks_[i >> log2_chunk_num_elements_] +
           element_size_ * static_cast<std::size_t>(i & (max_num_elements_per_chunk_ - 1));
  }
  template <typename T>
  T& get(int32_t i) const {
    return *reinterpret_cast<T*>(get_element_ptr(i));
  }

  void append(const void* data) {
    const int32_t i = reserve_new_element();
    std::memcpy(get_element_ptr(i), data, element_size_);
  }
  template <typename T>
  void push_back(const T& t) {
    const int32_t i = reserve_new_element();
    get<T>(i) = t;
  }

  // The linear scan: the index of the element at `p`, or -1 when no allocated chunk holds it.
  int32_t ptr2index(const void* p) const {
    const uintptr_t address = reinterpret_cast<uintptr_t>(p);
    const std::size_t chunk_bytes =
        static_cast<std::size_t>(max_num_elements_per_chunk_) * element_size_;
    for (int32_t c = 0; c < kMaxNumChunks; ++c) {
      const uintptr_t begin = reinterpret_cast<uintptr_t>(chunks_[c]);
      if (begin == 0) return -1;  // upstream: taichi_assert(chunks[i] != nullptr)
      if (begin <= address && address < begin + chunk_bytes) {
        return (c << log2_chunk_num_elements_) +
               static_cast<int32_t>((address - begin) / element_size_);
      }
    }
    return -1;
  }

  int32_t size() const { return __atomic_load_n(&num_elements_, __ATOMIC_ACQUIRE); }
  void clear() { __atomic_store_n(&num_elements_, 0, __ATOMIC_RELEASE); }
  void resize(int32_t n) { __atomic_store_n(&num_elements_, n, __ATOMIC_RELEASE); }

  std::size_t element_size() const { return element_size_; }
  int32_t max_num_elements_per_chunk() const { return max_num_elements_per_chunk_; }
  // Chunks allocated so far (they are allocated in index order by reserve_new_element).
  int32_t num_chunks() const {
    int32_t n = 0;
    while (n < kMaxNumChunks && chunks_[n] != nullptr) ++n;
    return n;
  }
  Ptr chunk(int32_t c) const { return chunks_[c]; }

 private:
  std::size_t element_size_;
  int32_t max_num_elements_per_chunk_;
  int32_t log2_chunk_num_elements_ = 0;
  UpstreamAllocator allocator_;
  int32_t lock_ = 0;
  int32_t num_elements_ = 0;
  std::vector<Ptr> chunks_;  // upstream: Ptr chunks[max_num_chunks] inside the object
};

}  // namespace baselines
}  // namespace accelmem

#endif  // ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_LIST_MANAGER_H_
