"""The agent runtime: the ReAct loop, its records, streaming and checkpoints."""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
    from bloge.agent.loop.approval import Decision as Decision
    from bloge.agent.loop.approval import PendingCall as PendingCall
    from bloge.agent.loop.checkpoint import AgentCheckpoint as AgentCheckpoint
    from bloge.agent.loop.chunks import AgentStreamChunk as AgentStreamChunk
    from bloge.agent.loop.chunks import Done as Done
    from bloge.agent.loop.chunks import Handoff as Handoff
    from bloge.agent.loop.chunks import Partial as Partial
    from bloge.agent.loop.chunks import SubAgentChunk as SubAgentChunk
    from bloge.agent.loop.chunks import Token as Token
    from bloge.agent.loop.chunks import ToolEnd as ToolEnd
    from bloge.agent.loop.chunks import ToolStart as ToolStart
    from bloge.agent.loop.errors import AgentRunError as AgentRunError
    from bloge.agent.loop.errors import BudgetExceededError as BudgetExceededError
    from bloge.agent.loop.errors import GuardrailTrippedError as GuardrailTrippedError
    from bloge.agent.loop.errors import MaxTurnsExceededError as MaxTurnsExceededError
    from bloge.agent.loop.operator import AgentLoopOperator as AgentLoopOperator
    from bloge.agent.loop.pause import ChildWait as ChildWait
    from bloge.agent.loop.pause import RunPaused as RunPaused
    from bloge.agent.loop.records import AgentInput as AgentInput
    from bloge.agent.loop.records import AgentOutput as AgentOutput
    from bloge.agent.loop.records import AgentUsage as AgentUsage
    from bloge.agent.loop.streaming import StreamingAgentLoopOperator as StreamingAgentLoopOperator
else:
    __getattr__, __dir__, __all__ = lazy_exports(__name__)
