#include "sparse_runtime/asymmetric_fence.h"

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace accelmem {
namespace sparse_runtime {
namespace {

#if defined(__linux__) && defined(__NR_membarrier)
long Membarrier(int command) { return syscall(__NR_membarrier, command, 0, 0); }

bool Register() {
  const long commands = Membarrier(MEMBARRIER_CMD_QUERY);
  if (commands < 0 || (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
  return Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}
#else
bool Register() { return false; }
#endif

}  // namespace

bool AsymmetricFenceHeavyAvailable() {
  static const bool available = Register();
  return available;
}

bool AsymmetricFenceHeavy() {
  if (!AsymmetricFenceHeavyAvailable()) return false;
#if defined(__linux__) && defined(__NR_membarrier)
  // The kernel orders the caller's accesses around the call too (a full barrier on entry and exit).
  return Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
#else
  return false;
#endif
}

}  // namespace sparse_runtime
}  // namespace accelmem
