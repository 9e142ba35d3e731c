// An independent oracle for planned tile programs: it executes each function symbolically, byte
// by byte, and reports every way the plan can make the program compute a wrong result.
//
// It uses only ir/ (nodes and types) and its own small tables: element bits per dtype, which ops
// are views, write into an argument or may not overwrite their operands, the Acc row padding and
// the capacities of the backends. It shares no code with passes/ (no lifetimes, no
// verify_memory_plan), so a bug in the pipeline's model of memory cannot hide itself.
//
// Model. Every planned root (a `tile.alloc` with its address and size) is a byte range of its
// memory space. Each memory space is a map from byte ranges to the value that last wrote them.
// A tile value occupies [root address + view offset, + its physical size): shape x element bits,
// Acc rows padded on the Ascend backends, views spanning first to last element with the strides
// of their root. Writing a value records it over its bytes; reading a value checks that all of its
// bytes still hold it. Views alias their source (they write nothing), tile.matmul_acc writes into
// argument 0. Loops run min(trip count, SimulatorOptions::loop_iterations) times (at least once
// when the count is not known), with the carries' parallel copies at entry, yield and exit
// wherever a carried value does not already sit where the carry lives; ifs run along several
// paths (all then, all else, and pseudo-random mixes, each if instance decided separately).
//
// Findings (FindingKind): a read of a value whose bytes another value overwrote since it was
// defined; an op that is not in-place safe (recip, rsqrt, move, transpose, widening cast) whose
// result overlaps one of its operands; an in-place-safe op whose result starts inside an operand
// after the operand's start (it overwrites elements before they are read); a view whose bytes are
// not where the physical rule puts them (a slice of the root at the row-major offset of its origin
// times the element size; a slice of a slice at its origin in the root's row stride; a reshape at
// its source's offset), in another root, or reaching outside its root; a write-into result not at
// its argument's bytes; overlapping reserve_buffer ranges, or a root overlapping one; a root or
// reserve range beyond the backend's capacity; a root address not a multiple of 32; an unplanned
// root; a root smaller than a value in it; an on-chip tile the simulator cannot place (no MemRef,
// a dynamic shape, a root without an address, a view, carry or alias of such a value, or a slice
// whose origin is not a list of integer literals): nothing it cannot check passes silently.
// Storage layouts: where the backend keeps layouts apart (its own table: Vec on ascend950), a
// value written over bytes whose last writer was a value of another layout class (its stated
// layout, ND when none) is a finding, whatever their lifetimes; so any two values of different
// classes that ever share a byte are found at the second's write.
// Slots and pipelined loops: a tile in slot k of a slotted root (`tile.alloc(..., slots=N)`)
// lies at k x size / N of it, and inside a pipelined loop (`pipeline=D`, D >= N) iteration j puts
// it in slot (k + j) mod N. Such a loop keeps F iterations in flight, F = D capped by the slots of
// every on-chip tile its body defines (a plain buffer makes F = 1: the loop is serialised), so a
// value its body writes over bytes that a value of one of the F - 1 iterations before still holds
// is a finding
// (stage overlap), even though the sequential execution reads nothing clobbered; values in the
// root of one of the loop's carried values (an accumulator) are ordered by the carry and exempt.
// Declared allocations (`tile.alloc(..., declared=1)`): no other root of the space may overlap
// one's bytes, whatever the lifetimes (a static check of the addresses).
// Orchestration functions are not planned and not simulated; DDR tiles are not planned here.
//
// Values (SimulateAndTrace). Every value also gets a fingerprint of what it computes from the
// data it actually reads: an op hashes its name, non-tile arguments and keyword arguments, result
// shape and dtype, and its tile operands' fingerprints as read from their bytes (a clobbered read
// yields a "garbage" fingerprint); tile.move and the carries' copies are transparent; views hash
// their source; loads their tensor. Each tile.store appends (tile, offsets, tensor) to the path's
// output trace and makes the tensor's new fingerprint. Names, spaces and addresses are never
// hashed, so every correct plan of one program has the same traces as the unplanned program.
#ifndef ACCELMEM_PASSES_TESTING_PLAN_SIMULATOR_H_
#define ACCELMEM_PASSES_TESTING_PLAN_SIMULATOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/program.h"

