// tile_opt: runs memory passes over tile-IR text, like mlir-opt.
//
//   tile_opt [flags] [input.tile | -]
//     --passes=init-memref,memory-reuse,allocate-memory-addr   passes to run, in order
//     --pipeline=default                                       the whole memory pipeline
//     --backend=ascend910b|ascend950|none                      SoC (policy, sizes, capacities)
//     --emit=text|proto|memory-map|dsa-json                    output form (default text)
//     -o FILE                                                  output (memory-map, dsa-json: a
//                                                              directory, one FUNCTION.svg or
//                                                              FUNCTION.json per function)
//     --print-after-all                                        IR after each pass, on stderr,
//                                                              and allocate-memory-addr's stats
//     --stats                                                  per pass its time; per function
//                                                              and space peak, LOAD, reuse cost
//                                                              and the planner's status (stderr)
//     --verify=false                                           skip the IR verifier between passes
//     --verify-memory-plan                                     also run verify_memory_plan at the
//     end
//     --planner=sequential|greedy|search|constrained|FILE      allocate-memory-addr's placement
//                                                              (default sequential, upstream's;
//                                                              the others do memory-reuse's
//                                                              carry fix-ups where needed, so
//                                                              memory-reuse is optional; FILE:
//                                                              schema-v1 solution documents to
//                                                              replay, matched by instance =
//                                                              function name)
//     --planner-budget-ms=N                                    search budget per space, or per
//                                                              function for constrained (def. 100)
// --emit=dsa-json writes each function's schema-v1 problem (passes/memory_problem.h) as the
// pipeline's allocate-memory-addr would solve it, without planning: to stdout one document after
// another, or with -o one file per function; `place` solves each file.
// Errors go to stderr as `file:line:col: error: ...` (parse and verifier errors with a
// location) or `error: in function 'F': ...`; the exit status is 1. Bad flags: usage, status 2.
// Notes (a pipelined loop's depth shed by memory-reuse, naming the loop) go to stderr as
// `note: in function 'F': ...` and do not change the exit status.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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
#include "policy/dsa_problem.h"
#include "policy/file_io.h"
#include "tools/memory_map_svg.h"

namespace {

constexpr char kUsage[] =
    "usage: tile_opt [--passes=a,b,... | --pipeline=default] "
    "[--backend=ascend910b|ascend950|none]\n"
    "                [--emit=text|proto|memory-map|dsa-json] [-o FILE] [--print-after-all]\n"
    "                [--stats] [--verify=true|false] [--verify-memory-plan]\n"
    "                [--planner=sequential|greedy|search|constrained|SOLUTION.json]\n"
    "                [--planner-budget-ms=N] [input.tile | -]\n"
    "passes: init-memref, memory-reuse, allocate-memory-addr\n";

// The JSON documents of a stream (`{...}{...}` with any whitespace between), split at the
// closing brace of each top-level object; strings are skipped so braces in names are safe.
std::vector<std::string> SplitJsonDocuments(const std::string& text) {
  std::vector<std::string> docs;
  int depth = 0;
  bool in_string = false, escaped = false;
  size_t begin = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      if (depth++ == 0) begin = i;
    } else if (c == '}' && depth > 0 && --depth == 0) {
      docs.push_back(text.substr(begin, i + 1 - begin));
    } else if (depth == 0 && c != ' ' && c != '\n' && c != '\t' && c != '\r') {
      docs.push_back(text.substr(i));  // not a document: the parser names the problem
      return docs;
    }
  }
  if (depth > 0) docs.push_back(text.substr(begin));
  return docs;
}

