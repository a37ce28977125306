"""The JSON forms that cross Temporal: what a workflow starts from, what its activities take
and return, and what it ends with. Plain dicts, so that any SDK and ``temporal workflow show``
read them, and so that nothing but data reaches the workflow's history."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bloge.agent import AgentCheckpoint, AgentOutput, AgentUsage
from bloge.agent.runtime import CallerAllowance, Spend, ToolOutcome
from bloge.core.codec import DEFAULT_CODEC
from bloge.llm.messages import LlmMessage, ToolCall
from bloge.llm.types import LlmResponse, ToolDefinition

Json = dict[str, Any]


def messages_to_json(messages: Sequence[LlmMessage]) -> list[Json]:
    return [message.to_dict() for message in messages]


def messages_from_json(data: Sequence[Mapping[str, Any]]) -> tuple[LlmMessage, ...]:
    # Messages a run holds: as they were written (see LlmMessage.from_dict).
    return tuple(LlmMessage.from_dict(item, strict=False) for item in data)


def call_to_json(call: ToolCall) -> Json:
    return {"id": call.id, "name": call.name, "arguments": call.arguments}


def call_from_json(data: Mapping[str, Any]) -> ToolCall:
    return ToolCall(str(data["id"]), str(data["name"]), str(data.get("arguments", "{}")))


def tool_to_json(tool: ToolDefinition) -> Json:
    """A run's own tool (as the run store keeps it too)."""
    return {"name": tool.name, "description": tool.description,
            "parameters": dict(tool.parameters)}


def tool_from_json(data: Mapping[str, Any]) -> ToolDefinition:
    return ToolDefinition(str(data["name"]), str(data.get("description", "")),
                          data.get("parameters") or {"type": "object"})


def response_to_json(response: LlmResponse) -> Json:
    return {"content": response.content, "finish_reason": response.finish_reason,
            "prompt_tokens": response.prompt_tokens,
            "completion_tokens": response.completion_tokens,
            "tool_calls": [call_to_json(call) for call in response.tool_calls],
            "model": response.model, "cache_read_tokens": response.cache_read_tokens,
            "cache_write_tokens": response.cache_write_tokens,
            "fallback_from": list(response.fallback_from)}


def response_from_json(data: Mapping[str, Any]) -> LlmResponse:
    return LlmResponse(str(data.get("content", "")), str(data.get("finish_reason", "stop")),
                       int(data.get("prompt_tokens", 0)), int(data.get("completion_tokens", 0)),
                       tuple(call_from_json(call) for call in data.get("tool_calls", ())),
                       model=str(data.get("model", "")),
                       cache_read_tokens=int(data.get("cache_read_tokens", 0)),
                       cache_write_tokens=int(data.get("cache_write_tokens", 0)),
                       fallback_from=tuple(str(m) for m in data.get("fallback_from", ())))


def outcome_to_json(outcome: ToolOutcome) -> Json:
    """A tool call's outcome; a result with no JSON form in its lenient form (see
    :meth:`~bloge.core.codec.JsonCodec.encode_lenient`), as a checkpoint keeps it."""
    return {"success": outcome.success, "content": outcome.content,
            "result": DEFAULT_CODEC.decode(DEFAULT_CODEC.encode_lenient(outcome.result)),
            "arguments": DEFAULT_CODEC.decode(DEFAULT_CODEC.encode_lenient(outcome.arguments)),
            "latency_ms": outcome.latency_ms}


def outcome_from_json(call: ToolCall, data: Mapping[str, Any]) -> ToolOutcome:
    return ToolOutcome(call, bool(data["success"]), str(data["content"]), data.get("result"),
                       data.get("arguments"), float(data.get("latency_ms", 0.0)))


def output_to_json(output: AgentOutput) -> Json:
    return output.to_dict()


