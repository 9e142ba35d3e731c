// The memory pipeline by name: pass lookup for tools (`--passes=a,b`), the default pipeline
// (`init-memref,memory-reuse,allocate-memory-addr`), and the IR verifier configured for the
// active backend (so Acc tiles are checked against padded sizes) as the PassManager expects it.
#ifndef ACCELMEM_PASSES_MEMORY_PIPELINE_H_
#define ACCELMEM_PASSES_MEMORY_PIPELINE_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backends/backend.h"
#include "ir/program.h"
#include "passes/allocate_memory_addr.h"
#include "passes/pass.h"
#include "passes/pass_manager.h"

namespace accelmem {
namespace passes {

// "init-memref,memory-reuse,allocate-memory-addr"
inline constexpr const char* kDefaultPipeline = "init-memref,memory-reuse,allocate-memory-addr";

// The known pass names, in pipeline order.
std::vector<std::string> MemoryPassNames();
// Options of the passes built by name (default: the upstream compiler's behaviour).
struct MemoryPipelineOptions {
  // The target every pass is built for (tile sizes, allocator policy, capacities). Unset: the
  // configured backend (BackendConfig), read once when the passes are built; this is the
  // convenience path of the tools and tests, the passes themselves never read BackendConfig.
  // Set: exactly this backend, null for none.
  std::optional<backends::BackendPtr> backend;
  // Placement strategy and budget of allocate-memory-addr (its `backend` is taken from above).
  AllocateMemoryAddrOptions allocate;
  // The passes' notes (memory-reuse: a pipelined loop's depth shed; MemoryReuseOptions::on_note).
  std::function<void(const std::string&)> on_note;
};
// The backend `options` builds passes for (see MemoryPipelineOptions::backend).
backends::BackendPtr PipelineBackend(const MemoryPipelineOptions& options);

// NotFound "unknown pass 'x' (known: ...)".
absl::StatusOr<PassPtr> CreateMemoryPass(absl::string_view name,
                                         const MemoryPipelineOptions& options = {});
// Adds the passes of a comma-separated list ("default" = kDefaultPipeline) to `pm`.
absl::Status AddPasses(absl::string_view spec, PassManager* pm,
                       const MemoryPipelineOptions& options = {});
// ir::VerifyProgram with the configured backend's tile sizes (the default sizes without one);
// `filename` prefixes located errors (`file:line:col: error: ...`).
absl::Status VerifyWithActiveBackend(const ir::Program& program,
                                     absl::string_view filename = "<input>");

}  // namespace passes
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_MEMORY_PIPELINE_H_
