"""The LLM provider SPI: neutral messages, requests, responses, stream chunks, providers,
the chat operators the agent loop calls, token estimation, and test providers."""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

# The HTTP providers pull in httpx and tenacity: like every name here, they load on first use,
# so that importing bloge (a CLI's --help, a test of the DSL) does not pay for them.
if TYPE_CHECKING:
    from bloge.llm.messages import ContentPart as ContentPart
    from bloge.llm.messages import ImagePart as ImagePart
    from bloge.llm.messages import LlmMessage as LlmMessage
    from bloge.llm.messages import Role as Role
    from bloge.llm.messages import TextPart as TextPart
    from bloge.llm.messages import ToolCall as ToolCall
    from bloge.llm.operators import LLM_CHAT as LLM_CHAT
    from bloge.llm.operators import LLM_STREAMING_CHAT as LLM_STREAMING_CHAT
    from bloge.llm.operators import LlmChatOperator as LlmChatOperator
    from bloge.llm.operators import LlmStreamingChatOperator as LlmStreamingChatOperator
    from bloge.llm.provider import LlmProvider as LlmProvider
    from bloge.llm.providers import AnthropicProvider as AnthropicProvider
    from bloge.llm.providers import ClaudeProvider as ClaudeProvider
    from bloge.llm.providers import OpenAIChatProvider as OpenAIChatProvider
    from bloge.llm.providers import RetryPolicy as RetryPolicy
    from bloge.llm.testing import FunctionProvider as FunctionProvider
    from bloge.llm.testing import ScriptedProvider as ScriptedProvider
    from bloge.llm.testing import tool_call_response as tool_call_response
    from bloge.llm.tokens import HeuristicTokenEstimator as HeuristicTokenEstimator
    from bloge.llm.tokens import TokenEstimator as TokenEstimator
    from bloge.llm.types import LlmChunk as LlmChunk
    from bloge.llm.types import LlmRequest as LlmRequest
    from bloge.llm.types import LlmResponse as LlmResponse
    from bloge.llm.types import ToolDefinition as ToolDefinition
else:
    __getattr__, __dir__, __all__ = lazy_exports(__name__)
