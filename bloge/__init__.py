"""bloge for Python: declarative LLM agents.

The curated public surface. Everything here is stable API; modules not re-exported here
are internal and may change. Each name loads its module on first use (see
:mod:`bloge.core.exports`): ``import bloge`` costs no more than what is used.
"""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
    # The one-line agent: Agent(llm, tools).run(…), .stream(…), .resume(…), Agent.from_dsl(…);
    # its tools, its run store, and what a stream yields.
    from bloge.agent import Agent as Agent
    from bloge.agent import AgentStreamChunk as AgentStreamChunk
    from bloge.agent import Done as Done
    from bloge.agent import Handoff as Handoff
    from bloge.agent import OutputValidationError as OutputValidationError
    from bloge.agent import Partial as Partial
    from bloge.agent import SubAgentChunk as SubAgentChunk
    from bloge.agent import Token as Token
    from bloge.agent import Tool as Tool
    from bloge.agent import ToolEnd as ToolEnd
    from bloge.agent import ToolStart as ToolStart
    from bloge.store import open_store as open_store

    # isort: split
    # Agents as definitions: the DSL and its compiler, the builder, the graph they run.
    from bloge.agent import AgentBuilder as AgentBuilder
    from bloge.agent import AgentDef as AgentDef
    from bloge.agent import AgentDslCompiler as AgentDslCompiler
    from bloge.agent import AgentMemoryStrategy as AgentMemoryStrategy
    from bloge.agent import AgentToolRef as AgentToolRef
    from bloge.agent import ConversationMemory as ConversationMemory
    from bloge.core import Graph as Graph
    from bloge.core import JsonCodec as JsonCodec
    from bloge.core import Node as Node
    from bloge.core import Operator as Operator
    from bloge.core import OperatorContext as OperatorContext
    from bloge.core import OperatorMetadata as OperatorMetadata
    from bloge.core import OperatorRegistry as OperatorRegistry
    from bloge.dsl import DslCompiler as DslCompiler
    from bloge.dsl import DslExtensionProvider as DslExtensionProvider
    from bloge.dsl import Expression as Expression

    # isort: split
    # The loop as an operator, what a run takes and gives, and the callbacks it makes.
    from bloge.agent import AgentCallbackContext as AgentCallbackContext
    from bloge.agent import AgentCheckpoint as AgentCheckpoint
    from bloge.agent import AgentExecutionListener as AgentExecutionListener
    from bloge.agent import AgentInput as AgentInput
    from bloge.agent import AgentLoopOperator as AgentLoopOperator
    from bloge.agent import AgentOutput as AgentOutput
    from bloge.agent import AgentUsage as AgentUsage
    from bloge.agent import LlmCalledPayload as LlmCalledPayload
    from bloge.agent import LoopExitedPayload as LoopExitedPayload
    from bloge.agent import StreamingAgentLoopOperator as StreamingAgentLoopOperator
    from bloge.agent import ToolCompletedPayload as ToolCompletedPayload
    from bloge.agent import ToolDispatchedPayload as ToolDispatchedPayload
    from bloge.agent import TurnStartedPayload as TurnStartedPayload
    from bloge.agent import agent_operator as agent_operator

    # isort: split
    # Models: the provider protocol, the messages, and the chat operators the loop calls.
    from bloge.llm import LlmChatOperator as LlmChatOperator
    from bloge.llm import LlmMessage as LlmMessage
    from bloge.llm import LlmProvider as LlmProvider
    from bloge.llm import LlmStreamingChatOperator as LlmStreamingChatOperator
    from bloge.llm import ToolCall as ToolCall
    from bloge.llm import ToolDefinition as ToolDefinition

    # isort: split
    # Errors: one root, BlogeError; developer mistakes, run failures and DSL errors apart.
    from bloge.agent import AgentRunError as AgentRunError
    from bloge.agent import BudgetExceededError as BudgetExceededError
    from bloge.agent import GuardrailTrippedError as GuardrailTrippedError
    from bloge.agent import MaxTurnsExceededError as MaxTurnsExceededError
    from bloge.agent import RunPaused as RunPaused
    from bloge.core import BlogeError as BlogeError
    from bloge.core import BlogeUsageError as BlogeUsageError
    from bloge.core import CompileError as CompileError
    from bloge.core import DslError as DslError
    from bloge.core import DslSyntaxError as DslSyntaxError
    from bloge.core import ExpressionError as ExpressionError
    from bloge.core import OperatorInputError as OperatorInputError
    from bloge.core import ProviderError as ProviderError
    from bloge.core import RunError as RunError
    from bloge.core import UnknownOperatorError as UnknownOperatorError
else:
    __getattr__, __dir__, __all__ = lazy_exports(__name__)
    __all__ += ["__version__"]

__version__ = "0.1.0"
