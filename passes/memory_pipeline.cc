#include "passes/memory_pipeline.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "backends/backend.h"
#include "ir/verifier.h"
#include "passes/allocate_memory_addr.h"
#include "passes/init_memref.h"
#include "passes/memory_reuse.h"

namespace accelmem {
namespace passes {

std::vector<std::string> MemoryPassNames() {
  return {InitMemRefPass::kName, MemoryReusePass::kName, AllocateMemoryAddrPass::kName};
}

backends::BackendPtr PipelineBackend(const MemoryPipelineOptions& options) {
  return options.backend.has_value() ? *options.backend : backends::BackendConfig::Get();
}

absl::StatusOr<PassPtr> CreateMemoryPass(absl::string_view name,
                                         const MemoryPipelineOptions& options) {
  if (name == InitMemRefPass::kName) {
    InitMemRefOptions o;
    o.backend = PipelineBackend(options);
    return CreateInitMemRefPass(o);
  }
  if (name == MemoryReusePass::kName) {
    MemoryReuseOptions o;
    o.backend = PipelineBackend(options);
    o.on_note = options.on_note;
    return CreateMemoryReusePass(o);
  }
  if (name == AllocateMemoryAddrPass::kName) {
    AllocateMemoryAddrOptions o = options.allocate;
    o.backend = PipelineBackend(options);
    return CreateAllocateMemoryAddrPass(o);
  }
  return absl::NotFoundError(absl::StrCat(
      "unknown pass '", name, "' (known: ", absl::StrJoin(MemoryPassNames(), ", "), ")"));
}

absl::Status AddPasses(absl::string_view spec, PassManager* pm,
                       const MemoryPipelineOptions& given) {
  MemoryPipelineOptions options = given;
  options.backend = PipelineBackend(given);  // read the configuration once for all passes
  if (spec == "default") spec = kDefaultPipeline;
  for (absl::string_view name : absl::StrSplit(spec, ',', absl::SkipWhitespace())) {
    absl::StatusOr<PassPtr> pass = CreateMemoryPass(absl::StripAsciiWhitespace(name), options);
    if (!pass.ok()) return pass.status();
    pm->AddPass(*std::move(pass));
  }
  return absl::OkStatus();
}

absl::Status VerifyWithActiveBackend(const ir::Program& program, absl::string_view filename) {
  ir::VerifyOptions opts;
  opts.filename = std::string(filename);
  backends::BackendPtr backend = backends::BackendConfig::Get();
  if (backend != nullptr) opts.sizer = &backend->tile_byte_sizer();
  return ir::VerifyProgram(program, opts);
}

}  // namespace passes
}  // namespace accelmem
