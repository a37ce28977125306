"""``OfflineProvider``: the default model, which needs no network and no key."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Sequence

from bloge.llm.chunks import response_chunks
from bloge.llm.messages import LlmMessage
from bloge.llm.offline.hooks import (
    DEFAULT_SWITCH_HINT,
    AnswerFormatter,
    AppHooks,
    ArgumentFiller,
)
from bloge.llm.offline.turn import reply_to
from bloge.llm.offline.typed import typed_answer
from bloge.llm.tokens import DEFAULT_TOKEN_ESTIMATOR, TokenEstimator
from bloge.llm.types import LlmChunk, LlmRequest, LlmResponse


class OfflineProvider:
    """A rule-based stand-in for a chat model, not a language model: it runs offline, without
    an API key, and gives the same answer to the same request every time.

    It does real work through an agent's tools. For the latest user message it picks the tool
    whose name, description and parameters best match the message's words (with a small table
    of everyday synonyms), fills the tool's required arguments from the message, and calls it;
    once the tool results are in the conversation, it answers from them (a result's own text
    and fields, or a failed tool's message). It calls at most one tool round per user message.
    With no tools, or none that fits, it answers directly, saying what it is and how to switch
    to a real provider. It cannot hold an open conversation. Asked for a typed answer (a
    request's ``output``), it answers with a value of that schema, filled from the tool results
    and the user's words where it can (see :mod:`bloge.llm.offline.typed`).

    It knows no application. An application teaches it through hooks, each tried in order:
    ``answer_formatters`` word the results it knows (see
    :class:`~bloge.llm.offline.AnswerFormatter`), ``argument_fillers`` give arguments the
    message cannot (see :class:`~bloge.llm.offline.ArgumentFiller`), and ``switch_hint`` says
    how to get a real model in that application's settings.

    ``estimator`` counts the tokens reported as usage (the request's messages and tool
    definitions as prompt tokens, the reply as completion tokens); by default the
    :class:`~bloge.llm.tokens.HeuristicTokenEstimator`.
    """

    __slots__ = ("_estimator", "_hooks")

    def __init__(
        self,
        *,
        estimator: TokenEstimator | None = None,
        answer_formatters: Sequence[AnswerFormatter] = (),
        argument_fillers: Sequence[ArgumentFiller] = (),
        switch_hint: str = DEFAULT_SWITCH_HINT,
    ) -> None:
        self._estimator = estimator or DEFAULT_TOKEN_ESTIMATOR
        self._hooks = AppHooks(tuple(answer_formatters), tuple(argument_fillers), switch_hint)

    async def chat(self, request: LlmRequest) -> LlmResponse:
        """The whole reply at once."""
        return self.respond(request)

    async def stream_chat(self, request: LlmRequest) -> AsyncGenerator[LlmChunk, None]:
        """The same reply as :meth:`chat`, streamed: word-sized text chunks, one chunk per tool
        call, and a last ``done`` chunk with the finish reason and usage."""
        for chunk in response_chunks(self.respond(request)):
            yield chunk

    def respond(self, request: LlmRequest) -> LlmResponse:
        """The reply to ``request``, computed synchronously; :meth:`chat` returns it."""
        reply = reply_to(request, self._hooks)
        content = reply.content
        if request.output is not None and not reply.tool_calls:
            # A typed request gets a value of its schema, filled from the conversation.
            value = typed_answer(request.output.schema, request.messages, content)
            content = json.dumps(value, ensure_ascii=False)
        completion = LlmMessage.assistant(content, reply.tool_calls)
        return LlmResponse(
            content=content,
            finish_reason=reply.finish_reason,
            prompt_tokens=self._prompt_tokens(request),
            completion_tokens=self._estimator.estimate(completion),
            tool_calls=reply.tool_calls,
        )

    def _prompt_tokens(self, request: LlmRequest) -> int:
        tokens = sum(self._estimator.estimate(m) for m in request.messages)
        if request.tools:
            schemas = [{"name": t.name, "description": t.description,
                        "parameters": dict(t.parameters)} for t in request.tools]
            tokens += self._estimator.estimate(LlmMessage.system(json.dumps(schemas, default=str)))
        return tokens

    def __repr__(self) -> str:
        return "OfflineProvider()"
