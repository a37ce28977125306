"""bloge agents as the tools of an MCP server: input the user's message, output the answer.

:func:`agents_server` builds the SDK's low-level server (no logging set-up, no schema
inference) for any transport: ``bloge serve`` mounts it at ``/mcp`` (stateless streamable
HTTP, JSON answers), ``bloge mcp serve --stdio`` runs it over stdio.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import mcp_types
from mcp import MCPError
from mcp.server.lowlevel import Server

from bloge.agent import AgentDef
from bloge.core.errors import BlogeError
from bloge.core.suggest import did_you_mean_hint

#: The arguments of every agent tool.
MESSAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"message": {"type": "string", "description": "The user's message."}},
    "required": ["message"],
}


@dataclass(frozen=True, slots=True)
class AgentTool:
    """One agent as a tool: ``answer(message, request)`` runs it and returns its answer's
    text; ``request`` is the HTTP request the call came in (``None`` over stdio), whose
    caller the run is for."""

    name: str
    description: str
    answer: Callable[[str, Any], Awaitable[str]]


def describe_agent(definition: AgentDef) -> str:
    """What an MCP client (and its model) is told of an agent."""
    tools = ", ".join(tool.name for tool in definition.tools)
    return (f"Ask the bloge agent {definition.id!r} (model {definition.model}"
            + (f"; its tools: {tools}" if tools else "") + "): send the user's message, get "
            "its answer.")


def agents_server(tools: Sequence[AgentTool], *, name: str = "bloge") -> Server[Any]:
    """An MCP server whose tools are ``tools``. A run that fails is the tool's error
    (``isError``, the failure's text), so the calling model can react to it."""
    by_name = {tool.name: tool for tool in tools}

    async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(tools=[
            mcp_types.Tool(name=tool.name, description=tool.description,
                           input_schema=MESSAGE_SCHEMA) for tool in tools])

    async def call_tool(ctx: Any, params: mcp_types.CallToolRequestParams,
                        ) -> mcp_types.CallToolResult:
        tool = by_name.get(params.name)
        if tool is None:
            known = sorted(by_name)
            hint = did_you_mean_hint(params.name, known)
            raise MCPError(mcp_types.INVALID_PARAMS, f"no agent {params.name!r}{hint} "
                           f"(agents: {', '.join(known) or 'none'})")
        message = (params.arguments or {}).get("message")
        if not isinstance(message, str) or not message.strip():
            return _failed("the argument message must be the user's message, a non-empty "
                           "string")
        try:
            answer = await tool.answer(message, getattr(ctx, "request", None))
        except BlogeError as exc:
            return _failed(str(exc))
        return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=answer)])

    return Server(name, version=_version(), on_list_tools=list_tools, on_call_tool=call_tool,
                  get_tool_input_schema=lambda tool: MESSAGE_SCHEMA if tool in by_name
                  else None)


def _failed(text: str) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=text)], is_error=True)


def _version() -> str:
    try:
        return version("bloge")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0"