std::string StatsLine(const accelmem::passes::SpacePlanStats& st) {
  return absl::StrCat("# stats: function '", st.function, "' ",
                      accelmem::ir::MemorySpaceName(st.space), ": peak ", st.peak, " bytes, LOAD ",
                      st.load, " bytes, capacity ",
                      st.capacity > 0 ? absl::StrCat(st.capacity) : std::string("unknown"),
                      ", reuse cost ", st.reuse_cost, " (lower bound ", st.reuse_lower_bound,
                      "), plan ", st.method, ", status ", st.status, "\n");
}

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
  bool stats = false;
  std::string replay_file;
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
      if (v != "text" && v != "proto" && v != "memory-map" && v != "dsa-json") {
        return Usage("unknown --emit value '" + v + "'");
      }
      emit = v;
    } else if (value("--planner", &v)) {
      if (v == "replay" ||
          !passes::ParsePlacementStrategy(v, &pipeline_options.allocate.strategy)) {
        struct stat st;
        if (::stat(v.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
          return Usage("unknown --planner value '" + v +
                       "' (known: sequential, greedy, search, constrained, or a solution file)");
        }
        pipeline_options.allocate.strategy = passes::PlacementStrategy::kReplay;
        replay_file = v;
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
    } else if (a == "--stats") {
      stats = true;
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
  // The passes' notes (memory-reuse shedding a pipelined loop's depth), as a compiler's notes.
  pipeline_options.on_note = [](const std::string& note) { std::cerr << "note: " << note << "\n"; };
  passes::PassManagerOptions opts;
  opts.verify = verify;
  std::string filename = "<stdin>";
  if (have_input && input != "-") filename = input;
  opts.verifier = [filename](const ir::Program& p) {
    return passes::VerifyWithActiveBackend(p, filename);
  };
  if (!replay_file.empty()) {
    absl::StatusOr<std::string> json = policy::ReadFileOrStdin(replay_file);
    if (!json.ok()) return Fail(json.status().message());
    auto solutions = std::make_shared<std::map<std::string, policy::DsaSolutionDocument>>();
    for (const std::string& doc : SplitJsonDocuments(*json)) {
      absl::StatusOr<policy::DsaSolutionDocument> sol =
          policy::ParseDsaSolutionJson(doc, replay_file);
      if (!sol.ok()) return Fail(sol.status().message());
      const std::string instance = sol->instance;
      if (!solutions->emplace(instance, *std::move(sol)).second) {
        return Fail(absl::StrCat(replay_file, ": two solutions for instance '", instance, "'"));
      }
    }
    pipeline_options.allocate.replay = solutions;
  }
  std::vector<policy::DsaProblemDocument> problems;
  if (emit == "dsa-json") {
    pipeline_options.allocate.export_only = true;
    pipeline_options.allocate.on_problem = [&problems](const policy::DsaProblemDocument& d) {
      problems.push_back(d);
    };
  }
  std::string stats_text;  // allocate-memory-addr's lines, printed with its pass
  if (stats || print_after_all) {
    pipeline_options.allocate.on_stats = [&stats_text](const passes::SpacePlanStats& st) {
      stats_text += StatsLine(st);
    };
  }
  if (stats) {
    opts.on_pass_time = [](absl::string_view name, absl::Duration elapsed) {
      std::cerr << absl::StrFormat("# stats: pass %s took %.3f ms\n", name,
                                   absl::ToDoubleMilliseconds(elapsed));
    };
  }
  if (print_after_all) {
    opts.after_pass = [&stats_text](absl::string_view name, const ir::Program& p) {
      std::cerr << "# ----- IR after " << name << " -----\n" << ir::PrintProgram(p);
      if (name == passes::AllocateMemoryAddrPass::kName) std::cerr << stats_text;
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
  if (stats && !print_after_all) std::cerr << stats_text;
  const ir::Program& out = *result->program;
  if (emit == "dsa-json") {
    if (!absl::StrContains(passes_spec, passes::AllocateMemoryAddrPass::kName)) {
      return Usage("--emit=dsa-json needs allocate-memory-addr in the passes");
    }
    if (output.empty()) {
      for (const policy::DsaProblemDocument& d : problems) {
        std::cout << policy::WriteDsaProblemJson(d);
      }
      return std::cout ? 0 : 1;
    }
    if (::mkdir(output.c_str(), 0755) != 0 && errno != EEXIST) {
      return Fail(absl::StrCat("cannot create directory '", output, "'"));
    }
    for (const policy::DsaProblemDocument& d : problems) {
      absl::Status w = policy::WriteWholeFile(absl::StrCat(output, "/", d.instance, ".json"),
                                              policy::WriteDsaProblemJson(d));
      if (!w.ok()) return Fail(w.message());
    }
    return 0;
  }
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
