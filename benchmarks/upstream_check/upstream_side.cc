// The upstream side of upstream_check.sh: taichi-dev/taichi's own runtime.cpp (NodeManager,
// ListManager, LLVMRuntime) compiled natively from the checkout the script is given. Each timed
// loop lives in this file, so upstream's header-inline NodeManager::allocate inlines into it, as
// it would into a kernel.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

#include "taichi/runtime/llvm/runtime_module/runtime.cpp"

namespace {

void* HostAllocate(void*, std::size_t size, std::size_t alignment) {
  void* p = nullptr;
  if (posix_memalign(&p, alignment < sizeof(void*) ? sizeof(void*) : alignment, size) != 0) {
    std::abort();
  }
  std::memset(p, 0, size);
  return p;
}

}  // namespace

extern "C" {

// An upstream NodeManager of cells of `cell_bytes`, `chunk` cells a chunk.
void* upstream_nm_create(int cell_bytes, int chunk) {
  auto* runtime = static_cast<LLVMRuntime*>(HostAllocate(nullptr, sizeof(LLVMRuntime), 64));
  runtime->host_allocator = &HostAllocate;
  return runtime->create<NodeManager>(runtime, cell_bytes, chunk);
}

// Allocates n cells into out; returns the seconds it took.
double upstream_nm_allocate(void* nm, int n, void** out) {
  auto* m = static_cast<NodeManager*>(nm);
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < n; ++k) out[k] = m->allocate();
  const auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(end - start).count();
}

void upstream_nm_recycle(void* nm, int n, void* const* cells, const int* order) {
  auto* m = static_cast<NodeManager*>(nm);
  for (int k = 0; k < n; ++k) m->recycle(static_cast<Ptr>(cells[order[k]]));
}

void upstream_nm_gc(void* nm) { static_cast<NodeManager*>(nm)->gc_serial(); }

}  // extern "C"
