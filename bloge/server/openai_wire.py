"""OpenAI's Chat Completions format, as pure translations: a request body → the run it asks
for (:func:`chat_request`); a run's answer → a ``chat.completion`` (:func:`completion`); its
tokens and its end → ``chat.completion.chunk`` documents (:class:`ChunkWriter`).

What a request may ask: ``model`` names the agent; ``messages`` — system (or developer),
user, assistant and tool messages, their content text or a list of parts (text; images by
URL in user messages) — are the run's input, after the agent's own system prompt; ``stream``
and ``stream_options.include_usage`` are honoured. How the model answers — ``temperature``,
``max_completion_tokens`` (or the older ``max_tokens``), ``stop`` and ``seed`` — applies to
every model call of the run, in place of the agent's own (the run's answer may take several
calls: tools run between them). ``response_format`` (``json_object``, ``json_schema``) asks
for a typed answer (:mod:`bloge.server.response_format`). The request's own ``tools``
(function tools, read by :mod:`bloge.server.openai_tools` with ``tool_choice`` and
``parallel_tool_calls``) are the client's: a completion whose model calls them ends with
``finish_reason: "tool_calls"`` and the calls (:class:`Answer`, streamed as OpenAI streams
them). ``top_p`` and ``user`` are checked for their type and not applied, and fields this
module does not know are ignored (the SDK evolves). What cannot be honoured is refused,
naming the field: several choices (``n`` > 1), the older ``functions`` (send ``tools``),
``logprobs``, ``stream_options`` without ``stream``, ``max_tokens`` and
``max_completion_tokens`` that differ.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bloge.agent import AgentInput, AgentOutput, AgentUsage, MaxTurnsExceededError
from bloge.llm import ContentPart, ImagePart, LlmMessage, TextPart, ToolCall
from bloge.server.inputs import BadRequestError, unanswered
from bloge.server.openai_tools import ClientTools, client_tools
from bloge.server.response_format import requested_output

#: Where an image in a user message may come from: the model's provider fetches it, never
#: this server.
IMAGE_SCHEMES = ("https://", "http://", "data:")
#: The most stop sequences a request may send, as OpenAI's API takes.
_MOST_STOPS = 4


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)  # "yes" is not true, nor "1" a number

    include_usage: bool = False


class CompletionBody(BaseModel):
    """``POST /v1/chat/completions``: the fields read or refused (see the module docs)."""

    model_config = ConfigDict(extra="ignore", strict=True)  # "yes" is not true, nor "1" a number

    model: str = Field(min_length=1)
    messages: list[dict[str, Any]] = Field(min_length=1)
    stream: bool | None = None
    stream_options: StreamOptions | None = None
    n: int | None = Field(default=None, ge=1)
    # Read by openai_tools, which names the item at fault (tools[2].function.name).
    tools: list[Any] | None = None
    tool_choice: Any = None
    parallel_tool_calls: bool | None = None
    functions: list[dict[str, Any]] | None = None
    response_format: dict[str, Any] | None = None
    logprobs: bool | None = None
    # How the model answers, for every model call of the run.
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    stop: str | list[str] | None = None  # OpenAI takes up to 4 (checked with the rest)
    seed: int | None = None
    # Checked, not applied.
    top_p: float | None = Field(default=None, ge=0, le=1)
    user: str | None = None


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """The run a completion request asks for."""

    agent_id: str
    input: AgentInput
    stream: bool
    include_usage: bool
    sampling: Mapping[str, Any] = field(default_factory=dict)
    """The agent's fields this run changes (``temperature``, ``max_tokens``, ``stop``,
    ``seed``): what the request set."""
    tools: ClientTools = field(default_factory=ClientTools)
    """The client's own tools, and how the model may call tools."""


def chat_request(body: CompletionBody) -> ChatRequest:
    """The run ``body`` asks for; :class:`BadRequestError` naming the field it cannot have."""
    refused = _refused(body)
    if refused is not None:
        param, message = refused
        raise BadRequestError(f"{param}: {message}", param=param)
    tools = client_tools(body.tools, tool_choice=body.tool_choice,
                         parallel_tool_calls=body.parallel_tool_calls)
    return ChatRequest(body.model, agent_input(body.messages), bool(body.stream),
                       body.stream_options is not None and body.stream_options.include_usage,
                       sampling_of(body), tools)


def sampling_of(body: CompletionBody) -> dict[str, Any]:
    """The agent's fields ``body`` changes for its run: what it set, nothing else."""
    limit = body.max_completion_tokens or body.max_tokens
    stop = [body.stop] if isinstance(body.stop, str) else body.stop
    changes: dict[str, Any] = {"temperature": body.temperature, "max_tokens": limit,
                               "stop": tuple(stop) if stop else None, "seed": body.seed,
                               "output": requested_output(body.response_format)}
    return {name: value for name, value in changes.items() if value is not None}


