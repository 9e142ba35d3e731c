"""Exception classes raised by accelmem (all are ValueError subclasses)."""

from typing import Optional

__all__ = ["ParseError", "PassError", "PlacementError"]


class ParseError(ValueError):
    """An error in tile-IR text, located as ``file:line:column``.

    Raised by :func:`accelmem.ir.parse` (and by the verifier). ``file``, ``line`` and
    ``column`` are None when the error has no location (e.g. a node made by a pass).
    """

    def __init__(self, message: str, file: Optional[str] = None, line: Optional[int] = None,
                 column: Optional[int] = None) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        if file is not None:
            text = "%s:%d:%d: error: %s" % (file, line, column, message)
        else:
            text = message
        super().__init__(text)

    def __reduce__(self):
        return (type(self), (self.message, self.file, self.line, self.column))


class PassError(ValueError):
    """A memory pass or the pipeline rejected a program.

    The message reads ``in function 'F': ...`` for pass errors, or
    ``IR verification failed after pass 'P': ...``.
    """

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class PlacementError(ValueError):
    """A placement is invalid: two live buffers overlap, an offset is misaligned, or a
    buffer ends above the capacity. The message names both buffers (by index)."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)
