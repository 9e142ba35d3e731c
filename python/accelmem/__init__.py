"""accelmem: memory management for accelerator compilers and runtimes, from Python.

Modules:

* :mod:`accelmem.ir` -- tile IR: parse, print, protobuf, inspect programs.
* :mod:`accelmem.passes` -- memory passes (init-memref, memory-reuse, allocate-memory-addr)
  and the memory pipeline.
* :mod:`accelmem.backends` -- the Ascend SoC backends (910B, 950) and backend selection.
* :mod:`accelmem.policy` -- lifetime-aware buffer placement over NumPy arrays.
* :mod:`accelmem.sparse` -- Taichi-style sparse SNode trees and the sparse runtime.

All heavy work runs in the native extension ``accelmem._accelmem`` with the GIL released.
"""

from accelmem import backends, ir, passes, policy, sparse
from accelmem._errors import ParseError, PassError, PlacementError

__version__ = "0.1.0"

__all__ = [
    "ParseError",
    "PassError",
    "PlacementError",
    "backends",
    "ir",
    "passes",
    "policy",
    "sparse",
    "__version__",
]
