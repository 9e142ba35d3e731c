from typing import Optional

class ParseError(ValueError):
    message: str
    file: Optional[str]
    line: Optional[int]
    column: Optional[int]
    def __init__(self, message: str, file: Optional[str] = ..., line: Optional[int] = ...,
                 column: Optional[int] = ...) -> None: ...

class PassError(ValueError):
    message: str
    def __init__(self, message: str) -> None: ...

class PlacementError(ValueError):
    message: str
    def __init__(self, message: str) -> None: ...