def _refused(body: CompletionBody) -> tuple[str, str] | None:
    if body.n is not None and body.n > 1:
        return "n", "one choice per request (n=1): each request is one run of the agent"
    if body.functions:
        return "functions", ('the older "functions" is not supported: send them as "tools" '
                             '([{"type": "function", "function": {…}}])')
    if body.max_tokens and body.max_completion_tokens and (
            body.max_tokens != body.max_completion_tokens):
        return "max_tokens", ("max_tokens and max_completion_tokens differ; send one "
                              "(max_tokens is the older name of max_completion_tokens)")
    if body.stop == "":
        return "stop", "a stop sequence must not be empty"
    if isinstance(body.stop, list):
        if len(body.stop) > _MOST_STOPS:
            return "stop", f"up to {_MOST_STOPS} stop sequences, got {len(body.stop)}"
        if not all(body.stop):
            return "stop", "a stop sequence must not be empty"
    if body.logprobs:
        return "logprobs", "log probabilities are not available from an agent"
    if body.stream_options is not None and not body.stream:
        return "stream_options", "stream_options is only allowed with stream: true"
    return None


def agent_input(messages: Sequence[Mapping[str, Any]]) -> AgentInput:
    """Chat Completions messages as the run's input; each tool call answered by its tool
    message, as every provider requires (:func:`~bloge.server.inputs.unanswered`)."""
    read = tuple(_message(m, f"messages[{i}]") for i, m in enumerate(messages))
    unpaired = unanswered(read)
    if unpaired is not None:
        index, why = unpaired
        raise _bad(f"messages[{index}]", why)
    return AgentInput(read)


def _message(message: Mapping[str, Any], where: str) -> LlmMessage:
    content = message.get("content")
    match message.get("role"):
        case "system" | "developer":
            return LlmMessage.system(_text(content, f"{where}.content"))
        case "user":
            return LlmMessage.user(_user_content(content, f"{where}.content"))
        case "assistant":
            return LlmMessage.assistant(_text(content, f"{where}.content", optional=True),
                                        _tool_calls(message.get("tool_calls"),
                                                    f"{where}.tool_calls"))
        case "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise _bad(f"{where}.tool_call_id", "a tool message needs the id of its call")
            return LlmMessage.tool(call_id, _text(content, f"{where}.content"))
    raise _bad(f"{where}.role", "the role must be system, developer, user, assistant or tool")


def _text(content: object, where: str, *, optional: bool = False) -> str:
    if isinstance(content, str):
        return content
    if content is None and optional:
        return ""
    if isinstance(content, list):
        texts = []
        for index, part in enumerate(content):
            if not (isinstance(part, dict) and part.get("type") == "text"
                    and isinstance(part.get("text"), str)):
                raise _bad(f"{where}[{index}]", 'a part here must be {"type": "text", "text": …}')
            texts.append(part["text"])
        return "".join(texts)
    raise _bad(where, "the content must be a string or a list of text parts")


def _user_content(content: object, where: str) -> str | tuple[ContentPart, ...]:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise _bad(where, "the content must be a string or a list of text and image_url parts")
    parts = tuple(_part(part, f"{where}[{index}]") for index, part in enumerate(content))
    if all(isinstance(part, TextPart) for part in parts):
        return "".join(part.text for part in parts if isinstance(part, TextPart))
    return parts


def _part(part: object, where: str) -> ContentPart:
    if isinstance(part, dict):
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            return TextPart(part["text"])
        image = part.get("image_url")
        if part.get("type") == "image_url" and isinstance(image, dict):
            url = image.get("url")
            if isinstance(url, str) and url.startswith(IMAGE_SCHEMES):
                return ImagePart(url)
            raise _bad(f"{where}.image_url.url", "an image URL must be https:, http: or data:")
    raise _bad(where, "a part must be a text part or an image_url part")


def _tool_calls(calls: object, where: str) -> tuple[ToolCall, ...]:
    if calls is None:
        return ()
    if not isinstance(calls, list):
        raise _bad(where, "tool_calls must be a list")
    made = []
    for index, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        if not (isinstance(call, dict) and isinstance(call.get("id"), str)
                and isinstance(function, dict) and isinstance(function.get("name"), str)
                and isinstance(function.get("arguments", ""), str)):
            raise _bad(f"{where}[{index}]", 'a tool call must be {"id": …, "type": "function", '
                       '"function": {"name": …, "arguments": …}}')
        made.append(ToolCall(call["id"], function["name"], function.get("arguments") or "{}"))
    return tuple(made)


def _bad(param: str, message: str) -> BadRequestError:
    return BadRequestError(f"{param}: {message}", param=param)


@dataclass(frozen=True, slots=True)
class Answer:
    """What a run answered, as a completion tells it: with ``tool_calls``, the calls of the
    client's tools the run waits on (``finish_reason`` ``"tool_calls"``)."""

    content: str
    finish_reason: str
    usage: AgentUsage
    tool_calls: tuple[ToolCall, ...] = ()


def calling(content: str, calls: Sequence[ToolCall], used: AgentUsage) -> Answer:
    """A run that waits on the client's tools: what the model said with its calls, and the
    calls the client runs."""
    return Answer(content, "tool_calls", used, tuple(calls))


