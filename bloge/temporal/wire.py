"""The JSON forms that cross Temporal: what a workflow starts from, what its activities take
and return, and what it ends with. Plain dicts, so that any SDK and ``temporal workflow show``
read them, and so that nothing but data reaches the workflow's history."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from temporalio.api.common.v1 import Payload
from temporalio.common import RawValue

from bloge.agent import AgentCheckpoint, AgentOutput, AgentUsage, BudgetExceededError
from bloge.agent.runtime import ToolOutcome
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
    """A model's answer; the fields :func:`response_from_json` defaults (no model named, no
    cache tokens, no fallback) left out, as most answers of most providers have them."""
    data: Json = {"content": response.content, "finish_reason": response.finish_reason,
                  "prompt_tokens": response.prompt_tokens,
                  "completion_tokens": response.completion_tokens,
                  "tool_calls": [call_to_json(call) for call in response.tool_calls]}
    if response.model:
        data["model"] = response.model
    if response.cache_read_tokens:
        data["cache_read_tokens"] = response.cache_read_tokens
    if response.cache_write_tokens:
        data["cache_write_tokens"] = response.cache_write_tokens
    if response.fallback_from:
        data["fallback_from"] = list(response.fallback_from)
    return data


def response_from_json(data: Mapping[str, Any]) -> LlmResponse:
    return LlmResponse(str(data.get("content", "")), str(data.get("finish_reason", "stop")),
                       int(data.get("prompt_tokens", 0)), int(data.get("completion_tokens", 0)),
                       tuple(call_from_json(call) for call in data.get("tool_calls", ())),
                       model=str(data.get("model", "")),
                       cache_read_tokens=int(data.get("cache_read_tokens", 0)),
                       cache_write_tokens=int(data.get("cache_write_tokens", 0)),
                       fallback_from=tuple(str(m) for m in data.get("fallback_from", ())))


def outcome_encoded(outcome: ToolOutcome) -> RawValue:
    """A tool call's outcome as its activity returns it, encoded once (see :func:`encoded`);
    a result with no JSON form in its lenient form (see
    :meth:`~bloge.core.codec.JsonCodec.encode_lenient`), as a checkpoint keeps it."""
    return encoded({"success": outcome.success, "content": outcome.content,
                    "result": outcome.result, "arguments": outcome.arguments,
                    "latency_ms": outcome.latency_ms})


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


#: The key of a budget stop's detail in a failed run's error (see :func:`budget_stop_to_json`).
BUDGET_STOP = "budget_stop"


def budget_stop_to_json(error: BudgetExceededError) -> Json:
    """What a budget stop says of its budget, as a failed run's error detail: the client
    raises the same :class:`~bloge.agent.BudgetExceededError` (``bloge run`` prints the
    ``--budget`` that lets the run go on)."""
    return {BUDGET_STOP: {"scope": error.scope, "limit_name": error.limit_name,
                          "limit": error.limit, "used": error.used, "needed": error.needed,
                          "step": error.step, "sub_agents": dict(error.sub_agents)}}


def budget_stop_from_json(details: Sequence[Any], *, agent_id: str,
                          checkpoint: AgentCheckpoint) -> BudgetExceededError | None:
    """The budget stop among a failed run's error ``details``, if it is one."""
    for detail in details:
        found = detail.get(BUDGET_STOP) if isinstance(detail, Mapping) else None
        if isinstance(found, Mapping):
            return BudgetExceededError(
                agent_id=agent_id, scope=str(found["scope"]),
                limit_name=str(found["limit_name"]), limit=float(found["limit"]),
                used=float(found["used"]), needed=float(found["needed"]),
                step=str(found["step"]), checkpoint=checkpoint,
                sub_agents={str(k): float(v) for k, v in (found.get("sub_agents") or {}).items()})
    return None


def size(data: Any) -> int:
    """The bytes of ``data``'s JSON form, about what Temporal's payload of it holds."""
    return len(DEFAULT_CODEC.encode_lenient(data).encode())


def encoded(data: Any) -> RawValue:
    """``data`` as the payload Temporal is handed: its JSON form, encoded here, once, so that
    the bytes whose size a workflow bounds are the bytes Temporal sends (rather than encoded
    to be measured, then again by Temporal's converter)."""
    return RawValue(Payload(metadata={"encoding": b"json/plain"},
                            data=DEFAULT_CODEC.encode_lenient(data).encode()))
