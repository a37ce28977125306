"""The errors of ``bloge.mcp``: each names the MCP server it is about.

```
RunError
└── McpError               an MCP server could not be started, listed or called
    └── McpToolError       a tool answered with ``isError``: its text goes back to the model
```

Raised by an operator, either reaches the model as the tool's failure, and the run goes on.
"""

from __future__ import annotations

from bloge.core.errors import RunError


class McpError(RunError):
    """Something went wrong with the MCP server ``server``; the message starts with its name."""

    def __init__(self, server: str, message: str) -> None:
        self.server = server
        self.reason = message
        super().__init__(f"MCP server {server!r}: {message}")


class McpToolError(McpError):
    """The tool ``tool`` of ``server`` reported a failure (``isError``); ``reason`` is its
    text, as the server wrote it."""

    def __init__(self, server: str, tool: str, message: str) -> None:
        self.tool = tool
        super().__init__(server, f"tool {tool!r} failed: {message}")
