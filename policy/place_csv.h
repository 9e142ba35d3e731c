// CSV reading and writing for static placement instances and placements, the formats of
// the MiniMalloc and idealloc benchmark sets (see third_party/placement_instances), so results
// compare with other tools on the same files.
//
//  - Instance: header `id,lower,upper,size` (columns in any order; extra columns such as
//    MiniMalloc's `alignment` are ignored), one buffer per line, half-open lifetime
//    [lower, upper), size in bytes.
//  - Placement: header `id,offset`, one line per buffer.
//
// Blank lines and a trailing '\r' are ignored; fields are trimmed. Every error reads
// `<file>:<line>: error: <what>` so that tools can print it as is.
#ifndef ACCELMEM_POLICY_PLACE_CSV_H_
#define ACCELMEM_POLICY_PLACE_CSV_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "policy/placement_checker.h"

namespace accelmem {
namespace policy {

// Parses an instance. `filename` only labels errors. Rejects a missing header or column, a
// wrong field count, non-integer or out-of-range numbers, lower > upper, negative sizes and
// duplicate ids.
absl::StatusOr<std::vector<policy::PlacementBuffer>> ParseInstanceCsv(absl::string_view text,
                                                                      absl::string_view filename);

// Parses a placement for `instance`: returns offsets in the instance's buffer order. Rejects
// unknown, duplicate or missing ids and non-integer offsets.
absl::StatusOr<std::vector<int64_t>> ParsePlacementCsv(
    absl::string_view text, absl::string_view filename,
    absl::Span<const policy::PlacementBuffer> instance);

// Writes `id,offset` lines (with header) in the instance's buffer order.
std::string FormatPlacementCsv(absl::Span<const policy::PlacementBuffer> instance,
                               absl::Span<const int64_t> offsets);

// Reads a whole file; the error reads `<path>: error: cannot read file`.
absl::StatusOr<std::string> ReadTextFile(const std::string& path);

}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_PLACE_CSV_H_
