"""Memory passes over tile-IR programs, in the style of PyPTO's ``passes`` module.

Each factory returns a pass object; calling it on a :class:`accelmem.ir.Program` returns the new
program (the same object when nothing changed)::

    from accelmem import ir, passes
    p = ir.parse(text)
    p = passes.init_mem_ref()(p)
    p = passes.memory_reuse()(p)
    p = passes.allocate_memory_addr()(p)

or all at once, with tile_opt's options::

    run = passes.pipeline(backend="ascend910b", planner="greedy", verify=True)
    planned = run(p)

Passes use the backend selected with :mod:`accelmem.backends` (a pipeline's ``backend=``
selects its own while it runs). Failures raise :class:`PassError`; a program whose input fails
verification raises :class:`accelmem.ir.ParseError`.
"""

from typing import Callable, List, Optional

from accelmem._accelmem import passes as _passes
from accelmem._errors import PassError

Pass = _passes.Pass
Pipeline = _passes.Pipeline

__all__ = ["DEFAULT_PIPELINE", "Pass", "PassError", "Pipeline", "allocate_memory_addr",
           "create", "init_mem_ref", "memory_plan", "memory_reuse", "pass_names", "pipeline",
           "verify_memory_plan"]

DEFAULT_PIPELINE = "init-memref,memory-reuse,allocate-memory-addr"
PLANNERS = ("sequential", "greedy", "search")


def init_mem_ref() -> Pass:
    """init-memref: gives every tile a MemRef and puts one ``tile.alloc`` per root at the top."""
    return _passes.create("init-memref")


def memory_reuse() -> Pass:
    """memory-reuse: lets tiles whose lifetimes do not overlap share a root MemRef."""
    return _passes.create("memory-reuse")


def allocate_memory_addr(planner: str = "sequential", budget_ms: float = 100.0) -> Pass:
    """allocate-memory-addr: gives every root MemRef an address.

    Args:
        planner: ``"sequential"`` (one slot after another, the upstream behaviour),
            ``"greedy"`` or ``"search"`` (the lifetime planner), or ``"constrained"`` (the
            function's schema-v1 problem with cross-pipe reuse penalties, solved with proofs:
            fit, then the least reuse cost, then the least peak).
        budget_ms: search budget per memory space and function (``planner="search"``), or per
            function (``planner="constrained"``).
    """
    return _passes.create("allocate-memory-addr", planner, float(budget_ms))


def create(name: str, planner: str = "sequential", budget_ms: float = 100.0) -> Pass:
    """A pass by its kebab-case name (see :func:`pass_names`); ValueError if unknown."""
    return _passes.create(name, planner, float(budget_ms))


def pass_names() -> List[str]:
    """Known pass names, in pipeline order."""
    return list(_passes.pass_names())


def pipeline(passes: str = "default", *, backend: Optional[str] = None,
             planner: str = "sequential", budget_ms: float = 100.0, verify: bool = True,
             verify_plan: bool = False, filename: str = "<input>",
             after_pass: Optional[Callable[[str, "object"], None]] = None) -> Pipeline:
    """The memory pipeline, as ``tile_opt`` runs it.

    Args:
        passes: comma-separated pass names, or ``"default"`` (:data:`DEFAULT_PIPELINE`).
        backend: ``"ascend910b"``, ``"ascend950"``, ``"none"``, or None to use the backend
            selected in :mod:`accelmem.backends` when the pipeline runs.
        planner: allocate-memory-addr's placement: ``"sequential"``, ``"greedy"``, ``"search"``.
        budget_ms: search budget per memory space and function.
        verify: run the IR verifier on the input and after every pass that changed the program.
        verify_plan: also prove the final memory plan (``tile_opt --verify-memory-plan``).
        filename: the name used in located verifier errors.
        after_pass: called as ``after_pass(pass_name, program)`` after each pass
            (``--print-after-all``).

    Raises:
        ValueError: unknown pass, planner or backend.
    """
    return _passes.pipeline(passes, backend or "", planner, float(budget_ms), verify,
                            verify_plan, filename, after_pass)


def verify_memory_plan(program) -> None:
    """Proves a planned program safe: no two live buffers overlap, addresses are aligned,
    spaces fit the backend's capacities. Raises :class:`PassError` otherwise."""
    _passes.verify_memory_plan(program)


def memory_plan(program) -> list:
    """Per function, a dict with its planned ``buffers`` (name, space, lifetime, address,
    size) and ``spaces`` (``{space: {high_water, load, capacity}}``)."""
    return list(_passes.memory_plan(program))
