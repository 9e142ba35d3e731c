"""A sparse particle grid: activation, deactivation and garbage collection.

Particles live in a 256x256 domain split into 16x16 pointer blocks of 16x16 cells; each cell
keeps a dynamic list of particle ids. Particles drift to the right each step: cells they enter
are activated by `append`, blocks they leave are deactivated, and garbage collection makes the
freed blocks reusable.
"""

import numpy as np

from accelmem import sparse

N = 2000
DOMAIN = 256
BLOCK = 16


def build():
    tree = sparse.SNodeTree()
    blocks = tree.root.pointer((0, 1), (DOMAIN // BLOCK, DOMAIN // BLOCK))
    cells = blocks.dense((0, 1), (BLOCK, BLOCK))
    ids = cells.dynamic(2, 64, chunk_size=8)
    ids.place("pid", np.int32)
    return tree, blocks, ids


def main(backend="native"):
    tree, blocks, ids = build()
    rt = sparse.Runtime(tree, backend=backend, auto_collect=False)
    rng = np.random.default_rng(1)
    pos = np.stack([rng.integers(0, 64, N), rng.integers(0, DOMAIN, N)], axis=1)

    for step in range(4):
        cell = pos.astype(np.int32)
        rt.append("pid", cell, np.arange(N, dtype=np.int32))
        active = rt.active_indices(blocks)
        counts = rt.length(ids, cell)
        stats = rt.stats(blocks)
        print("step %d: %3d active blocks, %d particles, max %d per cell, block cells in use "
              "%d, ever reserved %d" % (step, len(active), rt.to_numpy("pid")[1].size,
                                        counts.max(), stats["cells_in_use"],
                                        stats["cells_reserved"]))
        assert rt.to_numpy("pid")[1].size == N
        # Collected blocks are reused: the allocator never grows past the busiest step.
        assert stats["cells_reserved"] == len(active), stats

        # Clear the grid block by block, then collect the freed blocks.
        rt.deactivate(blocks, active)
        assert not rt.is_active(blocks, active).any()
        assert rt.stats(blocks)["cells_recycled"] == len(active)
        rt.collect_garbage()
        assert rt.stats(blocks)["cells_free"] >= len(active)

        pos[:, 0] = (pos[:, 0] + 48) % DOMAIN  # drift
    rt.check_invariants()
    print("collections: %d, bytes mapped: %d" % (rt.num_gc_collections, rt.bytes_mapped))


if __name__ == "__main__":
    main()
