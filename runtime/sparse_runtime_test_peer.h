// File: runtime/sparse_runtime_test_peer.h
//
// For benchmarks and tests only (a testonly target): SparseRuntimes that emulate upstream Taichi
// where production code does better, so that a benchmark can compare the two in one binary, and
// the struct-for engine's counters. None of this is on SparseRuntime's public API.
//
//   UpstreamEmulation upstream;
//   upstream.reuse_struct_for_lists = false;   // lists before every struct-for, as upstream
//   auto rt = SparseRuntimeTestPeer::Create(tree, options, upstream).value();
//   SparseRuntimeTestPeer::list_generations(*rt);
#ifndef ACCELMEM_RUNTIME_SPARSE_RUNTIME_TEST_PEER_H_
#define ACCELMEM_RUNTIME_SPARSE_RUNTIME_TEST_PEER_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "runtime/sparse_runtime.h"

namespace accelmem {
namespace runtime {

// Every switch on is the production runtime; off, the upstream behaviour named.
struct UpstreamEmulation {
  // A collection collects every allocator with recycled cells in one pass. Off: one collection
  // per allocator, as upstream runs its GC kernels per SNode (#6594).
  bool one_pass_gc = true;
  // Pointer cells (de)activated inside ParallelStructFor go through one NodeCache per worker.
  // Off: every worker allocates from the SNode's NodeManager directly (a shared atomic per cell).
  bool worker_caches = true;
  // A native struct-for reuses the element lists of the previous one over the same leaf while no
  // SNode they depend on changed structure. Off: lists before every struct-for.
  bool reuse_struct_for_lists = true;
};

class SparseRuntimeTestPeer {
 public:
  static absl::StatusOr<std::unique_ptr<SparseRuntime>> Create(
      const sparse_runtime::SNodeTree& tree, const SparseRuntimeOptions& options,
      const UpstreamEmulation& upstream);
  // Element lists the native struct-fors made (not reused).
  static int64_t list_generations(const SparseRuntime& rt);
  // Wall time the native struct-fors spent obtaining their lists (generating or reusing them).
  static double list_generation_seconds(const SparseRuntime& rt);
  // Whether native struct-fors reuse their lists: without a kernel backend, with the switch on,
  // where the process can run the heavy fence that the list cache's protocol needs
  // (sparse_runtime/asymmetric_fence.h; otherwise every struct-for makes its list).
  static bool reuses_struct_for_lists(SparseRuntime& rt);
  // The runtime's struct-for engine, for tests of the engine itself.
  static internal::StructForEngine& engine(SparseRuntime& rt);
};

}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_SPARSE_RUNTIME_TEST_PEER_H_
