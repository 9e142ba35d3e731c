// Random VALID tile programs for property tests of the memory pipeline, reproducible from a seed,
// and a shrinker that turns a failing program into a small reproducer.
//
// GenerateProgram(seed) writes unplanned tile-IR text (no MemRefs but the author's declared
// allocations): several functions (AIV, AIC, InCore), loops with several carries whose yields
// cross (carry k yields a value computed from carry j, rotations, swaps), nested loops, ifs with
// and without results, views (slices, reshapes, slices of slices, Acc slices), narrowing and
// widening casts, tile.matmul / tile.matmul_acc over Left/Right/Acc (also as a carried
// accumulator), every on-chip space (Vec, Mat, Left, Right, Acc, Bias), storage layouts (ND, NZ)
// on Vec tiles, pipelined loops (`pipeline=N`), declared allocations (`declared=1`) holding some
// top-level loads, system.reserve_buffer with explicit and AUTO bases in AIC and AIV functions,
// ops that are not in-place safe (recip, rsqrt, move, transpose, widening cast) and values read
// long after their definition. The random numbers come from a SplitMix64 stream of our own, so a
// seed gives the same text on every platform and library version.
//
// Sizes stay within the Ascend capacities (the smallest, 910B's: Vec 184 KiB, Bias 1 KiB) even when
// nothing is shared; with GeneratorOptions::over_capacity_percent some programs get a tile or a
// reserve buffer far beyond any capacity, and GeneratedProgram::may_exceed_capacity says so (the
// pipeline may then fail with a capacity error, but must not crash).
//
// ShrinkProgram() works on the text: it removes functions, statement blocks (loops and ifs whole),
// loop carries, loop pipelining and if results, replaces definitions by `tile.create` of the same
// type (which cuts their dependencies), shrinks trip counts and shapes, keeping each step only when
// the text still parses and verifies and the predicate still says "fails". It works on any
// unplanned tile text, hand-written ones too.
#ifndef ACCELMEM_PASSES_TESTING_PROGRAM_GENERATOR_H_
#define ACCELMEM_PASSES_TESTING_PROGRAM_GENERATOR_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/program.h"

namespace accelmem {
namespace passes_testing {

// SplitMix64 (public domain, Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): a tiny generator whose output is fixed by its seed alone.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  // Uniform in [lo, hi] (inclusive); lo <= hi.
  int64_t Uniform(int64_t lo, int64_t hi);
  // True with probability percent / 100.
  bool Percent(int percent);

 private:
  uint64_t state_;
};

struct GeneratorOptions {
  int min_functions = 1;
  int max_functions = 3;
  int max_top_statements = 14;    // per function, before the final store and return
  int max_depth = 3;              // nesting of loops and ifs
  int over_capacity_percent = 0;  // programs with a tile or reserve beyond every capacity
  // Feature switches, to look past a known bug in a long run (the property test keeps all on).
  bool slices_of_views = true;  // slices (and reshapes) whose source is itself a view
  bool acc_slices = true;       // slices of Acc tiles
  // Storage layouts (layout=ND / NZ) on some Vec tiles: loads, creates and moves state a fresh
  // one, views, write-into results, carries and yields their source's. Drawn from a stream of
  // their own, so the programs are otherwise those without layouts.
  bool layouts = true;
  // Pipelined loops (`pipeline=2` or `3`) among the generated loops that are not inside another
  // pipelined loop; their body's tiles are charged depth times against the budget (init-memref
  // gives each a slot per stage). Which loops are pipelined comes from a stream of its own.
  bool pipelines = true;
  // Declared allocations (`tile.alloc(..., declared=1)`): some top-level Vec loads are placed
  // in one by the "author". Drawn from a stream of their own.
  bool declared = true;
};

struct GeneratedProgram {
  uint64_t seed = 0;
  std::string text;
  bool may_exceed_capacity = false;
  // When may_exceed_capacity: the error of a run that fails must contain one of these (the
  // injected cause: the capacity check, or the huge reserve's own errors).
  std::vector<std::string> accepted_errors;
};

GeneratedProgram GenerateProgram(uint64_t seed, const GeneratorOptions& options = {});

// GenerateProgram, parsed and verified (an error here is a generator bug).
absl::StatusOr<ir::ProgramPtr> GenerateIr(uint64_t seed, const GeneratorOptions& options = {});

// True when `text` parses and verifies (ir::ParseAndVerifyProgram, default sizes).
bool IsValidProgramText(const std::string& text);

// A tuple in the text format, `(a, b)`; a one-element tuple keeps its comma, `(a,)`. Shared by the
// generator and the shrinker, which rewrites loop headers.
std::string TupleText(const std::vector<std::string>& items);

struct ShrinkOptions {
  int max_predicate_calls = 4000;  // bound on the work; the best text so far is returned
};

// Greedily simplifies `text` while `still_fails(candidate)` holds for a valid candidate, until no
// step applies. `still_fails(text)` should be true on entry; the result is `text` otherwise.
std::string ShrinkProgram(const std::string& text,
                          const std::function<bool(const std::string&)>& still_fails,
                          const ShrinkOptions& options = {});

}  // namespace passes_testing
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_TESTING_PROGRAM_GENERATOR_H_
