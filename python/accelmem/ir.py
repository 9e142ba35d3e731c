"""The tile IR: parse and print text, convert to and from protobuf, inspect programs.

Example::

    from accelmem import ir
    program = ir.parse(text, filename="kernel.tile")
    for function in program.functions:
        for tile in function.tiles:
            print(tile.name, tile.shape, tile.dtype, tile.space)
    assert ir.parse(program.print()) == program
    same = ir.Program.from_proto(program.to_proto())

Programs are immutable; passes return new programs. Views (Function, Stmt, Value, MemRef) keep
the nodes they show alive, so they stay valid on their own.
"""

from accelmem._accelmem import ir as _ir
from accelmem._errors import ParseError

Program = _ir.Program
Function = _ir.Function
Stmt = _ir.Stmt
Value = _ir.Value
MemRef = _ir.MemRef

__all__ = ["Function", "MemRef", "ParseError", "Program", "Stmt", "Value", "parse",
           "parse_file"]


def parse(text: str, filename: str = "<input>", *, verify: bool = False) -> Program:
    """Parses tile-IR text into a :class:`Program`.

    Args:
        text: the program text.
        filename: the name used in error locations.
        verify: also run the IR verifier (type and MemRef rules).

    Raises:
        ParseError: on the first error, with ``.file``, ``.line``, ``.column`` and ``.message``.
    """
    return _ir.parse(text, filename, verify)


def parse_file(path: str, *, verify: bool = False) -> Program:
    """Reads and parses a ``.tile`` file (errors name ``path``)."""
    with open(path, "r", encoding="utf-8") as f:
        return _ir.parse(f.read(), str(path), verify)
