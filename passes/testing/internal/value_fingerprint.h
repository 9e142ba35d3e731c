// Symbolic value fingerprints for plan_simulator: a 64-bit hash of what a value computes (op,
// arguments, result shape and dtype, operand fingerprints), independent of names and addresses,
// so that differently planned versions of one program can be compared by what they compute.
#ifndef ACCELMEM_PASSES_TESTING_INTERNAL_VALUE_FINGERPRINT_H_
#define ACCELMEM_PASSES_TESTING_INTERNAL_VALUE_FINGERPRINT_H_

#include <cstdint>
#include <functional>

#include "absl/strings/string_view.h"
#include "ir/expr.h"
#include "ir/types.h"

namespace accelmem {
namespace passes_testing {
namespace internal {

// Accumulates an ordered hash; stable across runs and platforms (no std::hash).
class Fingerprint {
 public:
  explicit Fingerprint(absl::string_view tag) { Add(tag); }
  Fingerprint& Add(uint64_t x);
  Fingerprint& Add(absl::string_view s);
  Fingerprint& Add(const char* s) { return Add(absl::string_view(s)); }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0x243f6a8885a308d3ULL;
};

// What a read of clobbered bytes yields: equal to no computed value's fingerprint in practice.
inline constexpr uint64_t kGarbageFingerprint = 0x6a09e667f3bcc908ULL;

// Adds an argument: literals by value, lists item by item, variables by `var_fp`.
void AddExpr(const ir::Expr& e, const std::function<uint64_t(const ir::Var&)>& var_fp,
             Fingerprint* fp);

// Adds a value's shape and dtype (never its space or MemRef: those are the plan's choice).
void AddShapeAndDType(const ir::Type* t, Fingerprint* fp);

}  // namespace internal
}  // namespace passes_testing
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_TESTING_INTERNAL_VALUE_FINGERPRINT_H_
