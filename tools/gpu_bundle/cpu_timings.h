// File: tools/gpu_bundle/cpu_timings.h
//
// The CPU rows of a GPU visit (`accelmem_gpu cpu-timings`, run.sh): the CPU GC, allocation and
// struct-for timed at several thread counts. Why in the bundle: the machine that carries the GPU
// has 16 cores, ours have 2, so the visit is the only place the CPU paths' scaling is measured.
#ifndef ACCELMEM_TOOLS_GPU_BUNDLE_CPU_TIMINGS_H_
#define ACCELMEM_TOOLS_GPU_BUNDLE_CPU_TIMINGS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace accelmem {
namespace tools {

struct CpuTimingOptions {
  std::vector<int> threads = {1, 2, 4, 8, 16};
  int64_t cells = 1'000'000;  // cells collected, allocated and visited per row
  uint64_t cell_bytes = 64;
  int rounds = 3;  // each row is the fastest of this many
};

// Times each row at each thread count; returns the rows, one a line:
//   cpu_gc threads=T cells=N cell_bytes=B: X us (Y GB/s zeroed)
//   cpu_allocate threads=T cells=N: X us (Y G cells/s)
//   cpu_recycle threads=T cells=N: X us (Y G cells/s)
//   cpu_struct_for threads=T cells=N: X us (Y G cells/s)
// or a line starting "error:" for a row that could not run. The bundle is a fastbuild: the
// allocator and GC (sparse_runtime/device, gc/device) are built with -O2 as everywhere, but the
// host runtime's struct-for is not, so its row compares thread counts, not absolute speed.
std::vector<std::string> RunCpuTimings(const CpuTimingOptions& options);

}  // namespace tools
}  // namespace accelmem

#endif  // ACCELMEM_TOOLS_GPU_BUNDLE_CPU_TIMINGS_H_
