"""dependency-injector, loaded without the web framework its wiring looks for.

Its ``containers`` module imports its ``wiring``, which imports ``starlette.requests`` where
starlette is installed (``bloge[server]`` installs it) to tell FastAPI's request parameters
apart in ``@inject`` wiring. bloge wires nothing: that import (starlette, anyio, a multipart
parser, the email and HTTP client modules) was a twentieth of ``bloge run``. It is kept out
while dependency-injector loads (wiring passes over an ``ImportError`` of it); starlette loads
as usual when ``bloge serve`` needs it.
"""

from __future__ import annotations

import sys

_WIRING_EXTRA = "starlette.requests"

if _WIRING_EXTRA in sys.modules:
    from dependency_injector import containers, providers
else:
    # A None in sys.modules makes an import of that name raise ImportError, as documented
    # (typeshed's sys.modules holds modules only).
    sys.modules[_WIRING_EXTRA] = None  # type: ignore[assignment]  # see above
    try:
        from dependency_injector import containers, providers
    finally:
        del sys.modules[_WIRING_EXTRA]

__all__ = ["containers", "providers"]
