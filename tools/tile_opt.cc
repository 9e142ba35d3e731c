// tile_opt: runs memory passes over tile-IR text, like mlir-opt.
//
//   tile_opt [flags] [input.tile | -]
//     --passes=init-memref,memory-reuse,allocate-memory-addr   passes to run, in order
//     --pipeline=default                                       the whole memory pipeline
//     --backend=ascend910b|ascend950|none                      SoC (policy, sizes, capacities)
//     --emit=text|proto|memory-map                             output form (default text)
//     -o FILE                                                  output (memory-map: a directory,
//                                                              one FUNCTION.svg per function)
//     --print-after-all                                        IR after each pass, on stderr
//     --verify=false                                           skip the IR verifier between passes
//     --verify-memory-plan                                     also run verify_memory_plan at the
//     end
//     --planner=sequential|greedy|search                       allocate-memory-addr's placement
//                                                              (default sequential, upstream's;
//                                                              greedy/search do memory-reuse's
//                                                              carry fix-ups where needed, so
//                                                              memory-reuse is optional)
//     --planner-budget-ms=N                                    search budget per space (def. 100)
// Errors go to stderr as `file:line:col: error: ...` (parse and verifier errors with a
// location) or `error: in function 'F': ...`; the exit status is 1. Bad flags: usage, status 2.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "backends/ascend/ascend.h"
#include "backends/backend.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/proto_convert.h"
#include "passes/memory_pipeline.h"
#include "passes/pass_manager.h"
#include "passes/verify_memory_plan.h"
#include "policy/file_io.h"
#include "tools/memory_map_svg.h"

namespace {

constexpr char kUsage[] =
    "usage: tile_opt [--passes=a,b,... | --pipeline=default] "
    "[--backend=ascend910b|ascend950|none]\n"
    "                [--emit=text|proto|memory-map] [-o FILE] [--print-after-all]\n"
    "                [--verify=true|false] [--verify-memory-plan]\n"
    "                [--planner=sequential|greedy|search] [--planner-budget-ms=N] "
    "[input.tile | -]\n"
    "passes: init-memref, memory-reuse, allocate-memory-addr\n";

int Usage(const std::string& why) {
  std::cerr << "tile_opt: " << why << "\n" << kUsage;
  return 2;
}

// A message that already carries `file:line:col: error:` is printed as is; others get
// "error: ".
int Fail(absl::string_view message) {
  if (absl::StrContains(message, "error:")) {
    std::cerr << message << "\n";
  } else {
    std::cerr << "error: " << message << "\n";
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace accelmem;  // NOLINT
  std::string passes_spec, backend = "none", emit = "text", output, input;
  passes::MemoryPipelineOptions pipeline_options;
  bool print_after_all = false, verify = true, verify_plan = false, have_input = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](absl::string_view flag, std::string* out) {
      if (!absl::StartsWith(a, flag)) return false;
      if (a.size() == flag.size()) return false;
      if (a[flag.size()] != '=') return false;
      *out = a.substr(flag.size() + 1);
      return true;
    };
    std::string v;
    if (value("--passes", &v)) {
      passes_spec = v;
    } else if (value("--pipeline", &v)) {
      if (v != "default") return Usage("unknown pipeline '" + v + "' (known: default)");
      passes_spec = passes::kDefaultPipeline;
    } else if (value("--backend", &v)) {
      backend = v;
    } else if (value("--emit", &v)) {
      if (v != "text" && v != "proto" && v != "memory-map") {
        return Usage("unknown --emit value '" + v + "'");
      }
      emit = v;
    } else if (value("--planner", &v)) {
      if (!passes::ParsePlacementStrategy(v, &pipeline_options.allocate.strategy)) {
        return Usage("unknown --planner value '" + v + "' (known: sequential, greedy, search)");
      }
    } else if (value("--planner-budget-ms", &v)) {
      int64_t ms = 0;
      if (!absl::SimpleAtoi(v, &ms) || ms < 0) {
        return Usage("--planner-budget-ms takes a non-negative integer, got '" + v + "'");
      }
      pipeline_options.allocate.budget = absl::Milliseconds(ms);
    } else if (a == "-o") {
      if (i + 1 >= argc) return Usage("-o needs a file name");
      output = argv[++i];
    } else if (value("--output", &v)) {
      output = v;
    } else if (a == "--print-after-all") {
      print_after_all = true;
    } else if (a == "--verify-memory-plan") {
      verify_plan = true;
    } else if (value("--verify", &v)) {
      if (v != "true" && v != "false") return Usage("--verify takes true or false");
      verify = v == "true";
    } else if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (a == "-" || (!a.empty() && a[0] != '-')) {
      if (have_input) return Usage("more than one input file");
      input = a;
      have_input = true;
    } else {
      return Usage("unknown flag '" + a + "'");
    }
  }
  if (absl::Status s = backends::BackendConfig::SetByName(backend); !s.ok()) {
    return Usage(std::string(s.message()));
  }
  // The passes are given the chosen backend; the IR verifier and the memory-plan checker below
  // follow the configuration.
  pipeline_options.backend = backends::BackendConfig::Get();
  passes::PassManagerOptions opts;
  opts.verify = verify;
  std::string filename = "<stdin>";
  if (have_input && input != "-") filename = input;
  opts.verifier = [filename](const ir::Program& p) {
    return passes::VerifyWithActiveBackend(p, filename);
  };
  if (print_after_all) {
    opts.after_pass = [](absl::string_view name, const ir::Program& p) {
      std::cerr << "# ----- IR after " << name << " -----\n" << ir::PrintProgram(p);
    };
  }
  passes::PassManager pm(opts);
  if (absl::Status s = passes::AddPasses(passes_spec, &pm, pipeline_options); !s.ok()) {
    return Usage(std::string(s.message()));
  }

