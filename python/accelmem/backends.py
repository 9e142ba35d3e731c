"""The SoC backends and the process-wide backend selection.

A backend gives the memory passes an allocator policy, tile byte sizes and memory capacities.
Without one the passes use the default policy and skip capacity checks.

Example::

    from accelmem import backends
    backends.names()                      # ['ascend910b', 'ascend950']
    with backends.use("ascend910b"):
        program = passes.allocate_memory_addr()(program)
    backends.capacity("ascend950", "Vec")

The selection is global to the process (as upstream); :func:`accelmem.passes.pipeline` with a
``backend=`` selects its backend only while it runs.
"""

import contextlib
from typing import Iterator, List, Optional

from accelmem._accelmem import backends as _backends

__all__ = ["ASCEND910B", "ASCEND950", "capacity", "current", "names", "reset", "set", "use"]

ASCEND910B = "ascend910b"
ASCEND950 = "ascend950"


def names() -> List[str]:
    """The registered backend names, sorted."""
    return list(_backends.names())


def set(name: Optional[str]) -> None:  # pylint: disable=redefined-builtin
    """Selects backend ``name`` process-wide; None, ``""`` or ``"none"`` resets.

    Raises:
        ValueError: for an unknown name (the message lists the known ones).
    """
    _backends.set(name or "none")


def reset() -> None:
    """Deselects the backend (default policy, default sizes, no capacity check)."""
    _backends.set("none")


def current() -> Optional[str]:
    """The selected backend's name, or None."""
    return _backends.current()


@contextlib.contextmanager
def use(name: Optional[str]) -> Iterator[None]:
    """Selects ``name`` for the duration of a ``with`` block, then restores the previous one."""
    previous = current()
    set(name)
    try:
        yield
    finally:
        set(previous)


def capacity(name: str, space: str) -> int:
    """Capacity in bytes of memory ``space`` ('Vec', 'Mat', 'Left', 'Right', 'Acc', 'Bias')
    on backend ``name``; 0 when unknown.

    Raises:
        ValueError: unknown backend or space.
    """
    return _backends.capacity(name, space)
