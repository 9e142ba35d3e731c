from accelmem import backends as backends
from accelmem import ir as ir
from accelmem import passes as passes
from accelmem import policy as policy
from accelmem import sparse as sparse
from accelmem._errors import ParseError as ParseError
from accelmem._errors import PassError as PassError
from accelmem._errors import PlacementError as PlacementError

__version__: str
