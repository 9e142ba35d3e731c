// libFuzzer target for the whole tile_opt pipeline (tools/tile_opt.cc): parse, run the memory
// passes with the IR verifier between them, check the memory plan, draw the memory map, print the
// result and parse it back. A returned error (parse error, verifier error, capacity error, ...)
// is a fine outcome; a crash, hang, leak, sanitizer report or a broken print/parse round trip of
// the pipeline's output is a finding.
//
// Input: tile text, then one configuration byte (the last one). With c = (last byte - '\n') mod
// 256, so that a .tile file ending in a newline runs as itself under the first choices:
//   backend  = c % 3        none, ascend910b, ascend950
//   planner  = c / 3 % 3    sequential, greedy, search (with a 2 ms budget)
//   passes   = c / 9 % 4    default pipeline; init-memref,allocate-memory-addr;
//                           init-memref,memory-reuse; allocate-memory-addr alone
//   verifier = c / 36 % 2   on (as tile_opt) or off (--verify=false)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "backends/backend.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/proto_convert.h"
#include "ir/structural_equal.h"
#include "passes/memory_pipeline.h"
#include "passes/pass_manager.h"
#include "passes/verify_memory_plan.h"
#include "tools/memory_map_svg.h"

namespace {

[[noreturn]] void Die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "tile_opt_fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

constexpr const char* kBackends[] = {"none", "ascend910b", "ascend950"};
constexpr accelmem::passes::PlacementStrategy kPlanners[] = {
    accelmem::passes::PlacementStrategy::kSequential,
    accelmem::passes::PlacementStrategy::kGreedy,
    accelmem::passes::PlacementStrategy::kSearch,
};
constexpr const char* kPipelines[] = {
    accelmem::passes::kDefaultPipeline,
    "init-memref,allocate-memory-addr",
    "init-memref,memory-reuse",
    "allocate-memory-addr",
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accelmem;  // NOLINT
  if (size == 0) return 0;
  const unsigned c = static_cast<uint8_t>(data[size - 1] - '\n');
  const absl::string_view text(reinterpret_cast<const char*>(data), size - 1);

  if (absl::Status s = backends::BackendConfig::SetByName(kBackends[c % 3]); !s.ok()) {
    Die("backend not linked", std::string(s.message()));
  }
  passes::MemoryPipelineOptions pipeline_options;
  pipeline_options.allocate.strategy = kPlanners[c / 3 % 3];
  pipeline_options.allocate.budget = absl::Milliseconds(2);
  passes::PassManagerOptions opts;
  opts.verify = c / 36 % 2 == 0;
  opts.verifier = [](const ir::Program& p) {
    return passes::VerifyWithActiveBackend(p, "fuzz.tile");
  };
  passes::PassManager pm(opts);
  if (absl::Status s = passes::AddPasses(kPipelines[c / 9 % 4], &pm, pipeline_options); !s.ok()) {
    Die("cannot build the pipeline", std::string(s.message()));
  }

  absl::StatusOr<ir::ProgramPtr> program = ir::ParseProgram(text, "fuzz.tile");
  if (!program.ok()) return 0;
  absl::StatusOr<passes::ProgramResult> result = pm.Run(*program);
  if (!result.ok()) return 0;
  const ir::Program& out = *result->program;

  (void)passes::VerifyMemoryPlan(out);
  for (const ir::FunctionPtr& f : out.functions) {
    absl::StatusOr<passes::MemoryPlanReport> report = passes::AnalyzeMemoryPlan(*f);
    if (report.ok()) (void)tools::RenderMemoryMapSvg(*report);
  }

  // The pipeline's output prints to text that parses back to the same program (tile_opt's text
  // output must be valid input), and survives the protobuf form (tile_opt --emit=proto).
  const std::string printed = ir::PrintProgram(out);
  absl::StatusOr<ir::ProgramPtr> again = ir::ParseProgram(printed, "printed.tile");
  if (!again.ok()) {
    Die("printed output does not parse", std::string(again.status().message()) + "\n" + printed);
  }
  const std::string diff = ir::FirstDifference(out, **again);
  if (!diff.empty()) Die("printed output parses to another program", diff + "\n" + printed);
  absl::StatusOr<ir::ProgramPtr> from_proto = ir::FromProto(ir::ToProto(out));
  if (!from_proto.ok()) Die("proto form does not convert back", printed);
  if (!ir::StructuralEqual(out, **from_proto)) Die("proto form changes the program", printed);
  return 0;
}
