#include "sparse_runtime/host_memory_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>

namespace accelmem {
namespace sparse_runtime {
namespace {

std::atomic<uint64_t> g_live_bytes{0};
constexpr uint64_t kHugePage = uint64_t{2} << 20;
// Mappings at least this big go on transparent huge pages. Above the 1-2 MiB chunk and granule
// tables of the lists, which are touched sparsely and would otherwise commit whole huge pages.
constexpr uint64_t kHugePageThreshold = uint64_t{4} << 20;

uint64_t PageSize() {
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Maps `length` bytes (a multiple of the page size) at an `alignment`-aligned address (a power of
// two, at least a page): maps alignment - page bytes more and unmaps the slack on both sides.
// `huge_pages` advises the range onto transparent huge pages. Null if the kernel refuses.
void* MapAligned(uint64_t length, uint64_t alignment, int prot, bool huge_pages) {
  const uint64_t over = length + alignment - PageSize();
  void* raw = mmap(nullptr, over, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (begin + alignment - 1) & ~(alignment - 1);
  if (aligned > begin) munmap(raw, aligned - begin);
  const uintptr_t end = begin + over;
  if (end > aligned + length) {
    munmap(reinterpret_cast<void*>(aligned + length), end - aligned - length);
  }
  if (huge_pages) madvise(reinterpret_cast<void*>(aligned), length, MADV_HUGEPAGE);
  return reinterpret_cast<void*>(aligned);
}

}  // namespace

HostMemoryPool::HostMemoryPool(uint64_t limit_bytes, uint64_t max_reserved_bytes)
    : limit_bytes_(limit_bytes), max_reserved_bytes_(max_reserved_bytes) {}

HostMemoryPool::~HostMemoryPool() {
  for (const Mapping& m : mappings_) munmap(m.address, m.length);
  for (const Reservation& r : reservations_) {
    munmap(reinterpret_cast<void*>(r.begin), r.end - r.begin);
  }
  g_live_bytes.fetch_sub(bytes_mapped_, std::memory_order_relaxed);
}

void* HostMemoryPool::Allocate(uint64_t size, uint64_t alignment) {
  const uint64_t page = PageSize();
  if (size == 0) size = 1;
  if (alignment < page) alignment = page;
  if (size >= kHugePageThreshold && alignment < kHugePage) alignment = kHugePage;
  if ((alignment & (alignment - 1)) != 0) return nullptr;
  const uint64_t length = (size + page - 1) / page * page;
  if (length < size || length + alignment < length) return nullptr;  // overflow
  {
    // Reserve the bytes first so that concurrent callers cannot overshoot the limit together.
    std::lock_guard<std::mutex> lock(mu_);
    if (limit_bytes_ != 0 && bytes_mapped_ + length > limit_bytes_) return nullptr;
    bytes_mapped_ += length;
  }
  // Large mappings (root buffers, big chunks) on transparent huge pages: random accesses to
  // pointer slots and cells otherwise pay a page walk each (expensive under virtualization).
  void* aligned =
      MapAligned(length, alignment, PROT_READ | PROT_WRITE, length >= kHugePageThreshold);
  std::lock_guard<std::mutex> lock(mu_);
  if (aligned == nullptr) {
    bytes_mapped_ -= length;
    return nullptr;
  }
  mappings_.push_back({aligned, static_cast<size_t>(length)});
  g_live_bytes.fetch_add(length, std::memory_order_relaxed);
  return aligned;
}

void* HostMemoryPool::Reserve(uint64_t size, uint64_t alignment) {
  const uint64_t page = PageSize();
  if (size == 0 || (alignment & (alignment - 1)) != 0) return nullptr;
  if (alignment < page) alignment = page;
  const bool huge = size >= kHugePageThreshold;
  if (huge && alignment < kHugePage) alignment = kHugePage;
  const uint64_t step = huge ? kHugePage : page;
  const uint64_t length = (size + step - 1) / step * step;
  if (length < size || length + alignment < length) return nullptr;  // overflow
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (length > max_reserved_bytes_ - bytes_reserved_) return nullptr;
    bytes_reserved_ += length;
  }
  void* address = MapAligned(length, alignment, PROT_NONE, huge);
  std::lock_guard<std::mutex> lock(mu_);
  if (address == nullptr) {
    bytes_reserved_ -= length;
    return nullptr;
  }
  const uintptr_t aligned = reinterpret_cast<uintptr_t>(address);
  reservations_.push_back({aligned, aligned + length, aligned, step});
  return address;
}

bool HostMemoryPool::Commit(void* address, uint64_t size) {
  const uintptr_t first = reinterpret_cast<uintptr_t>(address);
  const uintptr_t last = first + size;
  if (last < first) return false;
  std::lock_guard<std::mutex> lock(mu_);
  // Few reservations (one per data list), searched from the newest.
  for (auto r = reservations_.rbegin(); r != reservations_.rend(); ++r) {
    if (first < r->begin || last > r->end) continue;
    if (last <= r->committed_end) return true;
    // Whole steps from the start, except the reservation's first commit, which rounds to pages:
    // a data list commits only its zero lead elements at init (list_manager.h), and a 2 MiB step
    // for them would charge every sparse SNode 2 MiB of the limit before it holds a cell. The
    // next commit (the first chunk) rounds to the step again, so the list's first 2 MiB still
    // become one huge-page-eligible mapping.
    const uint64_t unit = r->committed_end == r->begin ? PageSize() : r->step;
    uintptr_t new_end = r->begin + (last - r->begin + unit - 1) / unit * unit;
    if (new_end > r->end) new_end = r->end;
    const uint64_t grow = new_end - r->committed_end;
    if (limit_bytes_ != 0 && bytes_mapped_ + grow > limit_bytes_) return false;
    if (mprotect(reinterpret_cast<void*>(r->committed_end), grow, PROT_READ | PROT_WRITE) != 0) {
      return false;
    }
    r->committed_end = new_end;
    bytes_mapped_ += grow;
    g_live_bytes.fetch_add(grow, std::memory_order_relaxed);
    return true;
  }
  return false;
}

void* HostMemoryPool::AllocateCallback(void* pool, uint64_t size, uint64_t alignment) {
  return static_cast<HostMemoryPool*>(pool)->Allocate(size, alignment);
}

void* HostMemoryPool::ReserveCallback(void* pool, uint64_t size, uint64_t alignment) {
  return static_cast<HostMemoryPool*>(pool)->Reserve(size, alignment);
}

bool HostMemoryPool::CommitCallback(void* pool, void* address, uint64_t size) {
  return static_cast<HostMemoryPool*>(pool)->Commit(address, size);
}

void HostMemoryPool::Attach(RuntimeMemory* memory, bool reservations) {
  if (reservations) {
    runtime_memory_init_host_reserving(memory, &HostMemoryPool::AllocateCallback,
                                       &HostMemoryPool::ReserveCallback,
                                       &HostMemoryPool::CommitCallback, this);
  } else {
    runtime_memory_init_host(memory, &HostMemoryPool::AllocateCallback, this);
  }
}

uint64_t HostMemoryPool::bytes_mapped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_mapped_;
}

uint64_t HostMemoryPool::num_mappings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return mappings_.size();
}

uint64_t HostMemoryPool::bytes_reserved() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_reserved_;
}

uint64_t HostMemoryPool::num_reservations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reservations_.size();
}

uint64_t HostMemoryPool::LiveBytesAllProcess() {
  return g_live_bytes.load(std::memory_order_relaxed);
}

}  // namespace sparse_runtime
}  // namespace accelmem
