"""``bloge.mcp``: the MCP servers whose tools the agents may use."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import ByteSize, Field, model_validator

from bloge_config.fields import Secret, ServiceUrl
from bloge_config.models.section import SECTION, MaskedSection, PositiveDuration, ResponseBytes

McpServerName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
"""A name that can start a DSL operator reference (``docs`` of ``docs.search``)."""


class McpServerSettings(MaskedSection):
    """``bloge.mcp.servers.<name>``: an MCP server whose tools become operators named
    ``<name>.<tool>``. A server that cannot start stops the application unless ``required``
    is false."""

    model_config = SECTION

    enabled: bool = Field(default=True, description="false: the server is ignored")
    transport: Literal["stdio", "http"] = Field(
        default="stdio", description="stdio: run command; http: speak streamable HTTP to url")
    command: str | None = Field(default=None, description="The program of a stdio server "
                                "(python: the Python bloge runs on)")
    args: tuple[str, ...] = Field(default=(), description="The arguments of command")
    env: dict[str, Secret] = Field(default_factory=dict, description="Variables set over a "
                                   "minimal inherited environment; secrets, never shown")
    cwd: Path | None = Field(default=None, description="The folder command runs in; null: "
                             "the project's")
    url: ServiceUrl | None = Field(default=None, description="The MCP endpoint of an http "
                                   "server (http:// or https://)")
    headers: dict[str, Secret] = Field(default_factory=dict, description="HTTP headers sent "
                                       "to an http server; secrets, never shown")
    startup_timeout: PositiveDuration = Field(
        default=10.0, description="Seconds to start the server, initialize and list its tools")
    call_timeout: PositiveDuration | None = Field(default=60.0, description="Seconds one "
                                                  "tool call may take; null: no bound")
    max_result_bytes: ResponseBytes = Field(default=ByteSize(1024 * 1024),
                                            description="Largest tool result, in bytes")
    rename: dict[str, str] = Field(default_factory=dict, description="Tool name → the "
                                   "operator name it is registered under")
    required: bool = Field(default=True, description="false: a server that cannot start is "
                           "left out (its tools missing) instead of stopping the application")

    @model_validator(mode="after")
    def _complete(self) -> McpServerSettings:
        if self.transport == "stdio" and not self.command:
            raise ValueError("transport stdio needs command: the program that runs the server")
        if self.transport == "http" and not (self.url or "").startswith(("http://",
                                                                            "https://")):
            raise ValueError("transport http needs url: the http:// or https:// address of "
                             "the server's MCP endpoint")
        return self


class McpSettings(MaskedSection):
    """``bloge.mcp``: the MCP servers whose tools the agents may use, by name (extra
    ``[mcp]``)."""

    model_config = SECTION

    servers: dict[McpServerName, McpServerSettings] = Field(
        default_factory=dict, description="The servers, by name (the first part of their "
        "operators' names)")
