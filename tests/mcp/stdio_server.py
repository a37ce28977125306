"""An MCP server for the tests, over stdio, built on the SDK's low-level server.

``python stdio_server.py [MODE]``: ``ok`` (the default) lists ``search``, ``fail``, ``huge``
and ``crash``; ``bad-schema`` lists ``broken`` (an invalid input schema) too; ``silent``
reads its input and never answers, not even ``initialize``; ``silent-after-restart``
runs as ``ok`` once, then as ``silent`` (its first start leaves the file ``$MARKER``);
``noisy`` runs as ``ok`` after printing a line that is not JSON-RPC (with ``$SECRET``) on stdout.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as t
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string", "description": "What to look for"},
                   "limit": {"type": "integer", "minimum": 1}},
    "required": ["query"],
}
EMPTY: dict[str, Any] = {"type": "object", "properties": {}}


def tools(mode: str) -> list[t.Tool]:
    listed = [
        t.Tool(name="search", description="Search the docs for a query", input_schema=SEARCH_SCHEMA),
        t.Tool(name="fail", description="Always fails", input_schema=EMPTY),
        t.Tool(name="huge", description="Answers with two megabytes", input_schema=EMPTY),
        t.Tool(name="crash", description="Exits the server mid-call", input_schema=EMPTY),
        t.Tool(name="secret", description="Echoes the SECRET of its environment",
               input_schema=EMPTY),
        t.Tool(name="hang", description="Never answers", input_schema=EMPTY),
    ]
    if mode == "bad-schema":
        listed.append(t.Tool(name="broken", description="Its schema is not one",
                             input_schema={"type": "object", "properties": {"q": {"type": 12}}}))
    return listed


def main(mode: str) -> None:
    if mode == "silent-after-restart":
        marker = Path(os.environ["MARKER"])
        mode = "silent" if marker.exists() else "ok"
        marker.touch()
    if mode == "noisy":
        sys.stdout.write(f"docs server ready, SECRET={os.environ.get('SECRET', '')}\n")
        sys.stdout.flush()
        mode = "ok"
    if mode == "silent":
        for _ in sys.stdin:
            pass
        return

    async def list_tools(ctx: Any, params: Any) -> t.ListToolsResult:
        return t.ListToolsResult(tools=tools(mode))

    async def call_tool(ctx: Any, params: t.CallToolRequestParams) -> t.CallToolResult:
        arguments = params.arguments or {}
        match params.name:
            case "search":
                query = arguments.get("query", "")
                return t.CallToolResult(
                    content=[t.TextContent(text=f"found {query}")],
                    structured_content={"articleId": "KB-1", "summary": f"About {query}.",
                                        "pid": os.getpid()})
            case "fail":
                return t.CallToolResult(content=[t.TextContent(text="the index is offline")],
                                        is_error=True)
            case "huge":
                return t.CallToolResult(content=[t.TextContent(text="x" * 2_000_000)])
            case "crash":
                os._exit(3)
            case "hang":
                await anyio.Event().wait()
            case "secret":
                return t.CallToolResult(content=[t.TextContent(text=os.environ.get("SECRET", ""))])
        return t.CallToolResult(content=[t.TextContent(text=f"no tool {params.name}")],
                                is_error=True)

    server = Server("test-docs", on_list_tools=list_tools, on_call_tool=call_tool)

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "ok")
