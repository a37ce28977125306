"""Rows ⇄ records: the JSON columns and the derived run status."""

from __future__ import annotations

import json
import re
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from typing import Any

import orjson

from bloge.agent import AgentUsage
from bloge.core.codec import finite_json
from bloge.llm import LlmMessage
from bloge.store.records import (
    Run,
    RunError,
    RunEvent,
    RunStatus,
    Segment,
    StoredMessage,
    Thread,
    ToolCallRecord,
)

# Counts are derived, not kept: appending a message or an event writes one row, nothing else.
MESSAGE_COUNT = ("(SELECT COALESCE(MAX(m.seq), 0) FROM bloge_messages m "
                 "WHERE m.thread_id = bloge_threads.id)")
EVENT_COUNT = ("(SELECT COALESCE(MAX(e.last_seq), 0) FROM bloge_run_events e "
               "WHERE e.run_id = bloge_runs.id)")
THREAD_COLUMNS = (f"id, agent_id, created_at, updated_at, metadata, {MESSAGE_COUNT}, "
                  "active_run_id, lease_until, last_run_id")
RUN_COLUMNS = ("id, thread_id, agent_id, status, input, output, exit_reason, usage, error, turns, "
               "created_at, updated_at, finished_at, worker, lease_until, cancel_requested, "
               f"{EVENT_COUNT}, trace_parent, parent_run_id, current_agent_id")
TOOL_CALL_COLUMNS = ("run_id, turn, call_id, message_seq, name, arguments, status, success, "
                     "content, text_result")


def dumps(value: Any) -> str:
    """``value`` as compact JSON text, NaN and the infinities as ``null``; an integer beyond
    64 bits, which orjson refuses, is written exactly by the standard library."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except orjson.JSONEncodeError:
        return _encode_exactly(finite_json(value))


def loads(text: str | None) -> Any:
    """What :func:`dumps` wrote, integers beyond 64 bits exact."""
    if text is None:
        return None
    # orjson reads an integer beyond 64 bits as a float: text holding 20 digits in a row (such
    # an integer, or digits in a string) is read by the standard library, which keeps it exact.
    return json.loads(text) if _LONG_DIGITS.search(text) else orjson.loads(text)


# One prebuilt encoder: json.dumps with options builds a new one per call.
_encode_exactly = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_LONG_DIGITS = re.compile(r"[0-9]{20}")


def usage_of(data: Mapping[str, Any] | None) -> AgentUsage:
    return AgentUsage.from_dict(data or {})


def view_json(view: Sequence[Segment]) -> str:
    return dumps([list(s) if isinstance(s, tuple) else {"message": s.to_dict()} for s in view])


def view_of(text: str | None) -> tuple[Segment, ...] | None:
    if text is None:
        return None
    # What bloge recorded is read as it was written (see LlmMessage.from_dict).
    return tuple(
        (int(s[0]), int(s[1])) if isinstance(s, list)
        else LlmMessage.from_dict(s["message"], strict=False)
        for s in loads(text)
    )


def thread_of(row: Sequence[Any], now: float) -> Thread:
    (id_, agent_id, created, updated, metadata, messages, active, lease, last_run) = row
    holding = active if active is not None and lease is not None and lease >= now else None
    return Thread(id_, agent_id, created, updated, loads(metadata) or {}, int(messages),
                  holding, last_run)


def run_of(row: Sequence[Any], now: float, gone: Container[str] = ()) -> Run:
    """The run of ``row``; one whose lease ended, or whose worker is among ``gone`` (processes
    of this host that no longer exist), is no longer running."""
    (id_, thread_id, agent_id, status, input_, output, exit_reason, usage, error, turns,
     created, updated, finished, worker, lease, cancel, events, trace_parent, parent_run_id,
     current) = row
    state = RunStatus(status)
    if state is RunStatus.RUNNING and (lease is None or lease < now or worker in gone):
        # Its worker is gone; one asked to stop first did stop, as asked.
        state = RunStatus.CANCELLED if cancel else RunStatus.INTERRUPTED
    failure = loads(error)
    return Run(
        id=id_, thread_id=thread_id, agent_id=agent_id, status=state,
        input=tuple(LlmMessage.from_dict(m, strict=False) for m in loads(input_)),
        created_at=created, updated_at=updated, finished_at=finished, exit_reason=exit_reason,
        output=loads(output),
        error=RunError(failure["type"], failure["message"], failure.get("request"),
                       failure.get("guardrail"))
        if failure else None, usage=usage_of(loads(usage)), turns=int(turns), worker=worker,
        lease_until=lease, cancel_requested=bool(cancel), event_count=int(events),
        trace_parent=trace_parent, parent_run_id=parent_run_id,
        current_agent_id=current or agent_id,
    )


def message_of(thread_id: str, row: Sequence[Any]) -> StoredMessage:
    seq, run_id, kind, body = row
    return StoredMessage(thread_id, int(seq), LlmMessage.from_dict(loads(body), strict=False),
                         run_id, kind)


def tool_call_of(row: Sequence[Any]) -> ToolCallRecord:
    run_id, turn, call_id, message_seq, name, arguments, status, success, content, \
        text_result = row
    return ToolCallRecord(run_id, int(turn), call_id, int(message_seq), name, arguments, status,
                          None if success is None else bool(success), content, bool(text_result))


# -- events: consecutive tokens of one turn share a row

TOKEN = "token"  # noqa: S105 -- the event type of a streamed token, not a credential


def event_rows(events: Iterable[RunEvent]) -> list[tuple[Any, ...]]:
    """Rows for ``events``: one per event, except that a run of consecutive tokens of the same
    turn becomes one row holding their texts (a 1,000-token answer is not 1,000 rows)."""
    rows: list[tuple[Any, ...]] = []
    texts: list[str] = []
    first: RunEvent | None = None
    last_seq = 0
    for event in events:
        if event.type == TOKEN and first is not None and event.seq == last_seq + 1 \
                and event.body.get("turn") == first.body.get("turn"):
            texts.append(event.body["text"])
            last_seq = event.seq
            continue
        if first is not None:
            rows.append(_token_row(first, last_seq, texts))
            first = None
        if event.type == TOKEN:
            first, last_seq, texts = event, event.seq, [event.body["text"]]
            continue
        rows.append((event.run_id, event.seq, event.seq, event.type, event.at, dumps(event.body)))
    if first is not None:
        rows.append(_token_row(first, last_seq, texts))
    return rows


def _token_row(first: RunEvent, last_seq: int, texts: list[str]) -> tuple[Any, ...]:
    body = {"turn": first.body.get("turn"), "texts": texts}
    return (first.run_id, first.seq, last_seq, TOKEN, first.at, dumps(body))


def events_of(run_id: str, rows: Iterable[Sequence[Any]], after: int) -> Iterator[RunEvent]:
    for seq, last_seq, kind, at, body in rows:
        data = loads(body)
        if kind != TOKEN or "texts" not in data:
            yield RunEvent(run_id, int(seq), kind, at, data)
            continue
        for offset, text in enumerate(data["texts"]):
            number = int(seq) + offset
            if number > after:
                yield RunEvent(run_id, number, TOKEN, at, {"text": text, "turn": data["turn"]})
        assert int(seq) + len(data["texts"]) - 1 == int(last_seq)
