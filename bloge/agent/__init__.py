"""The agent extension: definitions, their DSL compiler and builder, and the runtime.

These are the names users run agents with; the packages that plug into the loop (a run store,
a durable runner, a server) build on :mod:`bloge.agent.runtime`.
"""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
    from bloge.agent.agent_calls import AGENT_TOOL_PREFIX as AGENT_TOOL_PREFIX
    from bloge.agent.agent_calls import AgentCall as AgentCall
    from bloge.agent.agent_calls import check_agent_calls as check_agent_calls
    from bloge.agent.budget import Budget as Budget
    from bloge.agent.budget import BudgetPolicy as BudgetPolicy
    from bloge.agent.budget import with_budget_limits as with_budget_limits
    from bloge.agent.builder import AgentBuilder as AgentBuilder
    from bloge.agent.compiler import AgentDslCompiler as AgentDslCompiler
    from bloge.agent.definition import AgentDef as AgentDef
    from bloge.agent.definition import AgentToolRef as AgentToolRef
    from bloge.agent.extension import AgentExtensionProvider as AgentExtensionProvider
    from bloge.agent.facade import Agent as Agent
    from bloge.agent.facade import ChatModel as ChatModel
    from bloge.agent.facade import Tool as Tool
    from bloge.agent.facade import ToolUse as ToolUse
    from bloge.agent.guards import GuardCheck as GuardCheck
    from bloge.agent.guards import GuardDef as GuardDef
    from bloge.agent.guards import GuardVerdict as GuardVerdict
    from bloge.agent.guards import MaxLengthGuard as MaxLengthGuard
    from bloge.agent.guards import PiiGuard as PiiGuard
    from bloge.agent.guards import ToolArgsSchemaGuard as ToolArgsSchemaGuard
    from bloge.agent.guards import ToolDenylistGuard as ToolDenylistGuard
    from bloge.agent.guards import input_guard as input_guard
    from bloge.agent.guards import output_guard as output_guard
    from bloge.agent.guards import tool_call_guard as tool_call_guard
    from bloge.agent.handoffs import HandoffDef as HandoffDef
    from bloge.agent.listeners import AgentCallbackContext as AgentCallbackContext
    from bloge.agent.listeners import AgentExecutionListener as AgentExecutionListener
    from bloge.agent.listeners import GuardCheckedPayload as GuardCheckedPayload
    from bloge.agent.listeners import HandoffPayload as HandoffPayload
    from bloge.agent.listeners import LlmCalledPayload as LlmCalledPayload
    from bloge.agent.listeners import LoopExitedPayload as LoopExitedPayload
    from bloge.agent.listeners import MemorySummarizedPayload as MemorySummarizedPayload
    from bloge.agent.listeners import ToolCompletedPayload as ToolCompletedPayload
    from bloge.agent.listeners import ToolDispatchedPayload as ToolDispatchedPayload
    from bloge.agent.listeners import TurnStartedPayload as TurnStartedPayload
    from bloge.agent.loop import AgentCheckpoint as AgentCheckpoint
    from bloge.agent.loop import AgentInput as AgentInput
    from bloge.agent.loop import AgentLoopOperator as AgentLoopOperator
    from bloge.agent.loop import AgentOutput as AgentOutput
    from bloge.agent.loop import AgentRunError as AgentRunError
    from bloge.agent.loop import AgentStreamChunk as AgentStreamChunk
    from bloge.agent.loop import AgentUsage as AgentUsage
    from bloge.agent.loop import BudgetExceededError as BudgetExceededError
    from bloge.agent.loop import ChildWait as ChildWait
    from bloge.agent.loop import Decision as Decision
    from bloge.agent.loop import Done as Done
    from bloge.agent.loop import GuardrailTrippedError as GuardrailTrippedError
    from bloge.agent.loop import Handoff as Handoff
    from bloge.agent.loop import MaxTurnsExceededError as MaxTurnsExceededError
    from bloge.agent.loop import Partial as Partial
    from bloge.agent.loop import PendingCall as PendingCall
    from bloge.agent.loop import RunPaused as RunPaused
    from bloge.agent.loop import StreamingAgentLoopOperator as StreamingAgentLoopOperator
    from bloge.agent.loop import SubAgentChunk as SubAgentChunk
    from bloge.agent.loop import Token as Token
    from bloge.agent.loop import ToolEnd as ToolEnd
    from bloge.agent.loop import ToolStart as ToolStart
    from bloge.agent.materialize import agent_operator as agent_operator
    from bloge.agent.memory import AgentMemoryStrategy as AgentMemoryStrategy
    from bloge.agent.memory import ConversationMemory as ConversationMemory
    from bloge.agent.memory import LlmSummarizer as LlmSummarizer
    from bloge.agent.memory import MemoryStrategy as MemoryStrategy
    from bloge.agent.output.problems import OutputProblem as OutputProblem
    from bloge.agent.output.problems import OutputValidationError as OutputValidationError
    from bloge.agent.output.schema import OutputSchema as OutputSchema
    from bloge.agent.subagent import SubAgentError as SubAgentError
    from bloge.agent.subagent import SubAgentTool as SubAgentTool
    from bloge.llm.types import ToolDefinition as ToolDefinition
else:
    __getattr__, __dir__, __all__ = lazy_exports(__name__)
