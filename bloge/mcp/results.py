"""From a ``CallToolResult`` to a tool result: structured content as it is, else the text of
its content blocks; ``isError`` becomes :class:`~bloge.mcp.errors.McpToolError`; a result
larger than its server's ``max_result_bytes`` is refused."""

from __future__ import annotations

import json
from typing import Any, assert_never

import mcp_types

from bloge.mcp.errors import McpError, McpToolError


def tool_result(server: str, tool: str, result: mcp_types.CallToolResult, *,
                max_bytes: int) -> Any:
    """The value the agent's tool gets for ``result``."""
    text = "\n".join(_block_text(block) for block in result.content)
    size = len(text.encode())
    if result.structured_content is not None:
        size += len(json.dumps(result.structured_content, ensure_ascii=False).encode())
    if size > max_bytes:
        raise McpError(server, f"tool {tool!r} returned {size} bytes, more than its limit of "
                       f"{max_bytes} (bloge.mcp.servers.{server}.max-result-bytes)")
    if result.is_error:
        raise McpToolError(server, tool, text or "the tool reported an error without text")
    if result.structured_content is not None:
        return result.structured_content
    return text


def _block_text(block: mcp_types.ContentBlock) -> str:
    match block:
        case mcp_types.TextContent(text=text):
            return text
        case mcp_types.ImageContent(mime_type=mime) | mcp_types.AudioContent(mime_type=mime):
            return f"[{block.type} content, {mime}, not shown]"
        case mcp_types.ResourceLink(uri=uri):
            return f"[resource {uri}]"
        case mcp_types.EmbeddedResource(resource=resource):
            inner = getattr(resource, "text", None)
            return inner if isinstance(inner, str) else f"[resource {resource.uri}, not shown]"
    assert_never(block)
