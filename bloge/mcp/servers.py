"""``McpServers``: the MCP servers of an application, started together and stopped together,
each tool an operator."""

from __future__ import annotations

import atexit
import logging
from collections.abc import Iterable
from dataclasses import dataclass

from bloge.core.errors import BlogeUsageError
from bloge.mcp.connection import McpConnection
from bloge.mcp.errors import McpError
from bloge.mcp.operators import McpToolOperator
from bloge.mcp.portal import Portal
from bloge.mcp.spec import McpServerSpec

log = logging.getLogger("bloge.mcp")


@dataclass(frozen=True, slots=True)
class ServerOutcome:
    """How starting one server went: its connection, or the error that stopped it."""

    spec: McpServerSpec
    connection: McpConnection | None
    error: McpError | None = None


class McpServers:
    """Starts each server of ``specs`` (on one portal thread); :meth:`operators` are their
    tools by operator name. A server that cannot start is kept with its error; whether that
    stops the application is the caller's decision (see :attr:`outcomes`)."""

    def __init__(self, specs: Iterable[McpServerSpec]) -> None:
        self._portal = Portal()
        self.outcomes: dict[str, ServerOutcome] = {}
        # A command that never closes its application still stops its servers cleanly.
        atexit.register(self.close)
        # They start together: the slowest bounds the start-up, not their sum.
        starting = [(spec, McpConnection(spec, self._portal)) for spec in specs]
        futures = [connection.begin() for _, connection in starting]
        for (spec, connection), future in zip(starting, futures, strict=True):
            try:
                future.result()
            except McpError as exc:
                log.warning("%s", exc)
                self.outcomes[spec.name] = ServerOutcome(spec, None, exc)
                continue
            self.outcomes[spec.name] = ServerOutcome(spec, connection)

    def connection(self, name: str) -> McpConnection:
        """The started server ``name``; ``KeyError`` when it is unknown or did not start."""
        found = self.outcomes[name].connection
        if found is None:
            raise KeyError(name)
        return found

    def operators(self) -> dict[str, McpToolOperator]:
        """Operator name → the operator of each usable tool of each started server."""
        found: dict[str, McpToolOperator] = {}
        for outcome in self.outcomes.values():
            connection = outcome.connection
            if connection is None:
                continue
            for tool in connection.listing.tools:
                name = outcome.spec.operator_name(tool.name)
                if name in found:
                    other = found[name].connection.name
                    raise BlogeUsageError(
                        f"MCP servers {other!r} and {outcome.spec.name!r} both name a tool "
                        f"{name!r}; rename one (bloge.mcp.servers.<name>.rename)")
                found[name] = McpToolOperator(connection, tool)
        return found

    def close(self) -> None:
        """Stop every server, then the portal thread."""
        atexit.unregister(self.close)
        for outcome in self.outcomes.values():
            if outcome.connection is not None:
                outcome.connection.close()
        self._portal.close()
