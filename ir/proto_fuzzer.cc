// libFuzzer target for the protobuf reader (ir/proto_convert.h): the input bytes are parsed as
// an accelmem.ir.pb.Program message and converted to the IR. Bytes that are not a message, and
// messages that are not a program (bad indices, unknown names, missing parts), must give an
// error; a crash, hang, leak or sanitizer report is a finding. A converted program must survive
// the verifier and the printer, and convert to a proto and back to a structurally equal program.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/stubs/logging.h"
#include "ir/ir.pb.h"
#include "ir/printer.h"
#include "ir/proto_convert.h"
#include "ir/structural_equal.h"
#include "ir/verifier.h"

namespace {

[[noreturn]] void Die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "proto_fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accelmem::ir;  // NOLINT
  // Protobuf logs every invalid UTF-8 string field it parses; that is an expected rejection here.
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet;
  pb::Program proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return 0;
  absl::StatusOr<ProgramPtr> program = FromProto(proto);
  if (!program.ok()) return 0;
  (void)VerifyProgram(**program, {"fuzz.pb"});
  const std::string printed = PrintProgram(**program);
  absl::StatusOr<ProgramPtr> again = FromProto(ToProto(**program));
  if (!again.ok())
    Die("ToProto output does not convert back", std::string(again.status().message()));
  const std::string diff = FirstDifference(**program, **again);
  if (!diff.empty()) Die("proto round trip changes the program", diff + "\n" + printed);
  return 0;
}
