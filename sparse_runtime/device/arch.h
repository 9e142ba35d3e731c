// File: sparse_runtime/device/arch.h
//
// The only architecture-dependent header of the sparse runtime. Everything a kernel calls at run
// time (ListManager, NodeManager, the X_* SNode functions, the GC phases) is written in a
// freestanding C++17 subset — no standard headers, exceptions or RTTI — and reaches the machine
// only through the primitives below, so that the same sources compile natively into cc_library
// targets and, in a later step, into LLVM bitcode for x64 and nvptx64 with clang.
//
// Selection: define ARCH_x64 or ARCH_cuda. Without either, ARCH_cuda is chosen when compiling for
// NVPTX (__NVPTX__) and ARCH_x64 otherwise (native builds need no flag). ARCH_x64 stands for "a CPU
// host" (it also builds on arm64: only the spin-wait hint is x86-specific).
//
// What is here:
//   * fixed-width integer aliases (compatible with <cstdint> on LP64 targets);
//   * atomics (load/store/exchange/cas/add/or/and/max) on i32/u32/i64/u64/pointers: the compiler's
//     __atomic builtins on the CPU (seq_cst unless the name says otherwise), __nvvm_atom_* builtins
//     plus membar.gl fences (read-modify-writes), ld.acquire / st.release (loads, stores) on CUDA;
//   * fences: grid_memfence / block_memfence (CUDA membar.gl / membar.cta; a seq_cst fence on CPU),
//     and asymmetric_fence_light (compiler-only; the light half of an asymmetric pair);
//   * thread/warp ids: thread_idx, block_idx, block_dim, grid_dim, lane_id (0/1 on the CPU);
//   * a spinlock (mutex_lock_i32 / mutex_unlock_i32) and locked_task, the double-checked critical
//     section of upstream Taichi (locked_task.h), plus warp_locked_task, the CUDA
//     warp-representative variant (one lane per distinct lock address runs the task, the others
//     wait at a warp barrier); on the CPU both are the same mutex path.
//
// Upstream-compatible semantics (upstream runtime.cpp). Differences: the CPU spinlock spins
// on a plain load with a pause hint before retrying the exchange (test-and-test-and-set),
// locked_task's waiters leave without the lock once its test fails, and the CUDA path targets
// sm_70+ only (independent thread scheduling; no pre-Volta lane serialization).
#ifndef ACCELMEM_SPARSE_RUNTIME_DEVICE_ARCH_H_
#define ACCELMEM_SPARSE_RUNTIME_DEVICE_ARCH_H_

#if !defined(ARCH_x64) && !defined(ARCH_cuda)
#if defined(__NVPTX__)
#define ARCH_cuda 1
#else
#define ARCH_x64 1
#endif
#endif

#if defined(ARCH_x64) && defined(ARCH_cuda)
#error "define exactly one of ARCH_x64 and ARCH_cuda"
#endif

#define ACCELMEM_RT_INLINE inline __attribute__((always_inline))

