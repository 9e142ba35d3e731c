// Structural equality and hashing of IR, up to renaming of values.
//
// Two programs are equal when they have the same functions (by name, in order) and their
// bodies have the same shape, ops, literals and types, with a one-to-one correspondence
// between values (and between MemRef roots) — names of values and MemRefs do not matter.
// Source locations never matter.
//
// Options let pass tests choose what to compare: `compare_memrefs=false` ignores the MemRefs
// of tile types and skips `tile.alloc` statements altogether (compare a program before and
// after InitMemRef); `compare_addresses=false` ignores root addresses (the MemRef's and the
// alloc's `addr` argument) and the `base=` of `system.reserve_buffer`.
//
// FirstDifference explains the first mismatch for test failures, e.g.
//   function 'main' > body[3] AssignStmt 'b' > type > memref: offset 0 vs 256
#ifndef ACCELMEM_IR_STRUCTURAL_EQUAL_H_
#define ACCELMEM_IR_STRUCTURAL_EQUAL_H_

#include <cstddef>
#include <string>

#include "ir/function.h"
#include "ir/program.h"

namespace accelmem {
namespace ir {

struct StructuralEqualOptions {
  bool compare_memrefs = true;
  bool compare_addresses = true;
};

bool StructuralEqual(const Program& a, const Program& b,
                     const StructuralEqualOptions& options = {});
bool StructuralEqual(const Function& a, const Function& b,
                     const StructuralEqualOptions& options = {});

// Empty when equal, else the path to the first difference and what differs.
std::string FirstDifference(const Program& a, const Program& b,
                            const StructuralEqualOptions& options = {});
std::string FirstDifference(const Function& a, const Function& b,
                            const StructuralEqualOptions& options = {});

// Consistent with StructuralEqual under the same options: equal programs hash equal.
size_t StructuralHash(const Program& p, const StructuralEqualOptions& options = {});
size_t StructuralHash(const Function& f, const StructuralEqualOptions& options = {});

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_STRUCTURAL_EQUAL_H_
