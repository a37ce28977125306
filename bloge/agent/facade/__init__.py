"""The runtime chapter's facade: ``Agent(llm, tools).run(input)``, its ``Tool`` protocol, the
chapter's model shape, and the agent as an ASGI handler. One engine: an ``Agent`` is a thin
front of :class:`~bloge.agent.AgentLoopOperator`."""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
    from bloge.agent.facade.agent import DEFAULT_MODEL as DEFAULT_MODEL
    from bloge.agent.facade.agent import MAX_TURNS_REACHED as MAX_TURNS_REACHED
    from bloge.agent.facade.agent import Agent as Agent
    from bloge.agent.facade.handler import DEFAULT_MAX_BODY_BYTES as DEFAULT_MAX_BODY_BYTES
    from bloge.agent.facade.handler import AgentHandler as AgentHandler
    from bloge.agent.facade.model import ChatAnswer as ChatAnswer
    from bloge.agent.facade.model import ChatModel as ChatModel
    from bloge.agent.facade.model import ChatModelProvider as ChatModelProvider
    from bloge.agent.facade.model import ToolUse as ToolUse
    from bloge.agent.facade.tools import Tool as Tool
else:
    __getattr__, __dir__, __all__ = lazy_exports(__name__)