namespace accelmem {
namespace sparse_runtime {

using i8 = __INT8_TYPE__;
using u8 = __UINT8_TYPE__;
using i16 = __INT16_TYPE__;
using u16 = __UINT16_TYPE__;
using i32 = __INT32_TYPE__;
using u32 = __UINT32_TYPE__;
using i64 = __INT64_TYPE__;
using u64 = __UINT64_TYPE__;
using usize = decltype(sizeof(0));
using uptr = __UINTPTR_TYPE__;
// Untyped byte pointer, as upstream's `Ptr`.
using Ptr = u8*;

static_assert(sizeof(void*) == 8, "the sparse runtime assumes 64-bit pointers");

// ---------------------------------------------------------------------------------------------
// The counting build (ACCELMEM_ARCH_COUNTING, host only; gc/device:gpu_cost_test): every primitive
// below charges what its CUDA lowering issues to arch_cost_hook (when set), so that a CPU test can
// count the fences, atomics and ordered accesses a path would cost on the GPU. Keep each charge
// next to its x64 definition in step with the ARCH_cuda definition of the same primitive.
#if defined(ACCELMEM_ARCH_COUNTING)
#if defined(ARCH_cuda)
#error "the counting build is a host build"
#endif
enum ArchCost : i32 {
  kCostFence,          // membar.gl / membar.cta / fence.*
  kCostAtomic,         // atom.* (any ordering)
  kCostVolatileLoad,   // ld.volatile (a relaxed atomic load)
  kCostVolatileStore,  // st.volatile (a relaxed atomic store)
  kCostAcquireLoad,    // ld.acquire.gpu
  kCostReleaseStore,   // st.release.gpu
  kCostBarrier,        // bar.sync
  kNumArchCosts,
};
// Called with each instruction's kind and address (null for fences and barriers).
inline void (*arch_cost_hook)(ArchCost cost, const void* address) = nullptr;
#define ACCELMEM_ARCH_CHARGE(cost, address)                        \
  (::accelmem::sparse_runtime::arch_cost_hook != nullptr           \
       ? ::accelmem::sparse_runtime::arch_cost_hook(cost, address) \
       : void())
#else
#define ACCELMEM_ARCH_CHARGE(cost, address) ((void)(address))
#endif

// ---------------------------------------------------------------------------------------------
// Atomics. Defined for 4- and 8-byte T (i32, u32, i64, u64, pointers).
//
// CPU: the compiler's __atomic builtins. CUDA: clang's NVPTX target reports no lock-free atomic
// width for __atomic_* outside CUDA mode (they would become libatomic calls), so RMW operations use
// the __nvvm_atom_*_gen_* builtins and their ordering comes from explicit membar.gl fences; acquire
// loads and release stores are single instructions (below).
#if defined(ARCH_cuda)
namespace arch_internal {
template <typename T>
ACCELMEM_RT_INLINE auto to_bits(T v) {
  if constexpr (sizeof(T) == 4) {
    i32 b;
    __builtin_memcpy(&b, &v, 4);
    return b;
  } else {
    static_assert(sizeof(T) == 8, "atomics are 4 or 8 bytes");
    i64 b;
    __builtin_memcpy(&b, &v, 8);
    return b;
  }
}
template <typename T, typename B>
ACCELMEM_RT_INLINE T from_bits(B b) {
  T v;
  __builtin_memcpy(&v, &b, sizeof(T));
  return v;
}
template <typename T>
ACCELMEM_RT_INLINE auto* bits_ptr(T* p) {
  if constexpr (sizeof(T) == 4) {
    return reinterpret_cast<i32*>(p);
  } else {
    return reinterpret_cast<i64*>(p);
  }
}
}  // namespace arch_internal

template <typename T>
ACCELMEM_RT_INLINE T atomic_load_relaxed(const T* p) {
  return *reinterpret_cast<const volatile T*>(p);
}
// Acquire and release are the PTX memory model's own (sm_70+, PTX ISA 6.0): ld.acquire.gpu and
// st.release.gpu order this thread's later (earlier) accesses after (before) the access without a
// fence. Why not a volatile access and membar.gl, as before: the fence waits for every earlier
// access of the thread to complete (a full round trip to L2), which every pointer lookup and list
// size read paid (issue 49). Inline PTX: LLVM 14's NVPTX back end lowers atomic loads and stores
// of any ordering to ld.volatile / st.volatile.
template <typename T>
ACCELMEM_RT_INLINE T atomic_load_acquire(const T* p) {
  using namespace arch_internal;
  if constexpr (sizeof(T) == 1) {  // byte flags (bitmasked): a 32-bit register, as PTX allows
    u32 b;
    asm volatile("ld.acquire.gpu.u8 %0, [%1];" : "=r"(b) : "l"(p) : "memory");
    return from_bits<T>(static_cast<u8>(b));
  } else if constexpr (sizeof(T) == 4) {
    i32 b;
    asm volatile("ld.acquire.gpu.b32 %0, [%1];" : "=r"(b) : "l"(p) : "memory");
    return from_bits<T>(b);
  } else {
    static_assert(sizeof(T) == 8, "acquire loads are 1, 4 or 8 bytes");
    i64 b;
    asm volatile("ld.acquire.gpu.b64 %0, [%1];" : "=l"(b) : "l"(p) : "memory");
    return from_bits<T>(b);
  }
}
template <typename T>
ACCELMEM_RT_INLINE void atomic_store_relaxed(T* p, T v) {
  *reinterpret_cast<volatile T*>(p) = v;
}
template <typename T>
ACCELMEM_RT_INLINE void atomic_store_release(T* p, T v) {
  using namespace arch_internal;
  if constexpr (sizeof(T) == 1) {
    u8 b;
    __builtin_memcpy(&b, &v, 1);
    asm volatile("st.release.gpu.u8 [%0], %1;" ::"l"(p), "r"(static_cast<u32>(b)) : "memory");
  } else if constexpr (sizeof(T) == 4) {
    asm volatile("st.release.gpu.b32 [%0], %1;" ::"l"(p), "r"(to_bits(v)) : "memory");
  } else {
    static_assert(sizeof(T) == 8, "release stores are 1, 4 or 8 bytes");
    asm volatile("st.release.gpu.b64 [%0], %1;" ::"l"(p), "l"(to_bits(v)) : "memory");
  }
}
template <typename T>
ACCELMEM_RT_INLINE T atomic_exchange(T* p, T v) {
  using namespace arch_internal;
  __nvvm_membar_gl();
  T old;
  if constexpr (sizeof(T) == 4) {
    old = from_bits<T>(__nvvm_atom_xchg_gen_i(bits_ptr(p), to_bits(v)));
  } else {
    old = from_bits<T>(__nvvm_atom_xchg_gen_ll(bits_ptr(p), to_bits(v)));
  }
  __nvvm_membar_gl();
  return old;
}
template <typename T>
ACCELMEM_RT_INLINE bool atomic_cas(T* p, T* expected, T desired) {
  using namespace arch_internal;
  __nvvm_membar_gl();
  T old;
  if constexpr (sizeof(T) == 4) {
    old = from_bits<T>(__nvvm_atom_cas_gen_i(bits_ptr(p), to_bits(*expected), to_bits(desired)));
  } else {
    old = from_bits<T>(__nvvm_atom_cas_gen_ll(bits_ptr(p), to_bits(*expected), to_bits(desired)));
  }
  __nvvm_membar_gl();
  bool ok = to_bits(old) == to_bits(*expected);
  *expected = old;
  return ok;
}
template <typename T>
ACCELMEM_RT_INLINE T atomic_add_relaxed(T* p, T v) {
  using namespace arch_internal;
  if constexpr (sizeof(T) == 4) {
    return from_bits<T>(__nvvm_atom_add_gen_i(bits_ptr(p), to_bits(v)));
  } else {
    return from_bits<T>(__nvvm_atom_add_gen_ll(bits_ptr(p), to_bits(v)));
  }
}
template <typename T>
ACCELMEM_RT_INLINE T atomic_add(T* p, T v) {
  __nvvm_membar_gl();
  T old = atomic_add_relaxed(p, v);
  __nvvm_membar_gl();
  return old;
}
// No ordering: the caller synchronizes by other means (a kernel boundary, a barrier), and an
// unused result lets ptxas issue a fire-and-forget reduction instead of a fenced round trip.
template <typename T>
ACCELMEM_RT_INLINE T atomic_or_relaxed(T* p, T v) {
  using namespace arch_internal;
  if constexpr (sizeof(T) == 4) {
    return from_bits<T>(__nvvm_atom_or_gen_i(bits_ptr(p), to_bits(v)));
  } else {
    return from_bits<T>(__nvvm_atom_or_gen_ll(bits_ptr(p), to_bits(v)));
  }
}
template <typename T>
ACCELMEM_RT_INLINE T atomic_or(T* p, T v) {
  __nvvm_membar_gl();
  T old = atomic_or_relaxed(p, v);
  __nvvm_membar_gl();
  return old;
}
template <typename T>
ACCELMEM_RT_INLINE T atomic_and(T* p, T v) {
  using namespace arch_internal;
  __nvvm_membar_gl();
  T old;
  if constexpr (sizeof(T) == 4) {
    old = from_bits<T>(__nvvm_atom_and_gen_i(bits_ptr(p), to_bits(v)));
  } else {
    old = from_bits<T>(__nvvm_atom_and_gen_ll(bits_ptr(p), to_bits(v)));
  }
  __nvvm_membar_gl();
  return old;
}
#else   // ARCH_x64
// The CUDA lowering of each (for the counting build): see the ARCH_cuda definitions above.
namespace arch_internal {
ACCELMEM_RT_INLINE void charge_fenced_atomic(const void* p) {  // membar.gl; atom; membar.gl
  ACCELMEM_ARCH_CHARGE(kCostFence, nullptr);
  ACCELMEM_ARCH_CHARGE(kCostAtomic, p);
  ACCELMEM_ARCH_CHARGE(kCostFence, nullptr);
}
}  // namespace arch_internal
template <typename T>
ACCELMEM_RT_INLINE T atomic_load_relaxed(const T* p) {
  ACCELMEM_ARCH_CHARGE(kCostVolatileLoad, p);
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}
template <typename T>
ACCELMEM_RT_INLINE T atomic_load_acquire(const T* p) {
  ACCELMEM_ARCH_CHARGE(kCostAcquireLoad, p);
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
template <typename T>
ACCELMEM_RT_INLINE void atomic_store_relaxed(T* p, T v) {
  ACCELMEM_ARCH_CHARGE(kCostVolatileStore, p);
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
}
template <typename T>
ACCELMEM_RT_INLINE void atomic_store_release(T* p, T v) {
  ACCELMEM_ARCH_CHARGE(kCostReleaseStore, p);
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
// Returns the previous value.
template <typename T>
ACCELMEM_RT_INLINE T atomic_exchange(T* p, T v) {
  arch_internal::charge_fenced_atomic(p);
  return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
}
// Strong compare-and-swap; on failure *expected receives the current value.
template <typename T>
ACCELMEM_RT_INLINE bool atomic_cas(T* p, T* expected, T desired) {
  arch_internal::charge_fenced_atomic(p);
  return __atomic_compare_exchange_n(p, expected, desired, /*weak=*/false, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST);
}
// Fetch-and-op: all return the previous value.
template <typename T>
ACCELMEM_RT_INLINE T atomic_add(T* p, T v) {
  arch_internal::charge_fenced_atomic(p);
  return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
template <typename T>
ACCELMEM_RT_INLINE T atomic_add_relaxed(T* p, T v) {
  ACCELMEM_ARCH_CHARGE(kCostAtomic, p);
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
template <typename T>
ACCELMEM_RT_INLINE T atomic_or(T* p, T v) {
  arch_internal::charge_fenced_atomic(p);
  return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
}
template <typename T>
ACCELMEM_RT_INLINE T atomic_or_relaxed(T* p, T v) {
  ACCELMEM_ARCH_CHARGE(kCostAtomic, p);
  return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
}
template <typename T>
ACCELMEM_RT_INLINE T atomic_and(T* p, T v) {
  arch_internal::charge_fenced_atomic(p);
  return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);
}
#endif  // ARCH_cuda
// Atomic maximum (CAS loop); returns the previous value.
template <typename T>
ACCELMEM_RT_INLINE T atomic_max(T* p, T v) {
  T cur = atomic_load_relaxed(p);
  while (cur < v && !atomic_cas(p, &cur, v)) {
  }
  return cur;
}

// ---------------------------------------------------------------------------------------------
// Fences, ids, spin hint.
//
// The light half of an asymmetric fence pair: a fence for the compiler only (no instruction), so
// that the hardware sees this thread's accesses in program order. Paired with the host's heavy
// fence (sparse_runtime/asymmetric_fence.h: membarrier makes every running thread of the process
// pass a full barrier), the two order like two seq_cst fences: either what this thread did before
// the light fence is visible after the heavy one, or what it does after the light fence sees what
// the heavy fence's caller did before it. For a protocol whose frequent side must not pay a
// barrier instruction (StructMeta_mark_changed). On CUDA no host thread's heavy fence reaches the
// device; there it only keeps the compiler's order, for data the host reads between kernels (an
// empty asm statement: LLVM 14's NVPTX back end cannot select a single-thread fence).
#if defined(ARCH_cuda)
ACCELMEM_RT_INLINE void asymmetric_fence_light() { asm volatile("" ::: "memory"); }
#else
ACCELMEM_RT_INLINE void asymmetric_fence_light() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
#endif
#if defined(ARCH_cuda)
ACCELMEM_RT_INLINE void grid_memfence() { __nvvm_membar_gl(); }
ACCELMEM_RT_INLINE void block_memfence() { __nvvm_membar_cta(); }
ACCELMEM_RT_INLINE i32 thread_idx() { return __nvvm_read_ptx_sreg_tid_x(); }
ACCELMEM_RT_INLINE i32 block_idx() { return __nvvm_read_ptx_sreg_ctaid_x(); }
ACCELMEM_RT_INLINE i32 block_dim() { return __nvvm_read_ptx_sreg_ntid_x(); }
ACCELMEM_RT_INLINE i32 grid_dim() { return __nvvm_read_ptx_sreg_nctaid_x(); }
ACCELMEM_RT_INLINE i32 lane_id() { return __nvvm_read_ptx_sreg_laneid(); }
ACCELMEM_RT_INLINE void block_barrier() { __nvvm_bar_sync(0); }
ACCELMEM_RT_INLINE void spin_pause() {}
// Hints that the line at p is about to be written / read. CUDA hides latency with other warps:
// no-ops.
ACCELMEM_RT_INLINE void prefetch_for_write(const void*) {}
ACCELMEM_RT_INLINE void prefetch_for_read(const void*) {}
ACCELMEM_RT_INLINE u32 active_mask() {
  u32 mask;
  asm volatile("activemask.b32 %0;" : "=r"(mask));
  return mask;
}
ACCELMEM_RT_INLINE void warp_barrier(u32 mask) { __nvvm_bar_warp_sync(mask); }
// Lanes of `mask` holding the same 64-bit key (sm_70+). Inline PTX: clang 14's
// __nvvm_match_any_sync_i64 gives a 64-bit destination, which ptxas rejects (it is 32-bit).
ACCELMEM_RT_INLINE u32 match_any_sync_u64(u32 mask, u64 key) {
  u32 peers;
  asm volatile("match.any.sync.b64 %0, %1, %2;" : "=r"(peers) : "l"(key), "r"(mask));
  return peers;
}
// True for exactly one active lane among those that pass the same key (sm_70+: match.any).
ACCELMEM_RT_INLINE bool is_representative(u32 mask, const void* key) {
  u32 peers = match_any_sync_u64(mask, static_cast<u64>(reinterpret_cast<uptr>(key)));
  return lane_id() == __builtin_ctz(peers);
}
#else  // ARCH_x64
ACCELMEM_RT_INLINE void grid_memfence() {
  ACCELMEM_ARCH_CHARGE(kCostFence, nullptr);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
ACCELMEM_RT_INLINE void block_memfence() {
  ACCELMEM_ARCH_CHARGE(kCostFence, nullptr);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
ACCELMEM_RT_INLINE i32 thread_idx() { return 0; }
ACCELMEM_RT_INLINE i32 block_idx() { return 0; }
ACCELMEM_RT_INLINE i32 block_dim() { return 1; }
ACCELMEM_RT_INLINE i32 grid_dim() { return 1; }
ACCELMEM_RT_INLINE i32 lane_id() { return 0; }
ACCELMEM_RT_INLINE void block_barrier() { ACCELMEM_ARCH_CHARGE(kCostBarrier, nullptr); }
ACCELMEM_RT_INLINE void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
// A hint that the line at p is about to be written (PREFETCHW where the target has it, else a
// read prefetch), so that the misses of several upcoming stores overlap instead of each store
// waiting for its line.
ACCELMEM_RT_INLINE void prefetch_for_write(const void* p) { __builtin_prefetch(p, 1, 3); }
ACCELMEM_RT_INLINE void prefetch_for_read(const void* p) { __builtin_prefetch(p, 0, 3); }
ACCELMEM_RT_INLINE u32 active_mask() { return 0; }
ACCELMEM_RT_INLINE void warp_barrier(u32) {}
ACCELMEM_RT_INLINE bool is_representative(u32, const void*) { return true; }
#endif

// ---------------------------------------------------------------------------------------------
// Warp collectives, for warp-aggregated counters: warp_lane() (this lane's index in its warp),
// warp_active_mask(), warp_match_any(mask, key) (the lanes of mask with the same key),
// warp_shfl / warp_shfl32(mask, value, src_lane) (every lane of mask gets src_lane's value) and
// warp_lanemask_lt() (the lanes below this one). CUDA: activemask, match.any.sync, shfl.sync and
// %lanemask_lt (sm_70+). The native build is a warp of one lane (the calls fold away). Tests
// define ACCELMEM_ARCH_WARP_EMULATION and set arch_warp_emulator to run 32 host threads as one
// warp (gc/device/gpu_cost_test.cc), so the multi-lane code runs under TSan; an emulator requires
// every lane of a mask to make the same collective calls in the same order.
#if defined(ACCELMEM_ARCH_WARP_EMULATION)
#if defined(ARCH_cuda)
#error "the warp emulator is a host build"
#endif
struct ArchWarpEmulator {
  u32 (*lane)();
  u32 (*active_mask)();
  u32 (*match_any)(u32 mask, u64 key);
  u64 (*shfl)(u32 mask, u64 value, u32 src_lane);
};
// Null: a warp of one lane.
inline const ArchWarpEmulator* arch_warp_emulator = nullptr;
#endif
#if defined(ARCH_cuda)
ACCELMEM_RT_INLINE u32 warp_lane() { return static_cast<u32>(lane_id()); }
ACCELMEM_RT_INLINE u32 warp_active_mask() { return active_mask(); }
ACCELMEM_RT_INLINE u32 warp_match_any(u32 mask, u64 key) { return match_any_sync_u64(mask, key); }
ACCELMEM_RT_INLINE u64 warp_shfl(u32 mask, u64 value, u32 src_lane) {
  const i32 lo = __nvvm_shfl_sync_idx_i32(mask, static_cast<i32>(value), src_lane, 0x1f);
  const i32 hi = __nvvm_shfl_sync_idx_i32(mask, static_cast<i32>(value >> 32), src_lane, 0x1f);
  return (static_cast<u64>(static_cast<u32>(hi)) << 32) | static_cast<u32>(lo);
}
ACCELMEM_RT_INLINE u32 warp_shfl32(u32 mask, u32 value, u32 src_lane) {
  return static_cast<u32>(__nvvm_shfl_sync_idx_i32(mask, static_cast<i32>(value), src_lane, 0x1f));
}
ACCELMEM_RT_INLINE u32 warp_lanemask_lt() { return __nvvm_read_ptx_sreg_lanemask_lt(); }
#else
ACCELMEM_RT_INLINE u32 warp_lane() {
#if defined(ACCELMEM_ARCH_WARP_EMULATION)
  if (arch_warp_emulator != nullptr) return arch_warp_emulator->lane();
#endif
  return 0;
}
ACCELMEM_RT_INLINE u32 warp_active_mask() {
#if defined(ACCELMEM_ARCH_WARP_EMULATION)
  if (arch_warp_emulator != nullptr) return arch_warp_emulator->active_mask();
#endif
  return 1;
}
ACCELMEM_RT_INLINE u32 warp_match_any(u32 mask, u64 key) {
#if defined(ACCELMEM_ARCH_WARP_EMULATION)
  if (arch_warp_emulator != nullptr) return arch_warp_emulator->match_any(mask, key);
#endif
  (void)key;
  return mask;
}
ACCELMEM_RT_INLINE u64 warp_shfl(u32 mask, u64 value, u32 src_lane) {
#if defined(ACCELMEM_ARCH_WARP_EMULATION)
  if (arch_warp_emulator != nullptr) return arch_warp_emulator->shfl(mask, value, src_lane);
#endif
  (void)mask;
  (void)src_lane;
  return value;
}
ACCELMEM_RT_INLINE u32 warp_shfl32(u32 mask, u32 value, u32 src_lane) {
  return static_cast<u32>(warp_shfl(mask, value, src_lane));
}
ACCELMEM_RT_INLINE u32 warp_lanemask_lt() { return (u32{1} << warp_lane()) - 1; }
#endif

// ---------------------------------------------------------------------------------------------
// Warp-aggregated relaxed fetch-and-add: the lanes of a warp that reach this call together with
// the same `p` make ONE atomic add of `v` per lane, by their lowest lane, and each gets the value
// a separate add of its own would have returned in lane order (base + v * rank). Why: allocation
// and recycling take one index each from a counter every lane of the grid shares; one atomic per
// warp instead of per lane divides the traffic on that one address (the L2 serializes it) by up
// to 32 (issue 49). Relaxed, as atomic_add_relaxed: use it only where the counter publishes
// nothing. On the CPU (a warp of one lane) it is atomic_add_relaxed.
template <typename T>
ACCELMEM_RT_INLINE T warp_aggregated_add_relaxed(T* p, T v) {
  const u32 mask = warp_active_mask();
  const u32 peers = warp_match_any(mask, static_cast<u64>(reinterpret_cast<uptr>(p)));
  const u32 leader = static_cast<u32>(__builtin_ctz(peers));
  const T rank = static_cast<T>(__builtin_popcount(peers & warp_lanemask_lt()));
  T base = 0;
  if (warp_lane() == leader) {
    base = atomic_add_relaxed(p, static_cast<T>(v * static_cast<T>(__builtin_popcount(peers))));
  }
  if constexpr (sizeof(T) == 4) {  // one shfl for 4 bytes, two for 8
    base = static_cast<T>(warp_shfl32(peers, static_cast<u32>(base), leader));
  } else {
    base = static_cast<T>(warp_shfl(peers, static_cast<u64>(base), leader));
  }
  return static_cast<T>(base + v * rank);
}

// ---------------------------------------------------------------------------------------------
// Spinlock on an i32 word (0 = free, 1 = held). Acquire/release ordering.
ACCELMEM_RT_INLINE void mutex_lock_i32(i32* lock) {
  while (atomic_exchange(lock, 1) != 0) {
    while (atomic_load_relaxed(lock) != 0) spin_pause();
  }
}
ACCELMEM_RT_INLINE bool mutex_try_lock_i32(i32* lock) { return atomic_exchange(lock, 1) == 0; }
ACCELMEM_RT_INLINE void mutex_unlock_i32(i32* lock) { atomic_store_release(lock, 0); }

// Double-checked critical section: runs `func()` under `lock` iff `test()` holds both before and
// after taking the lock. `test` must read shared state with atomic loads (it runs unlocked first).
// While another thread holds the lock, a waiter keeps re-checking test() and leaves as soon as it
// fails, without taking the lock. Why: when many threads need the same task (a list chunk that
// thousands of GPU threads find missing at once), one does it and the others leave when its result
// is published, instead of each taking the lock in turn only to find the task done (a convoy of
// serialized acquisitions that made the CUDA recycle kernel superlinear).
template <typename Func, typename Test>
ACCELMEM_RT_INLINE void locked_task(i32* lock, const Func& func, const Test& test) {
  for (;;) {
    if (!test()) return;
    if (atomic_load_relaxed(lock) == 0 && mutex_try_lock_i32(lock)) break;
    spin_pause();
  }
#if defined(ARCH_cuda) || defined(ACCELMEM_ARCH_COUNTING)
  grid_memfence();
#endif
  if (test()) func();
#if defined(ARCH_cuda) || defined(ACCELMEM_ARCH_COUNTING)
  grid_memfence();
#endif
  mutex_unlock_i32(lock);
}

template <typename Func>
ACCELMEM_RT_INLINE void locked_task(i32* lock, const Func& func) {
  locked_task(lock, func, [] { return true; });
}

// Warp-representative form (upstream's pointer activation): on CUDA, among the active lanes of a
// warp that target the same lock only one runs locked_task; the others wait at the warp barrier
// (this avoids intra-warp lock contention). On the CPU it is locked_task. (accelmem's pointer
// SNode, whose CUDA claim is a slot value, uses is_representative and warp_barrier directly.)
template <typename Func, typename Test>
ACCELMEM_RT_INLINE void warp_locked_task(i32* lock, const Func& func, const Test& test) {
#if defined(ARCH_cuda)
  u32 mask = active_mask();
  if (is_representative(mask, lock)) locked_task(lock, func, test);
  warp_barrier(mask);
#else
  locked_task(lock, func, test);
#endif
}

// ---------------------------------------------------------------------------------------------
// Small freestanding helpers.
ACCELMEM_RT_INLINE void mem_zero(void* p, usize n) { __builtin_memset(p, 0, n); }
ACCELMEM_RT_INLINE void mem_copy(void* dst, const void* src, usize n) {
  __builtin_memcpy(dst, src, n);
}
ACCELMEM_RT_INLINE bool is_power_of_two_u64(u64 x) { return x != 0 && (x & (x - 1)) == 0; }
// floor(log2(x)) for x > 0.
ACCELMEM_RT_INLINE i32 log2_floor_u64(u64 x) { return 63 - __builtin_clzll(x); }
// Smallest power of two >= x (x >= 1, x <= 2^63).
ACCELMEM_RT_INLINE u64 next_power_of_two_u64(u64 x) {
  return x <= 1 ? 1 : (u64{1} << (64 - __builtin_clzll(x - 1)));
}
ACCELMEM_RT_INLINE constexpr u64 round_up_u64(u64 x, u64 align) {
  return (x + align - 1) / align * align;
}
template <typename T>
ACCELMEM_RT_INLINE constexpr T min_of(T a, T b) {
  return a < b ? a : b;
}
template <typename T>
ACCELMEM_RT_INLINE constexpr T max_of(T a, T b) {
  return a < b ? b : a;
}

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_DEVICE_ARCH_H_
