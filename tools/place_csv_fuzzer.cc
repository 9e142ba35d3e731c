// libFuzzer target for the placement CSV reader (policy/place_csv.h) and, on what it reads, the
// placement planner (policy/lifetime_planner.h) and checker (policy/placement_checker.h), as the
// `place` tool uses them. Malformed CSV must give an error; a crash, hang, leak or sanitizer
// report is a finding, and so is a planned placement that the checker rejects or that does not
// survive the `id,offset` CSV round trip.
//
// Input: an instance CSV (`id,lower,upper,size`), optionally followed by a line `---` and a
// placement CSV (`id,offset`) to check against it, then one configuration byte (the last one; a
// file ending in a newline thus runs as itself without that newline, under the first choice of
// each setting). With c = (last byte - '\n') mod 256:
//   mode      = c % 2          greedy, search (2 ms budget, one thread)
//   alignment = 1 << (c / 2 % 8)
//   capacity  = c / 16 % 2     unbounded, or LOAD (the search then tries to fit under it)
// Instances of more than kMaxBuffers buffers are only parsed, so that each input runs quickly.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "policy/lifetime_planner.h"
#include "policy/place_csv.h"
#include "policy/placement_checker.h"

namespace {

constexpr size_t kMaxBuffers = 256;

[[noreturn]] void Die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "place_csv_fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accelmem;  // NOLINT
  if (size == 0) return 0;
  const unsigned c = static_cast<uint8_t>(data[size - 1] - '\n');
  absl::string_view text(reinterpret_cast<const char*>(data), size - 1);
  absl::string_view placement_text;
  bool has_placement = false;
  if (const size_t sep = text.find("\n---\n"); sep != absl::string_view::npos) {
    placement_text = text.substr(sep + 5);
    text = text.substr(0, sep + 1);
    has_placement = true;
  }

  absl::StatusOr<std::vector<policy::PlacementBuffer>> instance =
      policy::ParseInstanceCsv(text, "fuzz.csv");
  if (!instance.ok()) return 0;
  if (has_placement) {
    absl::StatusOr<std::vector<int64_t>> offsets =
        policy::ParsePlacementCsv(placement_text, "placement.csv", *instance);
    if (offsets.ok()) {
      if (offsets->size() != instance->size()) Die("placement size", "");
      (void)policy::CheckPlacement(*instance, *offsets);
    }
  }
  if (instance->size() > kMaxBuffers) return 0;

  policy::PlannerOptions options;
  options.mode = c % 2 == 0 ? policy::PlannerMode::kGreedy : policy::PlannerMode::kSearch;
  options.alignment = int64_t{1} << (c / 2 % 8);
  options.budget = absl::Milliseconds(2);
  options.search_threads = 1;
  policy::PlacementLimits limits;
  limits.alignment = options.alignment;
  if (!policy::ValidateInstance(*instance, limits).ok()) {
    // The planner must refuse what the checker refuses.
    if (policy::PlanPlacement(*instance, options).ok()) Die("planned an invalid instance", "");
    return 0;
  }
  if (c / 16 % 2 == 1) options.capacity = policy::ComputeLoad(*instance);
  absl::StatusOr<policy::PlacementPlan> plan = policy::PlanPlacement(*instance, options);
  if (!plan.ok()) Die("planner failed on a valid instance", std::string(plan.status().message()));
  if (absl::Status s = policy::CheckPlacement(*instance, plan->offsets, limits); !s.ok()) {
    Die("planned placement is invalid", std::string(s.message()));
  }
  if (plan->height != policy::PlacementHeight(*instance, plan->offsets)) {
    Die("reported height is wrong", "");
  }
  const std::string csv = policy::FormatPlacementCsv(*instance, plan->offsets);
  absl::StatusOr<std::vector<int64_t>> back =
      policy::ParsePlacementCsv(csv, "formatted.csv", *instance);
  if (!back.ok()) Die("formatted placement does not parse", std::string(back.status().message()));
  if (*back != plan->offsets) Die("formatted placement reads back differently", csv);
  return 0;
}
