#include "runtime/kernel_context.h"

namespace accelmem {
namespace runtime {

BoundKernelContext::BoundKernelContext(SparseRuntime* rt) {
  const sparse_runtime::SNodeTree& tree = rt->tree();
  metas_.resize(tree.num_snodes());
  ambients_.resize(tree.num_snodes(), nullptr);
  for (int id = 0; id < tree.num_snodes(); ++id) {
    const sparse_runtime::SNode& s = tree.snode(id);
    metas_[id] = rt->meta(s);
    if (sparse_runtime::HasAllocator(s.type())) {
      ambients_[id] = sparse_runtime::runtime_ambient_element(rt->context(), id);
    }
  }
  context_.root = rt->context()->root;
  context_.runtime = rt->context();
  context_.metas = metas_.data();
  context_.ambients = ambients_.data();
}

}  // namespace runtime
}  // namespace accelmem