def output_from_json(data: Mapping[str, Any]) -> AgentOutput:
    """:meth:`AgentOutput.to_dict`'s form read back."""
    usage = data.get("usage") or {}
    return AgentOutput(
        content=str(data["content"]),
        finish_reason=str(data["finish_reason"]),
        turns_used=int(data["turns_used"]),
        messages=messages_from_json(data.get("messages") or ()),
        tool_results=dict(data.get("tool_results") or {}),
        checkpoint=AgentCheckpoint.from_json(DEFAULT_CODEC.encode(data["checkpoint"])),
        exit_reason=str(data.get("exit_reason", "stop")),
        usage=AgentUsage.from_dict(usage),
        run_id=data.get("run_id"),
        thread_id=data.get("thread_id"),
    )


View = tuple[tuple[int, int] | LlmMessage, ...]
"""A memory view by reference to a thread's log (the store's ``Segment`` form): a message the
log holds by its number, runs of numbers merged as ``(first, last)``; others inline."""


def view_to_json(view: View) -> list[Any]:
    """The view as the store writes it: ``[first, last]``, or ``{"message": …}``."""
    return [list(part) if isinstance(part, tuple) else {"message": part.to_dict()}
            for part in view]


def view_from_json(data: Sequence[Any]) -> View:
    return tuple((int(part[0]), int(part[1])) if isinstance(part, list)
                 else LlmMessage.from_dict(part["message"], strict=False) for part in data)


def size(data: Any) -> int:
    """The bytes of ``data``'s JSON form, about what Temporal's payload of it holds."""
    return len(DEFAULT_CODEC.encode_lenient(data).encode())


#: The key of a child workflow's start that holds what its callers' budgets leave it, and
#: of its result (or its failure's last detail) that holds what it spent of that, by run.
CALLER_BUDGET = "caller_budget"
CALLER_SPENT = "caller_spent"


def allowance_from_json(start: Mapping[str, Any]) -> CallerAllowance | None:
    """What a child workflow's callers left it (``None``: its own budget only), with what a
    history of it before this one spent of it."""
    caps = start.get(CALLER_BUDGET)
    if caps is None:
        return None
    return CallerAllowance({str(measure): (float(limit), float(used))
                            for measure, (limit, used) in caps.items()},
                           spends_from_json(start.get(CALLER_SPENT) or {}))


def allowance_to_json(allowance: CallerAllowance | None) -> Json:
    """What a child workflow starts with, and carries to its next history: its allowance
    (by measure, ``[limit, used]``) and what it spent of it."""
    if allowance is None:
        return {}
    return {CALLER_BUDGET: {measure: [limit, used]
                            for measure, (limit, used) in allowance.caps.items()},
            **spent_json(allowance)}


def spent_json(allowance: CallerAllowance | None) -> Json:
    """What a child workflow spent of its allowance, by run, for its result."""
    if allowance is None:
        return {}
    return {CALLER_SPENT: {name: _spend_to_json(spent)
                           for name, spent in allowance.spent_below.items()}}


def spent_details(allowance: CallerAllowance | None) -> tuple[Json, ...]:
    """The same, as the last detail of a child workflow's failure."""
    found = spent_json(allowance)
    return (found,) if found else ()


def spent_from_json(data: Mapping[str, Any]) -> dict[str, Spend]:
    return spends_from_json(data.get(CALLER_SPENT) or {})


def spent_from_details(cause: BaseException | None) -> dict[str, Spend]:
    """What a failed child workflow spent of its allowance (its failure's last detail)."""
    details = getattr(cause, "details", None) or ()
    last = details[-1] if details else None
    return spent_from_json(last) if isinstance(last, dict) and CALLER_SPENT in last else {}


def spends_from_json(data: Mapping[str, Any]) -> dict[str, Spend]:
    return {str(name): Spend(int(spent.get("input_tokens", 0)),
                             int(spent.get("output_tokens", 0)), float(spent.get("usd", 0.0)),
                             int(spent.get("model_calls", 0)), int(spent.get("tool_calls", 0)))
            for name, spent in data.items()}


def _spend_to_json(spent: Spend) -> Json:
    return {"input_tokens": spent.input_tokens, "output_tokens": spent.output_tokens,
            "usd": spent.usd, "model_calls": spent.model_calls, "tool_calls": spent.tool_calls}
