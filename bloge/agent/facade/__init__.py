"""The runtime chapter's facade: ``Agent(llm, tools).run(input)``, its ``Tool`` protocol, the
chapter's model shape, and the agent as an ASGI handler. One engine: an ``Agent`` is a thin
front of :class:`~bloge.agent.AgentLoopOperator`."""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
    from bloge.agent.facade.agent import DEFAULT_MODEL, MAX_TURNS_REACHED, Agent
    from bloge.agent.facade.handler import DEFAULT_MAX_BODY_BYTES, AgentHandler
    from bloge.agent.facade.model import ChatAnswer, ChatModel, ChatModelProvider, ToolUse
    from bloge.agent.facade.tools import Tool
else:
    __getattr__, __dir__ = lazy_exports(__name__, {
        "bloge.agent.facade.agent": ["DEFAULT_MODEL", "MAX_TURNS_REACHED", "Agent"],
        "bloge.agent.facade.handler": ["DEFAULT_MAX_BODY_BYTES", "AgentHandler"],
        "bloge.agent.facade.model": ["ChatAnswer", "ChatModel", "ChatModelProvider", "ToolUse"],
        "bloge.agent.facade.tools": ["Tool"],
    })

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MODEL",
    "MAX_TURNS_REACHED",
    "Agent",
    "AgentHandler",
    "ChatAnswer",
    "ChatModel",
    "ChatModelProvider",
    "Tool",
    "ToolUse",
]
