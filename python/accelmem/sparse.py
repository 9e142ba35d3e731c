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
"""

from accelmem._accelmem import sparse as _sparse

SNode = _sparse.SNode
SNodeTree = _sparse.SNodeTree
Runtime = _sparse.Runtime

__all__ = ["Runtime", "SNode", "SNodeTree", "from_numpy"]


def from_numpy(runtime: Runtime, place, indices, values, num_threads: int = 1) -> None:
    """Writes ``values`` at ``indices`` (the inverse of ``Runtime.to_numpy``)."""
    runtime.write(place, indices, values, num_threads)
