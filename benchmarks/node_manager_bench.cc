// node_manager_bench: allocate + recycle cycles of the sparse runtime's NodeManager against
// general-purpose allocators, through their explicit entry points in one binary: glibc
// (__libc_malloc/__libc_free), mimalloc (mi_malloc/mi_free), jemalloc (mallocx/sdallocx) and
// tcmalloc (tc_malloc/tc_free).
//
// One cycle = allocate N = 2^20 cells of 64 B, then release all of them, LIFO (reverse order) or
// in a fixed random order, in groups of 64 pointers gathered from the harness's array; the work is
// split over 1 or 2 threads (same N in total, so the 2-thread row measures strong scaling). Only
// the cycle is timed (manual time); for the NodeManager the GC that makes the recycled cells
// reusable runs untimed between cycles: the runtime's own, gc::gc_serial (what SparseRuntime runs
// with one GC worker; it hands cells out again in address order and zeroes long runs with
// streaming stores; //benchmarks:gc_bench times it). The GcSerial rows time the serial GCs of
// 2^20 recycled cells (upstream's, the manager's reference NodeManager::gc_serial and the
// runtime's gc::gc_serial), BM_Memset_Limit one memset of the same bytes. Arguments: /random
// (0 = LIFO, 1 = random) /threads /touch (1 = write 8 bytes into every cell after allocating it, as
// a user would).
//
// Upstream baseline (//benchmarks/baselines, the algorithms of Taichi's LLVM runtime):
// `BM_Upstream_Cycle` runs the same cycles through upstream's NodeManager (per-cell allocate; per-
// cell recycle that finds the cell's index by scanning the data list's chunks; upstream's
// gc_serial untimed between cycles, recycling order), on chunks from the same kind of pool. It is
// registered before the NodeManager rows; each of them reports `vs_upstream` = upstream's CPU time
// per cell / its own, for the same arguments (CPU time, since wall time on this shared VM says
// little; see benchmarks/baselines/paired_timing.h). `BM_Upstream_Ptr2Index` / `BM_NodeManager_
// Ptr2Index` time the address -> index step alone (2^20 cells, sequential or random order; the
// data list in its contiguous reservation, as the runtime's CPU pool gives it, and
// `BM_NodeManager_Ptr2Index_GranuleTable` in the chunked fallback layout), and
// `BM_Upstream_GcSerial` pairs with the GC rows below; these pairs report thread CPU time as
// manual time.
//
// NodeManager variants: `Plain` is the runtime's allocate()/recycle() (one atomic each, as
// upstream); `Batch64` uses allocate_cells()/recycle_cells() in batches of 64 (one atomic per
// batch); `Cached` is the per-cell API through one NodeCache per thread (//sparse_runtime/device:
// node_cache: per-cell allocate()/recycle(ptr) with no shared atomic on the fast path, refills
// and flushes of NodeCache::kBatch = 512 cells (kRecycledIndexBatch = 1536 recycled indices); each
// thread flushes its cache at the end of the timed cycle, as a worker must before a GC). Counters:
// ns_per_cell (per allocate + release pair, wall), cpu_ns_per_cell (the threads' CPU time per pair)
// and, for the NodeManager, meta_B_per_cell (resident bytes of the free and recycled lists and of
// the chunk / granule tables, per cell).
//
// BM_Cycles and BM_CycleScaling (at the end) run the same cycles interleaved, every contender in
// one row: the rows to quote ratios from (see there).
#include <gperftools/tcmalloc.h>
#include <jemalloc/jemalloc.h>
#include <mimalloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "benchmarks/baselines/paired_timing.h"
#include "benchmarks/baselines/upstream_node_manager.h"
#include "gc/device/gc_serial.h"
#include "sparse_runtime/device/node_cache.h"
#include "sparse_runtime/device/node_manager.h"
#include "sparse_runtime/host_memory_pool.h"

extern "C" void* __libc_malloc(size_t size);
extern "C" void __libc_free(void* ptr);