def answer(output: AgentOutput) -> Answer:
    """A finished run's answer: ``"length"`` when the model's last answer was cut short,
    else ``"stop"`` (the loop stopped, or its exit condition held)."""
    cut = output.exit_reason == "stop" and output.finish_reason == "length"
    return Answer(output.content, "length" if cut else "stop", output.usage)


def out_of_turns(error: MaxTurnsExceededError) -> Answer:
    """A run out of turns: ``"length"``, with what the model said last."""
    said = [m.content for m in error.checkpoint.conversation if m.role == "assistant"]
    return Answer(said[-1] if said else "", "length", error.checkpoint.usage)


def usage(used: AgentUsage) -> dict[str, int]:
    """The run's tokens, all its model calls together."""
    return {"prompt_tokens": used.prompt_tokens, "completion_tokens": used.completion_tokens,
            "total_tokens": used.total_tokens}


def completion(completion_id: str, model: str, created: int, said: Answer) -> dict[str, Any]:
    """A ``chat.completion`` document."""
    message: dict[str, Any] = {"role": "assistant", "content": said.content, "refusal": None}
    if said.tool_calls:  # as OpenAI answers them: no text is null, not ""
        message["content"] = said.content or None
        message["tool_calls"] = [tool_call(call) for call in said.tool_calls]
    return {"id": completion_id, "object": "chat.completion", "created": created,
            "model": model, "system_fingerprint": None,
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": said.finish_reason}],
            "usage": usage(said.usage)}


def tool_call(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "type": "function",
            "function": {"name": call.name, "arguments": call.arguments or "{}"}}


#: How much of a call's arguments one streamed chunk carries, in characters.
ARGUMENTS_PIECE = 64


def tool_call_deltas(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    """The ``delta`` of each chunk that streams ``calls``, as OpenAI streams them: per call,
    its index, id, type and name with empty arguments, then its arguments in pieces."""
    deltas = []
    for index, call in enumerate(calls):
        deltas.append({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                                       "function": {"name": call.name, "arguments": ""}}]})
        arguments = call.arguments or "{}"
        deltas.extend({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
                      for piece in _pieces(arguments, ARGUMENTS_PIECE))
    return deltas


def _pieces(text: str, size: int) -> list[str]:
    return [text[start:start + size] for start in range(0, len(text), size)]


class ChunkWriter:
    """The ``chat.completion.chunk`` documents of one streamed completion, as JSON text: the
    role first, the text of each token, the client's tool calls the run waits on (see
    :func:`tool_call_deltas`), the finish reason, then (with ``include_usage``) the usage in
    a chunk of no choices, every other chunk saying ``"usage": null``. Text of a
    later turn than the last text comes after a blank line: what the model said before its
    tool calls is not run into what it says after them."""

    __slots__ = ("_created", "_id", "_include_usage", "_model", "_token", "_turn")

    def __init__(self, completion_id: str, model: str, created: int, *,
                 include_usage: bool) -> None:
        # Not the head of every chunk as a dict: only the ending needs it again, and every
        # open stream would keep it (184 B).
        self._id, self._model, self._created = completion_id, model, created
        self._include_usage = include_usage
        self._turn: int | None = None
        # A token's chunk is this text around its own: one string to encode per token.
        prefix, _, suffix = dumps(self._chunk({"content": _MARK}, None)).partition(
            dumps(_MARK))
        # The suffix is the same in every stream (with or without usage): one string for all.
        self._token = (prefix, sys.intern(suffix))

    def opening(self) -> str:
        return dumps(self._chunk({"role": "assistant", "content": ""}, None))

    def token(self, text: str, turn: int) -> str:
        if self._turn is not None and turn != self._turn:
            text = "\n\n" + text
        self._turn = turn
        prefix, suffix = self._token
        return prefix + dumps(text) + suffix

    def ending(self, said: Answer) -> list[str]:
        chunks = [dumps(self._chunk(delta, None)) for delta in tool_call_deltas(said.tool_calls)]
        chunks.append(dumps(self._chunk({}, said.finish_reason)))
        if self._include_usage:
            chunks.append(dumps({**self._head(), "choices": [], "usage": usage(said.usage)}))
        return chunks

    def _head(self) -> dict[str, Any]:
        return {"id": self._id, "object": "chat.completion.chunk", "created": self._created,
                "model": self._model, "system_fingerprint": None}

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None) -> dict[str, Any]:
        chunk = {**self._head(), "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                            "finish_reason": finish_reason}]}
        if self._include_usage:
            chunk["usage"] = None
        return chunk


#: Stands for a token's text in the template of its chunk (no id or name holds it).
_MARK = "\x00token\x00"


def dumps(document: object) -> str:
    """Compact JSON text, non-ASCII kept as it is."""
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def model_card(agent_id: str, *, created: int) -> dict[str, Any]:
    """An agent as a ``model``."""
    return {"id": agent_id, "object": "model", "created": created, "owned_by": "bloge"}


def model_list(agent_ids: Sequence[str], *, created: int) -> dict[str, Any]:
    return {"object": "list", "data": [model_card(i, created=created) for i in agent_ids]}
