// The constrained placement problem of schema v1 (github.com/tonibohnlein/dsa-solver,
// schemas/dsa-problem-v1.schema.json and dsa-solution-v1.schema.json): pools with capacities and
// reserved ranges; buffers with size, alignment, one or more half-open live intervals and the
// pools they may go to; colocations, separations, temporal exclusions and pins; weighted
// reuse-penalty edges; PyPTO alias and pipeline provenance; a lexicographic objective; and
// accelmem's extensions of the problem (problem.extensions, below), which schema v1 cannot say.
//
// Plain data plus its JSON form. Reading checks the document's shape (every required field, no
// unknown field, integers in range) and reports the JSON path of the first problem; the
// semantic checks (ids that exist, intervals that are not empty, ...) are ValidateDsaProblem.
// Writing emits the canonical form: keys sorted, two-space indent, a final newline, the form the
// corpus files are stored in, and the problem's fingerprint is the FNV-1a-64 of that text, so a
// solution can be replayed only against the exact problem it was made for.
#ifndef ACCELMEM_POLICY_DSA_PROBLEM_H_
#define ACCELMEM_POLICY_DSA_PROBLEM_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace accelmem {
namespace policy {

struct DsaAddressRange {
  uint64_t begin = 0;  // [begin, end)
  uint64_t end = 0;
};

struct DsaBankGeometry {
  uint64_t bank_size = 0;
  uint32_t num_banks = 0;
};

struct DsaPool {
  uint32_t id = 0;
  std::string name;
  std::optional<uint64_t> capacity;  // nullopt: unbounded ("capacity": null).
  std::vector<DsaAddressRange> reserved_ranges;
  std::optional<DsaBankGeometry> bank_geometry;
};

struct DsaInterval {
  int64_t lower = 0;  // [lower, upper)
  int64_t upper = 0;
};

struct DsaBuffer {
  uint32_t id = 0;
  std::string name;
  uint64_t size = 0;
  uint64_t alignment = 1;
  std::vector<DsaInterval> live_intervals;
  std::vector<uint32_t> allowed_pools;
};

struct DsaPair {
  uint32_t first = 0;
  uint32_t second = 0;
};

enum class DsaSeparationReason {
  kGeneric,
  kPipelineStage,
  kTargetHazard,
  kSemanticNoAlias,
  kCrossPipe
};

struct DsaSeparation {
  uint32_t first = 0;
  uint32_t second = 0;
  std::vector<DsaSeparationReason> reasons;  // Empty: the field is absent.
};

struct DsaPinnedAllocation {
  uint32_t buffer = 0;
  uint32_t pool = 0;
  uint64_t offset = 0;
  // True: no other buffer of the pool may overlap it at any time, live or not.
  bool exclusive_for_all_time = false;
};

struct DsaConstraints {
  std::vector<DsaPair> colocations;          // Same pool and offset.
  std::vector<DsaSeparation> separations;    // Disjoint byte ranges, whatever the lifetimes.
  std::vector<DsaPair> temporal_exclusions;  // Proven never live together: may share bytes.
  std::vector<DsaPinnedAllocation> pinned_allocations;
};

enum class DsaPenaltyReason {
  kGeneric,
  kPipelineSerialization,
  kLoadMotionSerialization,
  kCrossPipe,
  kCrossCore,
  kEventBudget
};

struct DsaReusePenalty {
  uint32_t first = 0;
  uint32_t second = 0;
  uint64_t cost = 0;  // Paid when the two may share bytes (no temporal conflict) and do.
  DsaPenaltyReason reason = DsaPenaltyReason::kGeneric;
};

struct DsaCostModel {
  std::vector<DsaReusePenalty> reuse_penalties;
};

struct DsaAliasClass {
  uint32_t buffer = 0;
  std::vector<std::string> members;
};

struct DsaPipelineMember {
  uint32_t buffer = 0;
  uint32_t stage = 0;
  uint32_t residue = 0;
};

struct DsaPipelineGroup {
  uint32_t group = 0;
  uint32_t pool = 0;
  uint64_t slot_size = 1;
  uint32_t depth = 1;
  uint32_t effective_depth = 1;
  std::vector<DsaPipelineMember> members;
};

struct DsaPyptoStructure {
  std::vector<DsaAliasClass> alias_classes;
  std::vector<DsaPipelineGroup> pipeline_groups;
};

enum class DsaObjectiveTerm { kCapacityOverflow, kTotalPeak, kMaxPeak, kReuseCost, kBankCost };

struct DsaObjective {
  std::vector<DsaObjectiveTerm> terms;  // Lexicographic, most important first.
};

// The optional object problem.extensions: constraints schema v1 cannot say, each under its own
// key. Why an object of named entries: a reader that does not know a key can skip it with a
// warning (ParseDsaProblemJson keeps it, so writing and the fingerprint do not depend on which
// reader read the document), while a reader that knows it parses and validates it fully.
// Canonical form: the object is written only when it holds something, each known key only when
// non-empty, so a problem without extensions is written exactly as schema v1 has it.
struct DsaExtensions {
  // "exact_or_disjoint": optional in-place execution (upstream PyPTO #2689, NoPartialOverlap).
  // Two buffers of a pair placed in the same pool either start at the same offset (same base:
  // the smaller lies at the start of the larger) or share no byte; a partial overlap is
  // forbidden, whatever their lifetimes. The byte ranges are those of the buffers' colocation
  // classes (their extents, as for separations). Unlike a separation, the same base is allowed,
  // so an in-place pair may share its storage. Pairs whose buffers are live together cannot
  // share anyway: there the pair changes nothing.
  std::vector<DsaPair> exact_or_disjoint;
  // Extensions this reader does not know: key -> its value as canonical JSON text. Kept for
  // writing; planners and checkers ignore them (the reader warns).
  std::map<std::string, std::string> unknown;