namespace {

using accelmem::baselines::BaselineSecondsPerItem;
using accelmem::baselines::PairedRow;
using accelmem::baselines::UpstreamAllocator;
using accelmem::baselines::UpstreamNodeManager;
using accelmem::sparse_runtime::HostMemoryPool;
using accelmem::sparse_runtime::NodeCache;
using accelmem::sparse_runtime::NodeManager;
using accelmem::sparse_runtime::RuntimeMemory;

constexpr int64_t kCells = int64_t{1} << 20;
constexpr size_t kCellBytes = 64;

// An array on transparent huge pages: the harness's own pointer and order arrays (12 MiB) would
// otherwise add a TLB miss per random access that dwarfs the allocators' cost on this VM.
template <typename T>
class HugeArray {
 public:
  explicit HugeArray(size_t n) : n_(n), bytes_((n * sizeof(T) + kHuge - 1) / kHuge * kHuge) {
    void* p =
        mmap(nullptr, bytes_ + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    raw_ = p;
    data_ = reinterpret_cast<T*>((reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1));
    madvise(data_, bytes_, MADV_HUGEPAGE);
    std::memset(static_cast<void*>(data_), 0, bytes_);
  }
  ~HugeArray() { munmap(raw_, bytes_ + kHuge); }
  HugeArray(const HugeArray&) = delete;
  HugeArray& operator=(const HugeArray&) = delete;
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  size_t size() const { return n_; }
  T* begin() { return data_; }
  T* end() { return data_ + n_; }

 private:
  static constexpr size_t kHuge = size_t{2} << 20;
  size_t n_;
  size_t bytes_;
  void* raw_;
  T* data_;
};

// Per-thread pointers and release orders (fixed per thread count and order kind).
struct Work {
  Work(int threads, bool random) {
    const int64_t per = kCells / threads;
    for (int t = 0; t < threads; ++t) {
      ptrs.push_back(std::make_unique<HugeArray<void*>>(per));
      order.push_back(std::make_unique<HugeArray<int32_t>>(per));
      HugeArray<int32_t>& o = *order.back();
      for (int64_t k = 0; k < per; ++k) o[k] = static_cast<int32_t>(per - 1 - k);  // LIFO
      if (random) {
        std::mt19937_64 rng(42 + t);
        std::shuffle(o.begin(), o.end(), rng);
      }
    }
  }
  std::vector<std::unique_ptr<HugeArray<void*>>> ptrs;
  std::vector<std::unique_ptr<HugeArray<int32_t>>> order;
};

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Runs fn(thread) on `threads` threads released together; returns the wall seconds and adds the
// threads' CPU seconds to *cpu_seconds (on a loaded machine the wall time of the 2-thread rows
// says little; CPU time per cell shows whether the threads slow each other down).
template <typename Fn>
double TimeParallel(int threads, Fn&& fn, double* cpu_seconds = nullptr) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  std::vector<double> cpu(threads, 0.0);
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      const double start = ThreadCpuSeconds();
      fn(t);
      cpu[t] = ThreadCpuSeconds() - start;
    });
  }
  while (ready.load() != threads) {
  }
  const auto start = std::chrono::steady_clock::now();
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (cpu_seconds != nullptr) {
    for (double c : cpu) *cpu_seconds += c;
  }
  return wall;
}

