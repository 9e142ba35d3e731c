"""Taichi-style sparse data structures: SNode trees and the sparse runtime.

Build a tree from its root, create a :class:`Runtime`, then run batched operations on NumPy
coordinate arrays of shape ``[N, ndim]`` (``ndim`` = number of axes of the SNode's index; shape
``[N]`` is accepted when ``ndim`` is 1)::

    import numpy as np
    from accelmem import sparse
    tree = sparse.SNodeTree()
    block = tree.root.pointer((0, 1), (16, 16))
    block.dense((0, 1), (8, 8)).place("x", np.float32)
    rt = sparse.Runtime(tree)                       # or backend="jit"
    coords = np.array([[3, 5], [100, 7]])
    rt.write("x", coords, [1.5, 2.5])               # activates the pointer cells
    rt.read("x", coords)                            # array([1.5, 2.5], dtype=float32)
    rt.deactivate(block, np.array([[0, 0]]))        # block index: coordinates // 8
    rt.collect_garbage()

An SNode is given as the :class:`SNode` object or, for places, its name. Inactive cells read 0.
For a dynamic SNode (and a place below it), ``append``, ``length`` and ``deactivate`` take the
container index (without the dynamic axis).

Errors: ``IndexError`` for coordinates outside the index space (checked for the whole batch
before anything runs), ``MemoryError`` when an allocator or the memory limit is exhausted (rows
before the failing one stay applied), ``ValueError`` for bad trees, dtypes or shapes.

Batches run with the GIL released, so Python threads can run batches concurrently; with
``num_threads > 1`` one batch is split over that many threads.

Struct-for operations run a whole loop over the active cells of a place in C++, on the runtime's
own threads (``Runtime(num_threads=...)``) with the GIL released, at about the speed of the same
loop written against the C++ host API::

    rt.fill_index("x", axis=0, scale=1.0, offset=0.0)   # x[I] = I[0] * 1.0 + 0.0
    rt.copy("x", "y")                                    # y[I] = x[I]  (same parent and dtype)
    rt.transform("y", a=1.0, b=0.0, c=1.0, d=1.0)        # y[I] = (a*y + b) / (c*y + d)
    rt.scatter_add("x", coords, 1.0)                     # x[coords[k]] += 1.0, activating paths

``copy``, ``fill_index`` and ``transform`` visit the cells that are active; ``scatter_add`` adds
every row (duplicates accumulate, in row order per cell, also with ``num_threads > 1``).
"""

from accelmem._accelmem import sparse as _sparse

SNode = _sparse.SNode
SNodeTree = _sparse.SNodeTree
Runtime = _sparse.Runtime

__all__ = ["Runtime", "SNode", "SNodeTree", "from_numpy"]


def from_numpy(runtime: Runtime, place, indices, values, num_threads: int = 1) -> None:
    """Writes ``values`` at ``indices`` (the inverse of ``Runtime.to_numpy``)."""
    runtime.write(place, indices, values, num_threads)
