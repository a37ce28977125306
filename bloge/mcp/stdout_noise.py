"""A stdio server's stdout lines that are not JSON-RPC, told as one warning naming the server.

The SDK's stdio client logs such a line (a banner, a stray ``print``) with
``logger.exception`` on ``mcp.client.stdio``: a pydantic traceback with the line in it, and
no word of which server wrote it. The line is skipped either way; this filter replaces that
record with one line on the ``bloge.mcp`` logger, naming the server, the line shortened and
the server's configured secrets masked.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable

from pydantic import ValidationError

log = logging.getLogger("bloge.mcp")

_SDK_LOGGER = "mcp.client.stdio"
_SHOWN = 200

#: The server whose stdio session runs in this context: its name, and how its text is masked.
reading: contextvars.ContextVar[tuple[str, Callable[[str], str]] | None] = \
    contextvars.ContextVar("bloge_mcp_reading", default=None)


class _NotJsonRpc(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        server = reading.get()
        error = record.exc_info[1] if record.exc_info else None
        if server is None or not isinstance(error, ValidationError):
            return True
        name, mask = server
        errors = error.errors(include_url=False)
        line = errors[0].get("input") if errors else None
        shown = mask(line if isinstance(line, str) else str(line))
        if len(shown) > _SHOWN:
            shown = shown[:_SHOWN] + "…"
        log.warning("MCP server %r wrote a line on stdout that is not JSON-RPC, skipped (its "
                    "logs belong on stderr): %r", name, shown)
        return False


_FILTER = _NotJsonRpc()


def install() -> None:
    """Put the filter on the SDK's stdio logger (once)."""
    sdk = logging.getLogger(_SDK_LOGGER)
    if _FILTER not in sdk.filters:
        sdk.addFilter(_FILTER)
