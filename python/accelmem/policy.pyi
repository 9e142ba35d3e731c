import os
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from accelmem._errors import PlacementError as PlacementError

_Ints = npt.ArrayLike

class PlacementPlan:
    @property
    def offsets(self) -> npt.NDArray[np.int64]: ...
    height: int
    load: int
    within_capacity: bool
    method: str
    search_nodes: int
    lower_bound: int
    proven_optimal: bool

def place(lower: _Ints, upper: _Ints, size: _Ints, *, alignment: int = ...,
          capacity: Optional[int] = ..., mode: str = ...,
          budget_ms: float = ...) -> npt.NDArray[np.int64]: ...
def plan(lower: _Ints, upper: _Ints, size: _Ints, *, alignment: int = ...,
         capacity: Optional[int] = ..., mode: str = ..., budget_ms: float = ..., seed: int = ...,
         search_threads: int = ...) -> PlacementPlan: ...
def load(lower: _Ints, upper: _Ints, size: _Ints) -> int: ...
def height(lower: _Ints, upper: _Ints, size: _Ints, offsets: _Ints) -> int: ...
def check(lower: _Ints, upper: _Ints, size: _Ints, offsets: _Ints, *, alignment: int = ...,
          capacity: Optional[int] = ...) -> None: ...
def load_csv(path: str) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64],
                                 npt.NDArray[np.int64]]: ...
def solve(problem: Union[Dict[str, Any], str, os.PathLike[str]],
          *, budget_ms: float = ...) -> Dict[str, Any]: ...