  absl::StatusOr<std::string> text = policy::ReadFileOrStdin(have_input ? input : "-");
  if (!text.ok()) return Fail(text.status().message());
  absl::StatusOr<ir::ProgramPtr> program = ir::ParseProgram(*text, filename);
  if (!program.ok()) return Fail(program.status().message());
  absl::StatusOr<passes::ProgramResult> result = pm.Run(*program);
  if (!result.ok()) return Fail(result.status().message());
  const ir::Program& out = *result->program;
  if (verify_plan) {
    if (absl::Status s = passes::VerifyMemoryPlan(out); !s.ok()) return Fail(s.message());
  }

  if (emit == "memory-map") {
    std::vector<std::pair<std::string, std::string>> svgs;
    for (const ir::FunctionPtr& f : out.functions) {
      absl::StatusOr<passes::MemoryPlanReport> report = passes::AnalyzeMemoryPlan(*f);
      if (!report.ok()) return Fail(report.status().message());
      svgs.emplace_back(f->name, tools::RenderMemoryMapSvg(*report));
    }
    if (output.empty()) {
      for (const auto& kv : svgs) std::cout << kv.second;
      return 0;
    }
    if (::mkdir(output.c_str(), 0755) != 0 && errno != EEXIST) {
      return Fail(absl::StrCat("cannot create directory '", output, "'"));
    }
    for (const auto& kv : svgs) {
      absl::Status w =
          policy::WriteWholeFile(absl::StrCat(output, "/", kv.first, ".svg"), kv.second);
      if (!w.ok()) return Fail(w.message());
    }
    return 0;
  }
  std::string data;
  if (emit == "proto") {
    if (!ir::ToProto(out).SerializeToString(&data)) return Fail("cannot serialize the program");
  } else {
    data = ir::PrintProgram(out);
  }
  if (output.empty()) {
    std::cout << data;
    return std::cout ? 0 : 1;
  }
  if (absl::Status w = policy::WriteWholeFile(output, data); !w.ok()) return Fail(w.message());
  return 0;
}
