// init-memref: gives every tile value a MemRef and puts one `tile.alloc` per root at the top of
// the body.
//
// Rules, per function (every function type):
// - A root MemRef is named mem_<space>_<id> with ids counting from 0 in definition order, tile
//   parameters first. Its size is the tile's bytes under the backend of the options (Acc rows
//   padded on Ascend), the contract's ceil(prod(shape) * bits / 8) without one. Only values that
//   get a fresh root consume an id, so ids are dense.
// - A view op's result (tile.slice, tile.reshape) lives in its source's root: a slice at the
//   row-major byte offset of its origin in the parent shape (plus the parent's own offset), a
//   reshape at its source's offset. A view covering the whole root is the root itself.
// - A writes-into op's result (tile.matmul_acc, argument 0) is that argument's MemRef.
// - Loop iter-args and loop results share their init value's MemRef; an `if` result shares the
//   then-branch yield's (the else-branch yield's if the then value has none).
// - Pipelined loops (`pipeline=N`): a value of the body (not the loop's own carried values) that
//   gets a fresh root gets a slotted one, `tile.alloc(Space, -1, N x size, i, slots=N)`, and lives
//   in its slot 0 (`memref=mem_x_i[0]`): iteration j uses slot j mod N, one slot per stage, so
//   the loop's stages never overwrite each other. Its views stay in the slot.
// - One `mem_x_i: MemRefType = tile.alloc(Space, -1, size, i)` per root, prepended in id order.
// Errors: a tile with a non-static shape ("value 'v' has a non-static shape [n, 64]; init-memref
// needs static shapes"), a zero-byte tile, a slice with a dynamic or 4-bit-unaligned origin.
// - Declared allocations (`tile.alloc(..., declared=1)`, the author's): a tile the author placed
//   in one keeps it (views of it derive from it as from any root); its alloc statement stays;
//   fresh roots take the ids the declared ones leave free. A declared allocation that states an
//   address (not -1) is an error: allocate-memory-addr places it. So are two tiles the author
//   put on the same bytes of one while both are live (each would overwrite the other).
// A function whose tile values all have MemRefs already is left unchanged; one without tiles too.
// Any other mix of tiles with and without MemRefs is an error.
#ifndef ACCELMEM_PASSES_INIT_MEMREF_H_
#define ACCELMEM_PASSES_INIT_MEMREF_H_

#include <string>
#include <utility>

#include "backends/backend.h"
#include "passes/pass.h"

namespace accelmem {
namespace passes {

struct InitMemRefOptions {
  // Whose tile sizes to use (Acc rows padded on Ascend); null: ir::StaticTileBytes.
  backends::BackendPtr backend;
};

class InitMemRefPass final : public Pass {
 public:
  static constexpr const char* kName = "init-memref";
  explicit InitMemRefPass(InitMemRefOptions options = {}) : options_(std::move(options)) {}
  std::string Name() const override { return kName; }
  absl::StatusOr<FunctionResult> RunOnFunction(const ir::FunctionPtr& function) const override;

 private:
  InitMemRefOptions options_;
};

PassPtr CreateInitMemRefPass(const InitMemRefOptions& options = {});

}  // namespace passes
}  // namespace accelmem

#endif  // ACCELMEM_PASSES_INIT_MEMREF_H_