void SetCellCounters(benchmark::State& state, double cpu_seconds) {
  state.SetItemsProcessed(state.iterations() * kCells);
  state.counters["ns_per_cell"] = benchmark::Counter(
      static_cast<double>(kCells),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["cpu_ns_per_cell"] =
      1e9 * cpu_seconds / (static_cast<double>(state.iterations()) * kCells);
}

inline void Touch(void* p, int64_t k) { *static_cast<volatile int64_t*>(p) = k; }

// Hands the thread's pointers to release(batch) in groups of 64, in its release order: each
// group is copied into `batch` while the group after it is prefetched, so that the harness's own
// random reads cost as little as possible (the same for every contender). Always inlined into the
// cycle, as a kernel's own release loop would be: left out of line (GCC's choice for this loop),
// the release callback reached its allocator's state only through the closure, so a cache's
// counter went through memory on every call (about 3 ns of a NodeCache pair), an artefact of the
// harness rather than a cost of the allocator.
template <typename Release>
__attribute__((always_inline)) inline void ReleaseGathered(const HugeArray<void*>& ptrs,
                                                           const HugeArray<int32_t>& order,
                                                           Release&& release) {
  const int64_t n = static_cast<int64_t>(ptrs.size());
  void* batch[64];
  for (int64_t k = 0; k < n; k += 64) {
    if (k + 128 <= n) {
      for (int j = 0; j < 64; ++j) __builtin_prefetch(&ptrs[order[k + 64 + j]]);
    }
    for (int j = 0; j < 64; ++j) batch[j] = ptrs[order[k + j]];
    release(batch);
  }
}

// Times cycle(thread) on `threads` threads: one untimed warm-up, then one timed run per
// iteration, with between() untimed after the warm-up and after every run; then the counters.
// Returns the threads' CPU seconds per cell.
template <typename Cycle, typename Between>
double TimeCycles(benchmark::State& state, int threads, Cycle& cycle, Between&& between) {
  TimeParallel(threads, cycle);  // warm-up: chunks, page faults
  between();
  double cpu_seconds = 0;
  for (auto _ : state) {
    state.SetIterationTime(TimeParallel(threads, cycle, &cpu_seconds));
    between();
  }
  SetCellCounters(state, cpu_seconds);
  return cpu_seconds / (static_cast<double>(state.iterations()) * kCells);
}

// The key of a cycle row's arguments (random/threads/touch), for the upstream pairing.
std::string CycleKey(benchmark::State& state) {
  return "Cycle/" + std::to_string(state.range(0)) + "/" + std::to_string(state.range(1)) + "/" +
         std::to_string(state.range(2));
}

// ---------------------------------------------------------------------------------------------
// General-purpose allocators.
struct Glibc {
  static void* Alloc() { return __libc_malloc(kCellBytes); }
  static void Free(void* p) { __libc_free(p); }
};
struct Mimalloc {
  static void* Alloc() { return mi_malloc(kCellBytes); }
  static void Free(void* p) { mi_free(p); }
};
struct Jemalloc {
  static void* Alloc() { return mallocx(kCellBytes, 0); }
  static void Free(void* p) { sdallocx(p, kCellBytes, 0); }
};
struct Tcmalloc {
  static void* Alloc() { return tc_malloc(kCellBytes); }
  static void Free(void* p) { tc_free(p); }
};

// One contender of the cycle rows: its cycle on thread t (over work.ptrs[t] / work.order[t]) and
// what runs untimed between cycles. The separate rows and the interleaved ones at the end share
// these, so both time the same code.
struct CycleContender {
  std::function<void(int)> cycle;  // the cycle's share of thread t
  std::function<void()> between;   // untimed after each cycle (may be empty)
};

template <typename A>
CycleContender MallocContender(Work& work, bool touch) {
  return {[&work, touch](int t) {
            HugeArray<void*>& ptrs = *work.ptrs[t];
            const HugeArray<int32_t>& order = *work.order[t];
            const int64_t n = static_cast<int64_t>(ptrs.size());
            for (int64_t k = 0; k < n; ++k) {
              ptrs[k] = A::Alloc();
              if (touch) Touch(ptrs[k], k);
            }
            ReleaseGathered(ptrs, order, [](void** batch) {
              for (int j = 0; j < 64; ++j) A::Free(batch[j]);
            });
          },
          {}};
}

template <typename A>
void BM_Malloc(benchmark::State& state) {
  const bool random = state.range(0) != 0;
  const int threads = static_cast<int>(state.range(1));
  const bool touch = state.range(2) != 0;
  Work work(threads, random);
  CycleContender c = MallocContender<A>(work, touch);
  TimeCycles(state, threads, c.cycle, [] {});
}

// The harness alone: "allocation" hands out the next cell of a preallocated per-thread array and
// "release" only consumes the pointer. Not an allocator: the floor that every row above and below
// pays for its pointer array, release order and gathering.
CycleContender HarnessContender(Work& work, bool touch) {
  auto cells = std::make_shared<HugeArray<char>>(kCells * kCellBytes);
  return {[&work, touch, cells](int t) {
            HugeArray<void*>& ptrs = *work.ptrs[t];
            const HugeArray<int32_t>& order = *work.order[t];
            const int64_t n = static_cast<int64_t>(ptrs.size());
            char* next = &(*cells)[static_cast<size_t>(t * n) * kCellBytes];
            for (int64_t k = 0; k < n; ++k) {
              ptrs[k] = next;
              next += kCellBytes;
              benchmark::DoNotOptimize(next);
              if (touch) Touch(ptrs[k], k);
            }
            ReleaseGathered(ptrs, order, [](void** batch) {
              for (int j = 0; j < 64; ++j) benchmark::DoNotOptimize(batch[j]);
            });
          },
          {}};
}

void BM_Harness_Cycle(benchmark::State& state) {
  const bool random = state.range(0) != 0;
  const int threads = static_cast<int>(state.range(1));
  const bool touch = state.range(2) != 0;
  Work work(threads, random);
  CycleContender c = HarnessContender(work, touch);
  TimeCycles(state, threads, c.cycle, [] {});
}

// ---------------------------------------------------------------------------------------------
// NodeManager.
struct Manager {
  // `contiguous`: the data list in one reservation (the pool's default); otherwise chunked with
  // the granule table (the fallback layout).
  explicit Manager(bool contiguous = true) {
    pool.Attach(&memory, contiguous);
    nm.init(&memory, kCellBytes, 8);
  }
  // Resident (committed) bytes of the free and recycled lists and of all lists' chunk and granule
  // tables, per cell. The tables are reserved for 2^17 chunks but only touched pages count.
  double MetaBytesPerCell() const {
    double bytes = 0;
    for (const auto* l : {&nm.free_list, &nm.recycled_list, &nm.data_list}) {
      bytes += Resident(l->chunks, sizeof(void*) * l->max_num_chunks);
      if (l->granule_keys != nullptr) {
        bytes += Resident(l->granule_keys, sizeof(uint64_t) * (l->granule_table_mask + 1));
        bytes += Resident(l->granule_firsts, sizeof(int32_t) * (l->granule_table_mask + 1));
      }
      if (l != &nm.data_list) {
        for (int c = 0; c < l->get_num_active_chunks(); ++c) {
          bytes += Resident(l->chunks[c], l->chunk_bytes());
        }
      }
    }
    return bytes / kCells;
  }
  static double Resident(const void* p, size_t bytes) {
    const uintptr_t page = 4096;
    const uintptr_t begin = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes + page - 1) & ~(page - 1);
    std::vector<unsigned char> vec((end - begin) / page);
    if (mincore(reinterpret_cast<void*>(begin), end - begin, vec.data()) != 0) return bytes;
    double resident = 0;
    for (unsigned char v : vec) resident += (v & 1) ? page : 0;
    return resident;
  }
  HostMemoryPool pool;
  RuntimeMemory memory;
  NodeManager nm{};
};

