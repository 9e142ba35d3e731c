"""Static buffer placement over NumPy arrays.

A placement instance is three equally long integer arrays: ``lower`` (first step at which a
buffer is live), ``upper`` (first step at which it is dead again, half-open) and ``size``
(bytes). A placement gives every buffer an offset such that buffers live at the same time never
overlap; ``load`` (the largest total size live at once) is a lower bound on its height.

Example::

    import numpy as np
    from accelmem import policy
    lower = np.array([0, 1, 2]); upper = np.array([2, 3, 4]); size = np.array([64, 32, 64])
    offsets = policy.place(lower, upper, size, alignment=32)
    policy.check(lower, upper, size, offsets, alignment=32)   # raises PlacementError if bad
    policy.height(lower, upper, size, offsets) == policy.load(lower, upper, size)

int64 C-contiguous arrays are read in place (other integer arrays are converted once), and the
planner runs with the GIL released.
"""

from typing import Optional

import numpy as np

from accelmem._accelmem import policy as _policy
from accelmem._errors import PlacementError

PlacementPlan = _policy.PlacementPlan

__all__ = ["PlacementError", "PlacementPlan", "check", "height", "load", "load_csv", "place",
           "plan"]


def place(lower, upper, size, *, alignment: int = 1, capacity: Optional[int] = None,
          mode: str = "greedy", budget_ms: float = 1000.0) -> np.ndarray:
    """Places the buffers; returns their offsets as an int64 array.

    Args:
        lower, upper, size: the instance (1-D integer arrays of one length).
        alignment: every offset is a multiple of it.
        capacity: search mode first tries to fit under it (never an error; see :func:`plan`).
        mode: ``"greedy"`` (the best of six textbook rules) or ``"search"`` (greedy, then
            branch and bound / neighbourhood search within ``budget_ms``).
        budget_ms: wall-clock budget of search mode.

    Raises:
        ValueError: an invalid instance (negative size, upper < lower, ...) or option.
    """
    return _policy.place(lower, upper, size, int(alignment), int(capacity or 0), mode,
                         float(budget_ms))


def plan(lower, upper, size, *, alignment: int = 1, capacity: Optional[int] = None,
         mode: str = "greedy", budget_ms: float = 1000.0, seed: int = 1,
         search_threads: int = 0) -> PlacementPlan:
    """Like :func:`place` but returns the whole :class:`PlacementPlan` (offsets, height, load,
    lower bound, method, whether it fits the capacity)."""
    return _policy.plan(lower, upper, size, int(alignment), int(capacity or 0), mode,
                        float(budget_ms), int(seed), int(search_threads))


def load(lower, upper, size) -> int:
    """LOAD: the largest total size of buffers live at one step (a lower bound on the height)."""
    return _policy.load(lower, upper, size)


def height(lower, upper, size, offsets) -> int:
    """max(offset + size) over buffers that take space."""
    return _policy.height(lower, upper, size, offsets)


def check(lower, upper, size, offsets, *, alignment: int = 1,
          capacity: Optional[int] = None) -> None:
    """Checks a placement independently of any planner.

    Raises:
        PlacementError: two buffers live at once overlap, an offset is misaligned or negative,
            or a buffer ends above ``capacity``.
    """
    _policy.check(lower, upper, size, offsets, int(alignment), int(capacity or 0))


def load_csv(path: str):
    """Reads a placement instance CSV (``id,lower,upper,size`` with a header line, as
    ``//tools:place`` reads) and returns ``(lower, upper, size)`` as int64 arrays."""
    data = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64, ndmin=2)
    return (np.ascontiguousarray(data[:, 1]), np.ascontiguousarray(data[:, 2]),
            np.ascontiguousarray(data[:, 3]))
