#include "passes/pass_testing.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/memory_pipeline.h"
#include "passes/pass_manager.h"

namespace accelmem {
namespace passes {
namespace testing {

absl::StatusOr<ProgramResult> RunOnText(absl::string_view text, absl::string_view passes,
                                        const MemoryPipelineOptions& options) {
  absl::StatusOr<ir::ProgramPtr> program = ir::ParseProgram(text, "<test>");
  if (!program.ok()) return program.status();
  PassManagerOptions opts;
  opts.verifier = [](const ir::Program& p) { return VerifyWithActiveBackend(p, "<test>"); };
  PassManager pm(opts);
  if (absl::Status s = AddPasses(passes, &pm, options); !s.ok()) return s;
  return pm.Run(*program);
}

absl::StatusOr<std::string> RunToText(absl::string_view text, absl::string_view passes) {
  absl::StatusOr<ProgramResult> r = RunOnText(text, passes);
  if (!r.ok()) return r.status();
  return ir::PrintProgram(*r->program);
}

std::string Canonical(absl::string_view text) {
  absl::StatusOr<ir::ProgramPtr> program = ir::ParseProgram(text, "<expected>");
  if (!program.ok()) return absl::StrCat("<does not parse: ", program.status().message(), ">");
  return ir::PrintProgram(**program);
}

ir::ProgramPtr ParseOrDie(absl::string_view text) {
  absl::StatusOr<ir::ProgramPtr> program = ir::ParseProgram(text, "<test>");
  if (!program.ok()) {
    std::fprintf(stderr, "%s\n", std::string(program.status().message()).c_str());
    std::abort();
  }
  return *program;
}

std::string DoubleBufferedMatmul(int n) {
  constexpr char kText[] = R"(@function(type=AIC)
def mm(a: Tensor[[$n, $k], FP16], b: Tensor[[$k, $n], FP16], c: Tensor[[$n, $n], FP32]) -> Tensor[[$n, $n], FP32]:
    l0: Tile[[$n, $n], FP16, Left] = tile.load(a, [0, 0], [$n, $n], space=Left)
    r0: Tile[[$n, $n], FP16, Right] = tile.load(b, [0, 0], [$n, $n], space=Right)
    acc0: Tile[[$n, $n], FP32, Acc] = tile.matmul(l0, r0)
    for k, (acc,) in range(1, 4, 1, init=(acc0,), pipeline=2) -> (out: Tile[[$n, $n], FP32, Acc],):
        am: Tile[[$n, $n], FP16, Mat] = tile.load(a, [0, k], [$n, $n], space=Mat)
        bm: Tile[[$n, $n], FP16, Mat] = tile.load(b, [k, 0], [$n, $n], space=Mat)
        al: Tile[[$n, $n], FP16, Left] = tile.move(am, Left)
        br: Tile[[$n, $n], FP16, Right] = tile.move(bm, Right)
        nxt: Tile[[$n, $n], FP32, Acc] = tile.matmul_acc(acc, al, br)
        yield (nxt,)
    o: Tensor[[$n, $n], FP32] = tile.store(out, [0, 0], c)
    return o
)";
  return absl::StrReplaceAll(kText, {{"$n", absl::StrCat(n)}, {"$k", absl::StrCat(4 * n)}});
}

}  // namespace testing
}  // namespace passes
}  // namespace accelmem