namespace accelmem {
namespace passes_testing {

enum class FindingKind {
  kClobberedRead,          // a value read after another value overwrote some of its bytes
  kNotInplaceOverlap,      // an op that is not in-place safe writes over one of its operands
  kShiftedInplaceOverlap,  // a result starts inside an operand, after its start
  kViewOffset,             // a view's offset is not the physical one
  kViewRoot,               // a view lives in another root than its source
  kViewOutsideRoot,        // a view's elements reach beyond its root
  kWritesIntoMismatch,     // tile.matmul_acc's result is not at its accumulator's bytes
  kReserveOverlap,         // two reserve_buffer ranges overlap
  kReserveTileOverlap,     // a root overlaps a reserve_buffer range
  kCapacity,               // a root or reserve range ends beyond the space's capacity
  kMisaligned,             // a root address is not a multiple of 32
  kUnplanned,              // a root (or reserve base) without an address
  kMemRefTooSmall,         // a value does not fit in its root
  kUnlocatable,            // an on-chip tile whose bytes the simulator cannot determine
  kMalformed,              // the IR is not what a planned program looks like (names no alloc...)
  kLayoutShare,            // a value written over bytes a value of another layout class held
  kStageOverlap,           // a pipelined loop's value written over one of an in-flight iteration
  kDeclaredShare,          // a root overlaps a declared allocation (`declared=1`)
};
inline constexpr int kNumFindingKinds = 18;

// "clobbered-read", "not-inplace-overlap", ...
const char* FindingKindName(FindingKind kind);

struct Finding {
  FindingKind kind = FindingKind::kMalformed;
  std::string function;
  int stmt = -1;                       // statement number in the function, in pre-order (0 = first)
  std::string stmt_text;               // the statement's first line, printed
  std::vector<std::string> values;     // the values involved, the reader/writer first
  std::string space;                   // memory space of the byte ranges
  int64_t lo = 0, hi = 0;              // the offending byte range
  int64_t other_lo = 0, other_hi = 0;  // the range it collides with (when there is one)
  std::string message;
  // One line: "kind in function 'f' at statement N `text`: message [lo, hi) vs [a, b)".
  std::string ToString() const;
};

struct SimulatorOptions {
  // "none", "ascend910b" or "ascend950": capacities and Acc row padding (own table).
  std::string backend = "none";
  int loop_iterations = 3;  // iterations per loop execution (bounded by the trip count)
  int paths = 12;           // executions per function with different if decisions
};

// Simulates every non-Orchestration function of a planned program. Findings are deduplicated
// (kind, function, statement, values).
std::vector<Finding> SimulatePlannedProgram(const ir::Program& program,
                                            const SimulatorOptions& options = {});

// One output of a path: a tile.store, the function's return, or (last) the path's control flow
// (loop iteration counts and if decisions, which must not depend on the plan).
struct TraceEntry {
  std::string what;      // "store o2" (the result's name), "return", "control"
  uint64_t fingerprint;  // of what it outputs
  bool operator==(const TraceEntry& o) const { return fingerprint == o.fingerprint; }
};
// Per function, per simulated path, its outputs in order.
using OutputTrace = std::map<std::string, std::vector<std::vector<TraceEntry>>>;

// "" when equal, else where they first differ ("function 'f', path 2, output 3 (store o2)").
std::string TraceDifference(const OutputTrace& a, const OutputTrace& b);

struct Simulation {
  std::vector<Finding> findings;
  OutputTrace trace;
};

// SimulatePlannedProgram plus the output trace of every simulated function.
Simulation SimulateAndTrace(const ir::Program& program, const SimulatorOptions& options = {});

}  // namespace passes_testing
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_TESTING_PLAN_SIMULATOR_H_
