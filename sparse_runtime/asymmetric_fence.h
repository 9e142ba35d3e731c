// File: sparse_runtime/asymmetric_fence.h
//
// The heavy half of an asymmetric fence pair; the light half is asymmetric_fence_light in
// device/arch.h (a compiler-only fence, no instruction). A thread that runs the heavy fence makes
// every running thread of the process pass a full memory barrier before the call returns
// (Linux membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED: an interrupt on each CPU that runs one of
// them), so that the pair orders like two seq_cst fences (the asymmetric fences of C++ proposal
// P1202): for a thread's light fence L and the heavy fence H, either everything the thread did
// before L is visible after H, or everything it does after L sees what H's caller did before H.
//
// Why: the frequent side (every activation and deactivation marking its SNode's meta) then pays
// no barrier instruction, and the rare side (the host's struct-for list builder, once per list it
// rebuilds after a change) pays a system call (about 0.5 us with the process's other threads idle,
// more when they run: an interrupt per CPU).
#ifndef ACCELMEM_SPARSE_RUNTIME_ASYMMETRIC_FENCE_H_
#define ACCELMEM_SPARSE_RUNTIME_ASYMMETRIC_FENCE_H_

namespace accelmem {
namespace sparse_runtime {

// Whether AsymmetricFenceHeavy works in this process. The first call registers the process for
// the command (once; later calls only read the result). False where the kernel lacks it or a
// seccomp filter refuses it, and off Linux.
bool AsymmetricFenceHeavyAvailable();

// The heavy fence (see the file comment); a full fence for the caller as well. Returns false,
// having done nothing, where it is not available.
bool AsymmetricFenceHeavy();

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_ASYMMETRIC_FENCE_H_
