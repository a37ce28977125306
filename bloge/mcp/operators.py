"""``McpToolOperator``: one tool of an MCP server, as an operator an agent's tool can name.

Its metadata carries the tool's description and the server's input schema, which becomes the
agent tool's JSON schema (the properties an ``input`` block passes through keep theirs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bloge.core.context import OperatorContext
from bloge.core.errors import OperatorInputError
from bloge.core.operator import OperatorMetadata
from bloge.mcp.connection import McpConnection
from bloge.mcp.listing import McpTool


class McpToolOperator:
    """Calls ``tool`` on ``connection`` with the operator's input (a JSON object)."""

    def __init__(self, connection: McpConnection, tool: McpTool) -> None:
        self.connection = connection
        self.tool = tool
        self.metadata = OperatorMetadata(
            prompt_hint=tool.description or f"The {tool.name} tool of the "
            f"{connection.name} MCP server.",
            input_schema=tool.input_schema)

    async def aexecute(self, input: Any, ctx: OperatorContext | None = None) -> Any:
        if input is None:
            input = {}
        if not isinstance(input, Mapping):
            raise OperatorInputError(f"MCP tool {self.connection.name}.{self.tool.name} takes "
                                     f"a JSON object of arguments, got {type(input).__name__}")
        return await self.connection.call(self.tool.name, input)

    def __repr__(self) -> str:
        return f"<McpToolOperator {self.connection.name}.{self.tool.name}>"
