// The op registry: every op the IR knows, with its arity, keyword arguments, result-type rule,
// memory behaviour and the hardware pipe that executes it.
//
// Why: the parser rejects unknown ops and wrong arities, the verifier checks each value's
// declared type against its op's rule, and the memory passes ask an op whether its result is a
// view of argument 0, writes into argument i, or must never share a buffer with its inputs.
//
// Downstream code registers its own ops on OpRegistry::Global() (at start-up, before parsing
// or verifying on other threads) or builds a private OpRegistry and passes it in the options
// of the parser and verifier.
#ifndef ACCELMEM_IR_OP_REGISTRY_H_
#define ACCELMEM_IR_OP_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/expr.h"
#include "ir/types.h"

namespace accelmem {
namespace ir {

enum class MemoryBehavior : uint8_t {
  kOrdinary,    // the result gets its own buffer
  kView,        // the result aliases argument 0 (same root, at a byte offset)
  kWritesInto,  // the result is argument `writes_into_arg`'s buffer, updated in place
};

// The engine that executes an op and so touches its operands and result. Two buffers that
// different pipes touch may run asynchronously, so reusing one's bytes for the other costs a
// synchronisation (a reuse penalty in the constrained planner). Named after the Ascend engines;
// other targets map theirs onto these.
enum class Pipe : uint8_t {
  kNone,    // no execution access (views, allocations, reserves)
  kScalar,  // scalar unit
  kVector,  // vector unit: element-wise compute on Vec tiles
  kCube,    // matrix unit: reads Left/Right, writes Acc
  kMte1,    // local move Mat -> Left/Right
  kMte2,    // inbound DMA: global memory -> Vec/Mat (and Mat -> Vec)
  kMte3,    // outbound DMA: Vec/Mat -> global memory (and Vec -> Mat)
  kFix,     // fix-pipe: drains Acc to Mat, Vec or global memory
};
// "none", "scalar", "vector", "cube", "mte1", "mte2", "mte3", "fix".
const char* PipeName(Pipe pipe);

struct OpDef {
  std::string name;
  int min_args = 0;
  int max_args = 0;
  std::vector<std::string> kwargs;           // allowed keyword names
  std::vector<std::string> required_kwargs;  // subset of kwargs that must be present
  MemoryBehavior memory = MemoryBehavior::kOrdinary;
  int writes_into_arg = -1;  // for kWritesInto
  // False: the result may never share a buffer with any input (not even one whose last use is
  // this op). `inplace_safe_fn`, when set, decides per call instead (widening tile.cast).
  bool inplace_safe = true;
  std::function<bool(const Call&)> inplace_safe_fn;
  // The type the op gives for these arguments (Var arguments carry their types); an error
  // explains what is wrong with the arguments. MemRefs are not inferred.
  std::function<absl::StatusOr<TypePtr>(const Call&)> result_type;
  // The pipe that executes a call: `pipe_fn` when set (it may look at operand spaces), else
  // `pipe`. It reads every operand and writes the result.
  Pipe pipe = Pipe::kNone;
  std::function<Pipe(const Call&)> pipe_fn;

  bool AllowsKwarg(absl::string_view key) const;
  bool IsInplaceSafe(const Call& call) const;
  bool IsView() const { return memory == MemoryBehavior::kView; }
  // The pipe that accesses operand `operand` of `call` (-1: the result). One engine runs a
  // call, so every operand gets the call's pipe; views and allocations get kNone.
  Pipe OperandPipe(const Call& call, int operand) const;
};

class OpRegistry {
 public:
  // An empty registry; call RegisterBuiltins to add the contract's ops.
  OpRegistry() = default;
  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;

  // The process-wide registry, pre-filled with the builtin ops.
  static OpRegistry& Global();
  // Adds every op of the tile IR (docs/tile_ir.md).
  static void RegisterBuiltins(OpRegistry* registry);

  // AlreadyExists if the name is taken, InvalidArgument if the definition is inconsistent.
  absl::Status Register(OpDef def);
  // The op called `name`, or null.
  const OpDef* Find(absl::string_view name) const;
  std::vector<std::string> Names() const;  // sorted

 private:
  absl::flat_hash_map<std::string, std::unique_ptr<OpDef>> ops_;
};

// Arity and keyword names of `call` against `def`: "tile.add expects 2 arguments, got 1",
// "tile.load has no keyword argument 'spce'", "system.reserve_buffer requires keyword 'size'".
absl::Status CheckCallSignature(const OpDef& def, const Call& call);
// "2 arguments" / "2 to 3 arguments" / "1 argument".
std::string ArityText(const OpDef& def);

// The accumulator dtype of tile.matmul: INT32 for integer inputs, FP32 otherwise.
DType MatmulAccDType(DType input);

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_OP_REGISTRY_H_
