"""``summary(n)`` memory: the last n messages verbatim, older ones folded into a summary."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence

from bloge.agent.memory.conversation import ConversationMemory, MemoryUsage
from bloge.agent.memory.strategy import AgentMemoryStrategy, MemoryStrategy
from bloge.agent.memory.units import Units
from bloge.core.context import OperatorContext
from bloge.core.registry import OperatorRegistry
from bloge.llm.messages import LlmMessage
from bloge.llm.operators import LLM_CHAT
from bloge.llm.types import LlmRequest, LlmResponse

SUMMARY_HEADER = "Summary of the earlier conversation:\n"
SUMMARIZE_PROMPT = (
    "Summarize the conversation below for the assistant who will continue it. Keep every "
    "fact, decision, identifier, tool result and open question that may matter later; "
    "drop pleasantries. Answer with the summary only."
)


class SummaryMemory(ConversationMemory):
    """Once more than ``threshold`` non-system messages accumulate, the oldest are replaced by
    one system message holding a summary (the previous summary is folded in, so it grows
    by refinement, not by concatenation). Without a summarizer the oldest are just dropped:
    the appendix's "degrades to the threshold windowed view"."""

    __slots__ = ("_calls", "_completion", "_prompt", "_summary", "_system", "_units",
                 "summarizer", "threshold")

    def __init__(
        self,
        initial: Iterable[LlmMessage],
        summarizer: ConversationMemory.Summarizer | None,
        threshold: int,
    ) -> None:
        if threshold < 1:
            raise ValueError(f"threshold must be >= 1, got {threshold}")
        self.summarizer = summarizer
        self.threshold = threshold
        self._system: list[LlmMessage] = []
        self._summary: LlmMessage | None = None
        self._units = Units(lambda message: 1)
        self._calls = self._prompt = self._completion = 0
        for message in initial:
            self.append(message)

    def append(self, message: LlmMessage) -> None:
        if message.role != "system":
            self._units.add(message)
        elif message.content.startswith(SUMMARY_HEADER) and self._summary is None:
            self._summary = message  # a resumed conversation brings its summary along
        else:
            self._system.append(message)

    async def prepare(self) -> None:
        """Fold the oldest messages into the summary when over the threshold. A summary not
        made (its call failed, a budget refused it) folds nothing: they stay in the view."""
        folded = self._units.oldest_beyond(self.threshold)
        if folded and self.summarizer is not None:
            previous = [self._summary] if self._summary is not None else []
            answer = self.summarizer.summarize([*previous, *folded])
            if inspect.isawaitable(answer):
                answer = await answer
            if isinstance(answer, LlmResponse):
                self._calls += 1
                self._prompt += answer.prompt_tokens
                self._completion += answer.completion_tokens
                answer = answer.content
            self._summary = LlmMessage.system(SUMMARY_HEADER + answer.strip())
        self._units.drop_oldest(len(folded))

    def messages(self) -> list[LlmMessage]:
        summary = [self._summary] if self._summary is not None else []
        return [*self._system, *summary, *self._units.messages()]

    @property
    def usage(self) -> MemoryUsage:
        return MemoryUsage(self._calls, self._prompt, self._completion)


class LlmSummarizer:
    """The usual summarizer: one chat call with the agent's model.

    ``chat`` is any ``async (LlmRequest) -> LlmResponse`` — a provider's ``chat`` method, or
    a registry's chat operator (:meth:`through`). In a run of an agent, each summary is one
    of the run's model calls: the run reserves it against its budgets, sends it with the
    ``max_tokens`` its own calls carry (:meth:`request`), and prices it (see
    :mod:`bloge.agent.loop.budget`).
    """

    __slots__ = ("chat", "model", "prompt")

    def __init__(
        self,
        chat: Callable[[LlmRequest], Awaitable[LlmResponse]],
        model: str,
        *,
        prompt: str = SUMMARIZE_PROMPT,
    ) -> None:
        self.chat = chat
        self.model = model
        self.prompt = prompt

    @classmethod
    def through(cls, registry: OperatorRegistry, model: str) -> LlmSummarizer:
        """Summaries with ``model`` through ``registry``'s ``llmChat`` operator, as the
        agent's own calls go (so a user's own chat operator serves them too)."""
        chat = registry.bound(LLM_CHAT, purpose="chat operator")

        async def call(request: LlmRequest) -> LlmResponse:
            response: LlmResponse = await chat.invoke(request, OperatorContext.root())
            return response

        return cls(call, model)

    @classmethod
    def of_agent(cls, memory: MemoryStrategy, registry: OperatorRegistry,
                 model: str) -> LlmSummarizer | None:
        """The summarizer of an agent whose memory is ``memory`` and whose model is
        ``model``: a ``summary(n)`` memory summarizes with that model, through ``registry``
        (:meth:`through`); another memory makes no summaries (``None``)."""
        if not isinstance(memory, AgentMemoryStrategy.Summary):
            return None
        return cls.through(registry, model)

    def request(self, messages: Sequence[LlmMessage], *,
                max_tokens: int | None = None) -> LlmRequest:
        """The request that summarizes ``messages``, its answer bounded by ``max_tokens``."""
        return LlmRequest(
            model=self.model,
            messages=(LlmMessage.system(self.prompt), LlmMessage.user(render(messages))),
            max_tokens=max_tokens,
        )

    def spends(self) -> bool:
        """Whether a run counts this summarizer's calls as its model calls (reserved,
        capped and priced): yes, but for a durable runner's summarizer replaying a run begun
        before they were."""
        return True

    async def summarize(self, messages: Sequence[LlmMessage]) -> LlmResponse:
        return await self.chat(self.request(messages))


def render(messages: Sequence[LlmMessage]) -> str:
    """A plain-text transcript of ``messages`` for a summarizing model."""
    lines: list[str] = []
    for message in messages:
        if message.role == "tool":
            lines.append(f"tool result ({message.tool_call_id}): {message.content}")
            continue
        if message.content:
            lines.append(f"{message.role}: {message.content}")
        lines.extend(f"{message.role} called {call.name}({call.arguments})"
                     for call in message.tool_calls)
    return "\n".join(lines)