enum class Api { kPlain, kBatch64, kCached };

// A NodeManager with one cache per thread (cache-line aligned objects, so the threads share no
// line) and the GC's scratch.
struct NodeManagerSetup {
  explicit NodeManagerSetup(int threads) : caches(new NodeCache[threads]()) {
    for (int t = 0; t < threads; ++t) caches[t].init(&manager.nm);
  }
  Manager manager;
  std::unique_ptr<NodeCache[]> caches;
  accelmem::gc::GcScratch scratch{};
};

// The three NodeManager forms; between cycles the GC the runtime runs (SparseRuntime's
// GcCollector with the default gc_workers = 1 calls gc::gc_serial), which makes the recycled
// cells reusable.
template <Api kApi>
CycleContender NodeManagerContender(Work& work, bool touch, std::shared_ptr<NodeManagerSetup> st) {
  return {[&work, touch, st](int t) {
            NodeManager& nm = st->manager.nm;
            HugeArray<void*>& ptrs = *work.ptrs[t];
            const HugeArray<int32_t>& order = *work.order[t];
            const int64_t n = static_cast<int64_t>(ptrs.size());
            if (kApi == Api::kCached) {
              NodeCache& cache = st->caches[t];
              for (int64_t k = 0; k < n; ++k) {
                ptrs[k] = cache.allocate();
                if (touch) Touch(ptrs[k], k);
              }
              ReleaseGathered(ptrs, order, [&](void** batch) {
                for (int j = 0; j < 64; ++j) cache.recycle(static_cast<uint8_t*>(batch[j]));
              });
              cache.flush();
            } else if (kApi == Api::kPlain) {
              for (int64_t k = 0; k < n; ++k) {
                ptrs[k] = nm.allocate();
                if (touch) Touch(ptrs[k], k);
              }
              ReleaseGathered(ptrs, order, [&](void** batch) {
                for (int j = 0; j < 64; ++j) nm.recycle(static_cast<uint8_t*>(batch[j]));
              });
            } else {
              for (int64_t k = 0; k < n; k += 64) {
                nm.allocate_cells(reinterpret_cast<uint8_t**>(&ptrs[k]), 64);
                if (touch) {
                  for (int j = 0; j < 64; ++j) Touch(ptrs[k + j], k + j);
                }
              }
              ReleaseGathered(ptrs, order, [&](void** batch) {
                nm.recycle_cells(reinterpret_cast<uint8_t**>(batch), 64);
              });
            }
          },
          [st] {
            if (!accelmem::gc::gc_serial(&st->manager.nm, &st->scratch)) std::abort();
          }};
}

