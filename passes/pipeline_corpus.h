// File: passes/pipeline_corpus.h
//
// The generated tile programs of the memory pipeline's benchmark corpus, shared by
// //benchmarks:memory_pipeline_bench (which measures them at 1k-100k tiles) and
// //passes:memory_pipeline_test (which checks the footprint bar on smaller ones), so both look at
// the same programs.
#ifndef ACCELMEM_PASSES_PIPELINE_CORPUS_H_
#define ACCELMEM_PASSES_PIPELINE_CORPUS_H_

#include <string>

namespace accelmem {
namespace passes {

// About `tiles` Vec tiles: blocks of element-wise chains over three tile sizes (512, 1024, 2048
// bytes) with row slices, a value kept live across blocks, and every 8th block a loop that
// carries an accumulator; about 10 tiles per block. Function `f(xa, xb, xc)`.
std::string BlockProgram(int tiles);

// `loops` loops, each carrying the previous loop's result (one MemRef-source chain through the
// whole function). Function `f(x)`.
std::string ChainedLoopsProgram(int loops);

// `tiles` tiles of 32 bytes all live at once (n buffers in one space). Function `g(x)`.
std::string AllLiveProgram(int tiles);

// `functions` small functions `k0`, `k1`, ... of three tiles each (a load, an add, a store).
std::string ManyFunctionsProgram(int functions);

// One function `r(x)` with `reserves` disjoint reserve buffers of 64 bytes, every other one AUTO
// and the rest at explicit bases, and two tiles.
std::string ManyReservesProgram(int reserves);

}  // namespace passes
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_PIPELINE_CORPUS_H_
