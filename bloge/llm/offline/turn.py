"""One turn of the offline model: a pure function from a request to a reply.

The turn answers the latest user message. When the conversation after it already holds a tool
round, the reply composes an answer from those results; otherwise it picks a tool and calls
it, or answers directly when no tool fits. A round that handed the conversation over
(``transfer_to_…``) is the previous agent's: the agent taking over starts on the question
afresh. One tool round per user message, never more: the
loop always ends. The application's hooks (:class:`~bloge.llm.offline.hooks.AppHooks`) word
the results and refine the arguments.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bloge.llm.messages import LlmMessage, ToolCall
from bloge.llm.offline import direct
from bloge.llm.offline.answer import compose_answer
from bloge.llm.offline.arguments import fill_arguments
from bloge.llm.offline.choice import choose_tool
from bloge.llm.offline.hooks import AppHooks, ToolResult
from bloge.llm.offline.words import is_small_talk
from bloge.llm.types import HANDOFF_TOOL_PREFIX, LlmRequest, ToolDefinition

CALL_ID_PREFIX = "offline_"
#: The name of an output tool (:func:`output_tool`).
OUTPUT_TOOL = "final_result"
#: Hex digits of the conversation's digest in a call's id.
DIGEST_LENGTH = 10


@dataclass(frozen=True, slots=True)
class Reply:
    """What the model says this turn: text, and the tool calls it asks for."""

    content: str
    tool_calls: tuple[ToolCall, ...] = ()

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"


def reply_to(request: LlmRequest, hooks: AppHooks) -> Reply:
    """The offline model's reply to ``request``; the same request always gets the same reply.

    ``tool_choice`` is honoured: ``"none"`` answers directly, a tool's name calls that tool,
    ``"required"`` calls the best tool even when nothing matches. When the request offers an
    output tool (:func:`output_tool`), the answer is given through it: the reply calls it
    once the round's results are in (with the answer as its arguments), or at once when no
    other tool matches the question.
    """
    messages = request.messages
    asked = _latest_user_index(messages)
    if asked is None:
        return Reply(direct.no_question())
    question = messages[asked].content
    later = messages[_after_handoffs(messages, asked + 1):]
    output = None if request.tool_choice == "none" else output_tool(request.tools)
    if any(m.role == "tool" or m.tool_calls for m in later):
        answer = compose_answer(_results(later, messages), tools=request.tools,
                                formatters=hooks.answer_formatters)
        if output is None or any(c.name == output.name for m in later for c in m.tool_calls):
            return Reply(answer)
        return _calling(output, answer, messages, hooks)
    tools = () if request.tool_choice == "none" else request.tools
    tool = _pick(question, [t for t in tools if t is not output], request.tool_choice,
                 everything=tools, fallback=output is None)
    tool = tool or output
    if tool is None and is_small_talk(question):
        return Reply(direct.greeting(question, tools, switch_hint=hooks.switch_hint))
    if tool is None:
        return Reply(direct.no_tool(tools, switch_hint=hooks.switch_hint))
    return _calling(tool, question, messages, hooks)


def output_tool(tools: Sequence[ToolDefinition]) -> ToolDefinition | None:
    """The tool through which a client takes the run's answer, when ``tools`` has one: one
    named ``final_result`` (or ``final_result_…``), as Pydantic AI names the tools of an
    ``output_type``."""
    return next((t for t in tools if t.name == OUTPUT_TOOL or
                 t.name.startswith(f"{OUTPUT_TOOL}_")), None)


def _calling(tool: ToolDefinition, text: str, messages: Sequence[LlmMessage],
             hooks: AppHooks) -> Reply:
    """A call of ``tool``, its arguments filled from ``text``."""
    hints = [m.content for m in messages if m.role == "system"]
    arguments: Mapping[str, Any] = fill_arguments(tool, text, hints=hints)
    for filler in hooks.argument_fillers:
        arguments = filler(tool, text, arguments)
    encoded = json.dumps(dict(arguments), ensure_ascii=False)
    call = ToolCall(_next_call_id(messages), tool.name, encoded)
    return Reply(_preamble(tool), (call,))


def _pick(question: str, tools: Sequence[ToolDefinition], tool_choice: str | None, *,
          everything: Sequence[ToolDefinition], fallback: bool) -> ToolDefinition | None:
    """The tool to call among ``tools`` (a forced one among ``everything``); without
    ``fallback``, only one the question matches."""
    forced = next((t for t in everything if t.name == tool_choice), None)
    if forced is not None:
        return forced
    if tool_choice == "required" and tools:
        return choose_tool(question, tools, fallback=fallback) or (
            tools[0] if fallback else None)
    if is_small_talk(question):
        return None
    return choose_tool(question, tools, fallback=fallback)


def _after_handoffs(messages: Sequence[LlmMessage], start: int) -> int:
    """Where the conversation from ``start`` goes on past its last handoff round (an
    assistant message calling ``transfer_to_…``, and the tool messages answering it)."""
    after = start
    for index in range(start, len(messages)):
        calls = messages[index].tool_calls
        if calls and any(c.name.startswith(HANDOFF_TOOL_PREFIX) for c in calls):
            after = index + 1
            while after < len(messages) and messages[after].role == "tool":
                after += 1
    return after


def _latest_user_index(messages: Sequence[LlmMessage]) -> int | None:
    return next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), None)


def _results(later: Sequence[LlmMessage], everything: Sequence[LlmMessage]) -> list[ToolResult]:
    """The tool messages after the question, each with the call it answers."""
    calls = {c.id: c for m in everything for c in m.tool_calls}
    results = []
    for message in later:
        if message.role != "tool":
            continue
        call = calls.get(message.tool_call_id or "")
        name = call.name if call else "the tool"
        arguments = _parse_arguments(call.arguments) if call else {}
        results.append(ToolResult.of(name, message.content, arguments=arguments,
                                     is_error=message.is_error))
    return results


def _parse_arguments(text: str) -> Mapping[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _next_call_id(messages: Sequence[LlmMessage]) -> str:
    """Call ids count up through the conversation, so that no two calls of it share one, and
    end with a digest of the conversation so far, so that the calls of two conversations do
    not either (a client that runs a tool finds its paused run by the call's id); the same
    conversation still gets the same id."""
    text = json.dumps([m.to_dict() for m in messages], ensure_ascii=False, sort_keys=True)
    digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:DIGEST_LENGTH]
    return f"{CALL_ID_PREFIX}{1 + sum(len(m.tool_calls) for m in messages)}_{digest}"


def _preamble(tool: ToolDefinition) -> str:
    """The words said with a tool call; when the loop stops right after the call (an exit
    condition), they are the run's answer, so they say what is being done."""
    clause = direct.as_clause(tool.description)
    return f"Let me {clause}." if clause else f"Let me call {tool.name}."