template <Api kApi>
void BM_NodeManager(benchmark::State& state) {
  const bool random = state.range(0) != 0;
  const int threads = static_cast<int>(state.range(1));
  const bool touch = state.range(2) != 0;
  Work work(threads, random);
  auto st = std::make_shared<NodeManagerSetup>(threads);
  CycleContender c = NodeManagerContender<kApi>(work, touch, st);
  auto collect = [&] {
    if (!accelmem::gc::gc_serial(&st->manager.nm, &st->scratch)) {
      state.SkipWithError(st->manager.memory.error_message);
    }
  };
  const double cpu_per_cell = TimeCycles(state, threads, c.cycle, collect);
  if (st->manager.nm.data_list.size() != kCells) state.SkipWithError("cells were not reused");
  state.counters["meta_B_per_cell"] = st->manager.MetaBytesPerCell();
  auto upstream = BaselineSecondsPerItem().find(CycleKey(state));
  if (upstream != BaselineSecondsPerItem().end() && cpu_per_cell > 0) {
    state.counters["vs_upstream"] = upstream->second / cpu_per_cell;
  }
}

// Upstream's NodeManager, the same cycles: per-cell allocate and recycle (the linear chunk scan),
// upstream's gc_serial (recycling order) untimed between cycles.
struct UpstreamManager {
  UpstreamManager()
      : nm(kCellBytes, UpstreamNodeManager::kRuntimeChunkNumElements,
           UpstreamAllocator{&HostMemoryPool::AllocateCallback, &pool}) {}
  HostMemoryPool pool;
  UpstreamNodeManager nm;
};

CycleContender UpstreamContender(Work& work, bool touch, std::shared_ptr<UpstreamManager> manager) {
  return {[&work, touch, manager](int t) {
            UpstreamNodeManager& nm = manager->nm;
            HugeArray<void*>& ptrs = *work.ptrs[t];
            const HugeArray<int32_t>& order = *work.order[t];
            const int64_t n = static_cast<int64_t>(ptrs.size());
            for (int64_t k = 0; k < n; ++k) {
              ptrs[k] = nm.allocate();
              if (touch) Touch(ptrs[k], k);
            }
            ReleaseGathered(ptrs, order, [&](void** batch) {
              for (int j = 0; j < 64; ++j) nm.recycle(batch[j]);
            });
          },
          [manager] { manager->nm.gc_serial(); }};
}

void BM_Upstream_Cycle(benchmark::State& state) {
  const bool random = state.range(0) != 0;
  const int threads = static_cast<int>(state.range(1));
  const bool touch = state.range(2) != 0;
  Work work(threads, random);
  auto manager = std::make_shared<UpstreamManager>();
  CycleContender c = UpstreamContender(work, touch, manager);
  const double cpu_per_cell = TimeCycles(state, threads, c.cycle, c.between);
  if (manager->nm.data_list->size() != kCells) state.SkipWithError("cells were not reused");
  BaselineSecondsPerItem()[CycleKey(state)] = cpu_per_cell;
}

// ptr2index alone: the index of each of 2^20 allocated cells, sequential or random order.
template <typename Locate>
void TimePtr2Index(benchmark::State& state, std::vector<void*> cells, Locate&& locate,
                   bool baseline) {
  if (state.range(0) != 0) std::shuffle(cells.begin(), cells.end(), std::mt19937_64(42));
  PairedRow row(state);
  int64_t sum = 0;
  for (auto _ : state) {
    row.Time([&] {
      int64_t s = 0;
      for (void* p : cells) s += locate(p);
      sum += s;
    });
  }
  benchmark::DoNotOptimize(sum);
  const std::string key = "Ptr2Index/" + std::to_string(state.range(0));
  if (baseline) {
    row.RecordBaseline(key, kCells);
  } else {
    row.ReportAgainst(key, kCells);
  }
  state.SetItemsProcessed(state.iterations() * kCells);
}

void BM_Upstream_Ptr2Index(benchmark::State& state) {
  auto manager = std::make_unique<UpstreamManager>();
  std::vector<void*> cells(kCells);
  for (void*& p : cells) p = manager->nm.allocate();
  TimePtr2Index(
      state, std::move(cells), [&](void* p) { return manager->nm.locate(p); }, true);
}

template <bool kContiguous>
void BM_NodeManager_Ptr2Index(benchmark::State& state) {
  auto manager = std::make_unique<Manager>(kContiguous);
  if (manager->nm.data_list.is_contiguous() != kContiguous) state.SkipWithError("wrong layout");
  std::vector<void*> cells(kCells);
  for (void*& p : cells) p = manager->nm.allocate();
  TimePtr2Index(
      state, std::move(cells), [&](void* p) { return manager->nm.locate(p); }, false);
}

