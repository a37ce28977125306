"""``McpServerSpec``: how to reach one MCP server, and the limits its calls run under."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from bloge.core.errors import BlogeUsageError
from bloge.core.masking import mask_url_credentials

Transport = Literal["stdio", "http"]


@dataclass(frozen=True, slots=True)
class McpServerSpec:
    """One MCP server, ``name`` its operators' prefix.

    ``transport="stdio"`` runs ``command`` with ``args`` (in ``cwd``, with ``env`` over a
    minimal inherited environment) and talks over its stdin/stdout; ``"http"`` speaks
    streamable HTTP to ``url``, sending ``headers`` with every request. ``startup_timeout``
    bounds starting, ``initialize`` and listing the tools; ``call_timeout`` each call;
    ``max_result_bytes`` the text and structured content of one result. ``rename`` maps a
    listed tool's name to the operator name it is registered under (default
    ``<name>.<tool>``). The repr never shows the values of ``env`` or ``headers``, which
    often hold secrets.
    """

    name: str
    transport: Transport = "stdio"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    startup_timeout: float = 10.0
    call_timeout: float | None = 60.0
    max_result_bytes: int = 1024 * 1024
    rename: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.transport == "stdio" and not self.command:
            raise BlogeUsageError(f"MCP server {self.name!r}: transport stdio needs a command")
        if self.transport == "http" and not (self.url or "").startswith(("http://",
                                                                          "https://")):
            raise BlogeUsageError(f"MCP server {self.name!r}: transport http needs the "
                                  "http:// or https:// url of the server's MCP endpoint")

    def operator_name(self, tool: str) -> str:
        """The name the tool ``tool`` is registered under."""
        return self.rename.get(tool, f"{self.name}.{tool}")

    def where(self) -> str:
        """Where the server runs, for messages: its command, or its URL without credentials."""
        if self.transport == "stdio":
            return " ".join([self.command or "", *self.args]).strip()
        return mask_url_credentials(self.url or "")

    def __repr__(self) -> str:
        hidden = {"env": sorted(self.env), "headers": sorted(self.headers)}
        return (f"McpServerSpec(name={self.name!r}, transport={self.transport!r}, "
                f"where={self.where()!r}, env keys={hidden['env']!r}, "
                f"header names={hidden['headers']!r})")
