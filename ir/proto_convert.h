// Conversion between the IR (ir/program.h) and its protobuf form (ir/ir.proto).
//
// ToProto keeps everything but source locations: values and MemRef roots (with their object
// identity, i.e. which tiles share a buffer), names, literals, addresses. FromProto rebuilds a
// program that is structurally equal including MemRefs and prints to the same text; it
// rejects malformed messages (bad indices, unknown enum words, missing parts) with an error
// instead of crashing. Run the verifier on the result for the IR's own rules.
#ifndef ACCELMEM_IR_PROTO_CONVERT_H_
#define ACCELMEM_IR_PROTO_CONVERT_H_

#include "absl/status/statusor.h"
#include "ir/ir.pb.h"
#include "ir/program.h"

namespace accelmem {
namespace ir {

pb::Program ToProto(const Program& program);
absl::StatusOr<ProgramPtr> FromProto(const pb::Program& proto);

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_PROTO_CONVERT_H_