// Serial GC of 2^20 recycled 64 B cells (recycled LIFO or in random order); the recycling is
// untimed. BM_Upstream_GcSerial is upstream's gc_serial; BM_NodeManager_GcSerial the manager's
// reference GC (upstream's algorithm in accelmem's NodeManager), BM_Runtime_GcSerial the GC the
// runtime runs (gc::gc_serial); both report vs_upstream.
template <typename M, typename Allocate, typename Recycle, typename Collect>
void TimeGcSerial(benchmark::State& state, M& nm, Allocate&& allocate, Recycle&& recycle,
                  Collect&& collect, bool baseline) {
  const bool random = state.range(0) != 0;
  Work work(1, random);
  HugeArray<void*>& ptrs = *work.ptrs[0];
  const HugeArray<int32_t>& order = *work.order[0];
  auto fill = [&] {
    for (int64_t k = 0; k < kCells; ++k) ptrs[k] = allocate();
    for (int64_t k = 0; k < kCells; ++k) recycle(ptrs[order[k]]);
  };
  fill();
  collect();
  PairedRow row(state);
  for (auto _ : state) {
    fill();
    row.Time(collect);
  }
  const std::string key = "GcSerial/" + std::to_string(state.range(0));
  if (baseline) {
    row.RecordBaseline(key, kCells);
  } else {
    row.ReportAgainst(key, kCells);
  }
  state.SetItemsProcessed(state.iterations() * kCells);
  state.SetBytesProcessed(state.iterations() * kCells * static_cast<int64_t>(kCellBytes));
}

void BM_Upstream_GcSerial(benchmark::State& state) {
  auto manager = std::make_unique<UpstreamManager>();
  UpstreamNodeManager& nm = manager->nm;
  TimeGcSerial(
      state, nm, [&] { return static_cast<void*>(nm.allocate()); }, [&](void* p) { nm.recycle(p); },
      [&] { nm.gc_serial(); }, true);
}

void BM_NodeManager_GcSerial(benchmark::State& state) {
  auto manager = std::make_unique<Manager>();
  NodeManager& nm = manager->nm;
  TimeGcSerial(
      state, nm, [&] { return static_cast<void*>(nm.allocate()); },
      [&](void* p) { nm.recycle(static_cast<uint8_t*>(p)); }, [&] { nm.gc_serial(); }, false);
}

void BM_Runtime_GcSerial(benchmark::State& state) {
  auto manager = std::make_unique<Manager>();
  NodeManager& nm = manager->nm;
  accelmem::gc::GcScratch scratch{};
  TimeGcSerial(
      state, nm, [&] { return static_cast<void*>(nm.allocate()); },
      [&](void* p) { nm.recycle(static_cast<uint8_t*>(p)); },
      [&] {
        if (!accelmem::gc::gc_serial(&nm, &scratch)) std::abort();
      },
      false);
}

// Allocation right after a GC, one cell at a time (what a kernel's activations do after a
// frame's collection): both managers hold 2^20 cells, all recycled in one random order and
// collected (untimed), so every allocation pops the free list. Interleaved per iteration:
// accelmem's NodeManager::allocate, then upstream's (//benchmarks/baselines). Counters:
// ours_ns, upstream_ns per cell (medians) and vs_upstream = upstream_ns / ours_ns.
void BM_AllocateAfterGc(benchmark::State& state) {
  auto ours = std::make_unique<Manager>();
  auto upstream = std::make_unique<UpstreamManager>();
  NodeManager& nm = ours->nm;
  UpstreamNodeManager& up = upstream->nm;
  std::vector<void*> a(kCells), b(kCells);
  std::vector<int32_t> order(kCells);
  for (int64_t k = 0; k < kCells; ++k) order[k] = static_cast<int32_t>(k);
  std::mt19937 rng(11);
  std::shuffle(order.begin(), order.end(), rng);
  for (int64_t k = 0; k < kCells; ++k) a[k] = nm.allocate();
  for (int64_t k = 0; k < kCells; ++k) b[k] = up.allocate();
  std::vector<double> ours_ns, upstream_ns;
  for (auto _ : state) {
    state.PauseTiming();
    for (int64_t k = 0; k < kCells; ++k) nm.recycle(static_cast<uint8_t*>(a[order[k]]));
    for (int64_t k = 0; k < kCells; ++k) up.recycle(b[order[k]]);
    nm.gc_serial();
    up.gc_serial();
    state.ResumeTiming();
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t k = 0; k < kCells; ++k) a[k] = nm.allocate();
    benchmark::ClobberMemory();
    const auto t1 = std::chrono::steady_clock::now();
    for (int64_t k = 0; k < kCells; ++k) b[k] = up.allocate();
    benchmark::ClobberMemory();
    const auto t2 = std::chrono::steady_clock::now();
    ours_ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kCells);
    upstream_ns.push_back(std::chrono::duration<double, std::nano>(t2 - t1).count() / kCells);
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
  state.counters["ours_ns"] = accelmem::baselines::Median(ours_ns);
  state.counters["upstream_ns"] = accelmem::baselines::Median(upstream_ns);
  state.counters["vs_upstream"] =
      accelmem::baselines::Median(upstream_ns) / accelmem::baselines::Median(ours_ns);
  state.SetItemsProcessed(state.iterations() * kCells);
}