  bool empty() const { return exact_or_disjoint.empty() && unknown.empty(); }
};

struct DsaProblem {
  std::vector<DsaPool> pools;
  std::vector<DsaBuffer> buffers;
  DsaConstraints constraints;
  std::optional<DsaCostModel> cost_model;
  std::optional<DsaPyptoStructure> pypto_structure;
  DsaObjective objective;
  DsaExtensions extensions;
};

// The problem document (envelope plus problem).
struct DsaProblemDocument {
  int schema_version = 1;
  std::string profile = "pypto_research_v1";  // One of the schema's profile names.
  std::string instance;
  std::optional<std::string> relaxed_from;
  std::vector<std::string> relaxed_features;
  std::map<std::string, std::string> metadata;
  DsaProblem problem;
  // What the reader skipped, one line each ("problem.extensions.foo: unknown extension,
  // ignored"): never written, not part of the fingerprint.
  std::vector<std::string> warnings;
};

struct DsaPlacement {
  uint32_t buffer = 0;
  uint32_t pool = 0;
  uint64_t offset = 0;
};

struct DsaSolutionDocument {
  int schema_version = 1;
  std::string profile;
  std::string instance;
  std::string problem_fingerprint;  // 16 lowercase hex digits.
  std::map<std::string, std::string> metadata;
  std::vector<DsaPlacement> placements;  // Written sorted by buffer id.
};

// Names as they appear in the JSON ("semantic_no_alias", "cross_pipe", "reuse_cost", ...).
const char* DsaSeparationReasonName(DsaSeparationReason reason);
const char* DsaPenaltyReasonName(DsaPenaltyReason reason);
const char* DsaObjectiveTermName(DsaObjectiveTerm term);
bool IsDsaProfileName(const std::string& profile);

// Parses a problem document. Errors name `source` and the JSON path, e.g.
// "kernel.json: problem.buffers[3].size: expected an unsigned integer"; a syntax error names
// the byte offset.
absl::StatusOr<DsaProblemDocument> ParseDsaProblemJson(const std::string& text,
                                                       const std::string& source = "<input>");
absl::StatusOr<DsaSolutionDocument> ParseDsaSolutionJson(const std::string& text,
                                                         const std::string& source = "<input>");
// Reads and parses a file; a missing file is an error naming it.
absl::StatusOr<DsaProblemDocument> ReadDsaProblemFile(const std::string& path);
absl::StatusOr<DsaSolutionDocument> ReadDsaSolutionFile(const std::string& path);

// Canonical JSON text (sorted keys, two-space indent, trailing newline).
std::string WriteDsaProblemJson(const DsaProblemDocument& document);
std::string WriteDsaSolutionJson(const DsaSolutionDocument& document);

// FNV-1a-64 of WriteDsaProblemJson(document), as 16 lowercase hex digits.
std::string DsaProblemFingerprint(const DsaProblemDocument& document);

// Semantic checks of a problem: unique pool and buffer ids, non-zero sizes and power-of-two
// alignments, non-empty intervals, known pools and buffers in every constraint, cost and
// provenance entry, reserved ranges inside the capacity, pins aligned and clear of reserved
// ranges, no separation of a directly colocated pair, pipeline groups with known pools and
// members and a residue below the effective depth (not every check of dsa-solver's: duplicate
// groups, member pools, slot sizes and one residue per stage are not checked). What is valid here
// may still be infeasible: a separation through a chain of colocations, a colocation whose
// buffers allow no common pool, a pin whose colocation class does not fit there (the planner
// proves each). Extensions: every exact_or_disjoint pair names two known, different buffers with
// an allowed pool in common, and no pair is given twice. Each message names the entry
// ("problem.buffers[3] (id 7): size 0"). Empty: valid.
std::vector<std::string> ValidateDsaProblem(const DsaProblem& problem);

// Index of the buffer or pool with `id` in the problem's vectors, or -1.
int FindDsaBuffer(const DsaProblem& problem, uint32_t id);
int FindDsaPool(const DsaProblem& problem, uint32_t id);

// Pool views of a problem, for planners that place one pool at a time. A buffer belongs to the
// pool its first allowed pool names (the problems the compile side exports allow one pool a
// buffer). `offsets[i]` is the offset of problem.buffers[i].
//
// The sub-problem of `pool`: that pool (capacity included), its buffers in order with `pool` as
// their only allowed pool and ids renumbered 0, 1, ... (`ids` gets the old ids), and every
// constraint, pin, penalty, alias class, pipeline member and exact_or_disjoint pair among them
// (unknown extensions are not: nobody reads them). The objective is kept.
DsaProblem RestrictDsaProblemToPool(const DsaProblem& problem, uint32_t pool,
                                    std::vector<uint32_t>* ids);
// The reuse cost `offsets` pays in `pool`: the penalties between two of its buffers whose byte
// ranges overlap (saturating).
uint64_t DsaPoolReuseCost(const DsaProblem& problem, uint32_t pool,
                          const std::vector<uint64_t>& offsets);
// The peak of `pool` under `offsets`: the largest offset + size of its buffers and end of its
// reserved ranges.
uint64_t DsaPoolPeak(const DsaProblem& problem, uint32_t pool,
                     const std::vector<uint64_t>& offsets);

}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_DSA_PROBLEM_H_
