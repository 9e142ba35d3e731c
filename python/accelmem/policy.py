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

:func:`solve` is the constrained planner on a schema-v1 problem document (pools, reserved
ranges, alignment, separations, reuse penalties, ...; the format of
``third_party/dsa_solver_corpus``), given as a dict or as the path of its JSON file::

    result = policy.solve("kernel.json", budget_ms=100)
    result["status"], result["reuse_cost"], result["solution"]["placements"]
"""

import json
import os
from typing import Any, Dict, Optional, Union

import numpy as np

from accelmem._accelmem import policy as _policy
from accelmem._errors import PlacementError

PlacementPlan = _policy.PlacementPlan

__all__ = ["PlacementError", "PlacementPlan", "check", "height", "load", "load_csv", "place",
           "plan", "solve"]


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


def solve(problem: Union[Dict[str, Any], str, "os.PathLike[str]"],
          *, budget_ms: float = 100.0) -> Dict[str, Any]:
    """Solves a schema-v1 constrained placement problem (//policy:constrained_planner).

    Args:
        problem: the problem document as a dict (what ``json.load`` gives for a problem file),
            or the path of its JSON file (str or os.PathLike).
        budget_ms: wall-clock budget for the whole problem.

    Returns:
        A dict: ``status`` (the planner's ConstrainedStatusName: optimal or feasible when it
        fits, infeasible when proven that nothing fits, else no fit found within the budget),
        ``reuse_cost`` and its proven
        ``reuse_lower_bound``, ``total_peak`` and ``max_peak`` with their proven
        ``total_peak_lower_bound`` and ``max_peak_lower_bound``, ``reason`` (the first pool's
        reason that is not optimal, or ""), ``placements`` (``{"buffer", "pool", "offset"}`` per
        buffer, empty without a fit; a buffer allowed in several pools is placed in the pool
        chosen), ``pools`` (per pool: ``pool``, ``name``, ``status``, ``peak``,
        ``peak_lower_bound``, ``load``, ``load_time``, ``reuse_cost``, ``reuse_lower_bound``,
        ``reason``, ``relaxed_pipeline_groups``), ``solution`` (the solution document as a
        dict, with the problem's fingerprint; None without a placement) and ``relaxed``: None,
        or, when the problem as given is proven infeasible with pipeline depth hard but fits
        with it relaxed, the same fields for that other problem (its own status and solution
        document, with the relaxed problem's fingerprint) plus ``relaxed_pipeline_groups``
        (``{"pool", "group"}`` each). Every placement returned has passed the independent
        validator (//policy:dsa_validator).

    Raises:
        ValueError: the document is malformed (the message names the file, or ``<dict>``, and
            the JSON path) or uses what the planner does not handle; a negative budget.
        RuntimeError: the planner found a placement the validator rejects (a planner bug).
        OSError: the file cannot be read.
        TypeError: ``problem`` is neither a dict nor a path.
    """
    if isinstance(problem, dict):
        text = json.dumps(problem)
        source = "<dict>"
    elif isinstance(problem, (str, os.PathLike)):
        source = os.fspath(problem)
        if isinstance(source, bytes):
            source = os.fsdecode(source)
        with open(source, "rb") as f:
            text = f.read()
    else:
        raise TypeError("problem must be a dict or a path, not %s" % type(problem).__name__)
    return json.loads(_policy.solve(text, source, float(budget_ms)))