// The limit for the GC rows: one memset of the same bytes.
void BM_Memset_Limit(benchmark::State& state) {
  std::vector<char> buffer(kCells * kCellBytes, 1);
  for (auto _ : state) {
    std::memset(buffer.data(), 0, buffer.size());
    benchmark::DoNotOptimize(buffer.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(buffer.size()));
}

// ---------------------------------------------------------------------------------------------
// Interleaved cycle rows (benchmarks/baselines/paired_timing.h): every contender's cycle in one
// row, one round each per iteration in rotating order, so that the ratios compare cycles run
// within the same second of this VM's drifting speed rather than rows run minutes apart.
//
// BM_Cycles/random/touch, one thread, thread CPU time of a cycle: glibc, mimalloc, jemalloc,
// tcmalloc, harness (no allocator), upstream, plain, batch64, cached (the same cycles as the rows
// above; the GC between cycles untimed, before each round). Counters: `<name>_ns` = CPU ns per
// allocate + release pair; `cached_vs_best_malloc` and `batch64_vs_best_malloc` = the fastest of
// the four mallocs in the same iteration / the row (> 1: faster than every malloc);
// `<name>_vs_upstream` for the three NodeManager forms.
//
// BM_CycleScaling/random/touch: cached, batch64, mimalloc and the harness on 1 and on 2 threads
// (the same 2^20 cells split over the threads), wall time of a cycle; `<name>_scaling` = the
// 1-thread time / the 2-thread time (2 = perfect strong scaling).
using accelmem::baselines::Comparison;
using accelmem::baselines::Contender;
using accelmem::baselines::RunInterleaved;

// One untimed cycle of each contender (chunks, page faults), then the interleaved rounds.
void RunCycleContenders(benchmark::State& state, std::vector<Contender> contenders,
                        const std::vector<Comparison>& comparisons) {
  for (const Contender& c : contenders) {
    if (c.self_timed) {
      c.self_timed();
    } else {
      c.round();
    }
    if (c.prepare) c.prepare();
  }
  RunInterleaved(state, kCells, contenders, "cached", comparisons);
}

void BM_Cycles(benchmark::State& state) {
  const bool random = state.range(0) != 0;
  const bool touch = state.range(1) != 0;
  Work work(1, random);
  std::vector<std::pair<std::string, CycleContender>> all = {
      {"glibc", MallocContender<Glibc>(work, touch)},
      {"mimalloc", MallocContender<Mimalloc>(work, touch)},
      {"jemalloc", MallocContender<Jemalloc>(work, touch)},
      {"tcmalloc", MallocContender<Tcmalloc>(work, touch)},
      {"harness", HarnessContender(work, touch)},
      {"upstream", UpstreamContender(work, touch, std::make_shared<UpstreamManager>())},
      {"plain",
       NodeManagerContender<Api::kPlain>(work, touch, std::make_shared<NodeManagerSetup>(1))},
      {"batch64",
       NodeManagerContender<Api::kBatch64>(work, touch, std::make_shared<NodeManagerSetup>(1))},
      {"cached",
       NodeManagerContender<Api::kCached>(work, touch, std::make_shared<NodeManagerSetup>(1))},
  };
  std::vector<Contender> contenders;
  for (auto& [name, contender] : all) {
    // The GC between cycles runs before the next round, untimed.
    const CycleContender& c = contender;
    contenders.push_back({name, [c] { c.cycle(0); }, c.between});
  }
  const std::string mallocs = "glibc|mimalloc|jemalloc|tcmalloc";
  RunCycleContenders(state, contenders,
                     {{"cached_vs_best_malloc", mallocs, "cached"},
                      {"batch64_vs_best_malloc", mallocs, "batch64"},
                      {"plain_vs_upstream", "upstream", "plain"},
                      {"batch64_vs_upstream", "upstream", "batch64"},
                      {"cached_vs_upstream", "upstream", "cached"}});
}

void BM_CycleScaling(benchmark::State& state) {
  const bool random = state.range(0) != 0;
  const bool touch = state.range(1) != 0;
  Work one(1, random), two(2, random);
  std::vector<Contender> contenders;
  std::vector<Comparison> comparisons;
  // `name` on 1 and on 2 threads; the 1-thread cached contender is named "cached" (the row's
  // Time column), the others "<name>_1t" / "<name>_2t".
  auto add = [&](const std::string& name, CycleContender one_thread, CycleContender two_threads) {
    const std::string single = name == "cached" ? name : name + "_1t";
    auto wall_time = [](CycleContender c, int threads) {
      return [c, threads] { return TimeParallel(threads, c.cycle); };
    };
    contenders.push_back({single, {}, one_thread.between, wall_time(one_thread, 1)});
    contenders.push_back({name + "_2t", {}, two_threads.between, wall_time(two_threads, 2)});
    comparisons.push_back({name + "_scaling", single, name + "_2t"});
  };
  add("cached",
      NodeManagerContender<Api::kCached>(one, touch, std::make_shared<NodeManagerSetup>(1)),
      NodeManagerContender<Api::kCached>(two, touch, std::make_shared<NodeManagerSetup>(2)));
  add("batch64",
      NodeManagerContender<Api::kBatch64>(one, touch, std::make_shared<NodeManagerSetup>(1)),
      NodeManagerContender<Api::kBatch64>(two, touch, std::make_shared<NodeManagerSetup>(2)));
  add("mimalloc", MallocContender<Mimalloc>(one, touch), MallocContender<Mimalloc>(two, touch));
  add("harness", HarnessContender(one, touch), HarnessContender(two, touch));
  RunCycleContenders(state, contenders, comparisons);
}

void CycleArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"random", "threads", "touch"});
  for (int touch : {0, 1}) {
    for (int random : {0, 1}) {
      for (int threads : {1, 2}) b->Args({random, threads, touch});
    }
  }
  b->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
}

