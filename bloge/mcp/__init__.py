"""``bloge.mcp``: the Model Context Protocol both ways (``pip install 'bloge[mcp]'``).

Tools of MCP servers become operators (``<server>.<tool>``, with the server's input schema)::

    servers = McpServers([McpServerSpec("docs", command="python", args=("docs_server.py",))])
    registry = OperatorRegistry(servers.operators())   # docs.search, …
    …
    servers.close()

and bloge agents become the tools of an MCP server (:func:`agents_server`), which
``bloge serve`` mounts at ``/mcp`` and ``bloge mcp serve --stdio`` runs over stdio.
"""

try:
    import mcp  # noqa: F401 -- the extra's presence, checked once
except ImportError as exc:  # pragma: no cover - depends on the extras installed
    raise ImportError("bloge.mcp needs the MCP SDK: pip install 'bloge[mcp]'") from exc

from bloge.mcp.agents import AgentTool, agents_server, describe_agent
from bloge.mcp.connection import McpConnection
from bloge.mcp.errors import McpError, McpToolError
from bloge.mcp.listing import Listing, McpTool, SkippedTool
from bloge.mcp.operators import McpToolOperator
from bloge.mcp.servers import McpServers, ServerOutcome
from bloge.mcp.spec import McpServerSpec

__all__ = [
    "AgentTool",
    "Listing",
    "McpConnection",
    "McpError",
    "McpServerSpec",
    "McpServers",
    "McpTool",
    "McpToolError",
    "McpToolOperator",
    "ServerOutcome",
    "SkippedTool",
    "agents_server",
    "describe_agent",
]
