#include "passes/testing/internal/value_fingerprint.h"

#include <cstring>

#include "ir/dtype.h"
#include "ir/memory_space.h"

namespace accelmem {
namespace passes_testing {
namespace internal {

namespace {

uint64_t Mix(uint64_t z) {  // SplitMix64's finalizer
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

Fingerprint& Fingerprint::Add(uint64_t x) {
  h_ = Mix(h_ * 0x9e3779b97f4a7c15ULL + x + 1);
  return *this;
}

Fingerprint& Fingerprint::Add(absl::string_view s) {
  uint64_t f = 0xcbf29ce484222325ULL;  // FNV-1a over the bytes, then mixed in with the length
  for (char c : s) f = (f ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return Add(f).Add(s.size());
}

void AddExpr(const ir::Expr& e, const std::function<uint64_t(const ir::Var&)>& var_fp,
             Fingerprint* fp) {
  fp->Add(static_cast<uint64_t>(e.kind));
  switch (e.kind) {
    case ir::ExprKind::kVar:
      fp->Add(var_fp(static_cast<const ir::Var&>(e)));
      return;
    case ir::ExprKind::kInt:
      fp->Add(static_cast<uint64_t>(static_cast<const ir::IntImm&>(e).value));
      return;
    case ir::ExprKind::kFloat: {
      const double d = static_cast<const ir::FloatImm&>(e).value;
      uint64_t bits = 0;
      std::memcpy(&bits, &d, sizeof(bits));
      fp->Add(bits);
      return;
    }
    case ir::ExprKind::kString:
      fp->Add(static_cast<const ir::StringImm&>(e).value);
      return;
    case ir::ExprKind::kList: {
      const auto& items = static_cast<const ir::ListExpr&>(e).items;
      fp->Add(items.size());
      for (const ir::ExprPtr& item : items) AddExpr(*item, var_fp, fp);
      return;
    }
    case ir::ExprKind::kSpace:
      fp->Add(ir::MemorySpaceName(static_cast<const ir::SpaceImm&>(e).space));
      return;
    case ir::ExprKind::kDType:
      fp->Add(ir::DTypeName(static_cast<const ir::DTypeImm&>(e).dtype));
      return;
    case ir::ExprKind::kCall:  // not an argument in A-normal form; hash its op at least
      fp->Add(static_cast<const ir::Call&>(e).op);
      return;
  }
}

void AddShapeAndDType(const ir::Type* t, Fingerprint* fp) {
  if (const ir::TileType* tile = ir::AsTile(t)) {
    fp->Add(ir::ShapeToString(tile->shape)).Add(ir::DTypeName(tile->dtype));
  } else if (const ir::TensorType* tensor = ir::AsTensor(t)) {
    fp->Add(ir::ShapeToString(tensor->shape)).Add(ir::DTypeName(tensor->dtype));
  } else if (t != nullptr) {
    fp->Add(ir::TypeToString(*t));
  }
}

}  // namespace internal
}  // namespace passes_testing
}  // namespace accelmem