BENCHMARK_TEMPLATE(BM_Malloc, Glibc)->Name("BM_Glibc_Cycle")->Apply(CycleArgs);
BENCHMARK_TEMPLATE(BM_Malloc, Mimalloc)->Name("BM_Mimalloc_Cycle")->Apply(CycleArgs);
BENCHMARK_TEMPLATE(BM_Malloc, Jemalloc)->Name("BM_Jemalloc_Cycle")->Apply(CycleArgs);
BENCHMARK_TEMPLATE(BM_Malloc, Tcmalloc)->Name("BM_Tcmalloc_Cycle")->Apply(CycleArgs);
BENCHMARK(BM_Harness_Cycle)->Apply(CycleArgs);
// Upstream before the NodeManager rows, which report vs_upstream against it.
BENCHMARK(BM_Upstream_Cycle)->Apply(CycleArgs);
BENCHMARK_TEMPLATE(BM_NodeManager, Api::kPlain)->Name("BM_NodeManager_Plain")->Apply(CycleArgs);
BENCHMARK_TEMPLATE(BM_NodeManager, Api::kBatch64)->Name("BM_NodeManager_Batch64")->Apply(CycleArgs);
BENCHMARK_TEMPLATE(BM_NodeManager, Api::kCached)->Name("BM_NodeManager_Cached")->Apply(CycleArgs);
void PairedOrder(benchmark::internal::Benchmark* b) {
  b->ArgName("random")->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_Upstream_Ptr2Index)->Apply(PairedOrder);
BENCHMARK_TEMPLATE(BM_NodeManager_Ptr2Index, true)
    ->Name("BM_NodeManager_Ptr2Index")
    ->Apply(PairedOrder);
BENCHMARK_TEMPLATE(BM_NodeManager_Ptr2Index, false)
    ->Name("BM_NodeManager_Ptr2Index_GranuleTable")
    ->Apply(PairedOrder);
BENCHMARK(BM_Upstream_GcSerial)->Apply(PairedOrder);
BENCHMARK(BM_NodeManager_GcSerial)->Apply(PairedOrder);
BENCHMARK(BM_Runtime_GcSerial)->Apply(PairedOrder);
BENCHMARK(BM_Memset_Limit)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AllocateAfterGc)->UseManualTime()->Unit(benchmark::kMillisecond);
void InterleavedCycleArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"random", "touch"})
      ->ArgsProduct({{0, 1}, {0, 1}})
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->MinTime(0.2);
}
BENCHMARK(BM_Cycles)->Apply(InterleavedCycleArgs);
BENCHMARK(BM_CycleScaling)->Apply(InterleavedCycleArgs);

}  // namespace
