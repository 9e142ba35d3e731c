#include "ir/program.h"

namespace accelmem {
namespace ir {

FunctionPtr Program::Find(absl::string_view name) const {
  for (const FunctionPtr& f : functions) {
    if (f->name == name) return f;
  }
  return nullptr;
}

std::shared_ptr<const Program> Program::WithFunction(size_t i, FunctionPtr f) const {
  std::vector<FunctionPtr> fs = functions;
  fs[i] = std::move(f);
  return std::make_shared<Program>(std::move(fs));
}

}  // namespace ir
}  // namespace accelmem
