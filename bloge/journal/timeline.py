"""The timeline of one execution: what ``bloge journal show <execution-id>`` prints.

``execution_timeline(events, id)`` picks the events of one execution (a unique prefix of
its id is enough) in ``seq`` order; ``render_timeline`` turns them into plain-text lines,
one per event: time since the first event, sequence number, turn, callback and the fields
that matter for it (tool and call id, success, latency, tokens, exit reason, and the
error that ended a failed run).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bloge.core.errors import BlogeUsageError
from bloge.core.suggest import did_you_mean, hint_for

#: How many known execution ids an error message lists.
LISTED_IDS = 10


class UnknownExecutionError(BlogeUsageError, LookupError):
    """No execution id in the journal is, or starts with, the one asked for.

    ``known`` holds every id, most recent first; ``suggestions`` the closest ones.
    """

    def __init__(self, execution_id: str, known: Sequence[str]) -> None:
        self.execution_id = execution_id
        self.known = tuple(known)
        self.suggestions = _suggest(execution_id, self.known)
        if not self.known:
            message = f"no execution {execution_id!r}: the journal holds no executions"
        else:
            message = (f"no execution {execution_id!r} in the journal{hint_for(self.suggestions)} "
                       f"(most recent first: {_listing(self.known)})")
        super().__init__(message)


class AmbiguousExecutionError(BlogeUsageError, LookupError):
    """Several execution ids start with the prefix asked for (``matches``, most recent
    first)."""

    def __init__(self, prefix: str, matches: Sequence[str]) -> None:
        self.prefix = prefix
        self.matches = tuple(matches)
        super().__init__(f"{prefix!r} is the start of {len(self.matches)} execution ids; "
                         f"give more of it (most recent first: {_listing(self.matches)})")


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One event of a timeline. ``offset_ms`` is the time since the timeline's first event
    (``None`` when the event has no readable timestamp); ``detail`` the key fields."""

    seq: int | None
    offset_ms: float | None
    callback: str
    turn: int | None
    detail: str
    event: Mapping[str, Any]

    @property
    def label(self) -> str:
        """The callback's name without the ``on_agent_`` prefix."""
        return self.callback.removeprefix("on_agent_")

    def line(self) -> str:
        offset = "?" if self.offset_ms is None else f"{self.offset_ms:.1f}"
        seq = "" if self.seq is None else f"#{self.seq}"
        turn = "" if self.turn is None else f"turn {self.turn}"
        return f"{offset:>10} ms  {seq:<5} {turn:<8} {self.label:<16} {self.detail}".rstrip()


def known_executions(events: Iterable[Mapping[str, Any]]) -> list[str]:
    """The execution ids of ``events``, most recently active first."""
    return _Index(events).recent_first()


def execution_timeline(
    events: Iterable[Mapping[str, Any]], execution_id: str
) -> list[TimelineEntry]:
    """The events of the execution ``execution_id`` (or the one id it is a prefix of).

    Raises :class:`UnknownExecutionError` (listing the known ids, most recent first, with a
    did-you-mean) or :class:`AmbiguousExecutionError` when the prefix fits several ids.
    """
    index = _Index(events)
    chosen = resolve_execution_id(execution_id, index.recent_first())
    ordered = _in_order(index.events[chosen])
    start = next((t for t in map(_time_of, ordered) if t is not None), None)
    return [_entry(event, start) for event in ordered]


def resolve_execution_id(execution_id: str, known: Sequence[str]) -> str:
    """``execution_id`` itself when known, else the single known id it begins."""
    if execution_id in known:
        return execution_id
    matches = [k for k in known if k.startswith(execution_id)] if execution_id else []
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise AmbiguousExecutionError(execution_id, matches)
    raise UnknownExecutionError(execution_id, known)


def render_timeline(entries: Sequence[TimelineEntry]) -> list[str]:
    """Plain-text lines: a heading, then one line per entry. Print them with markup off
    (a rich console would read ``[redacted]`` as a style tag)."""
    if not entries:
        return []
    first = entries[0].event
    # The agents in the order they had the run; the store's own events (a decision, a posted
    # result) are no agent's.
    agents = ", ".join(dict.fromkeys(str(e.event["operator_ref"]) for e in entries
                                     if e.event.get("operator_ref")) or ["?"])
    span = max((e.offset_ms for e in entries if e.offset_ms is not None), default=0.0)
    heading = (f"execution {first.get('execution_id')} · {agents} · {len(entries)} events "
               f"· {span:.1f} ms")
    return [heading, *(entry.line() for entry in entries)]


class _Index:
    """One pass over the events: each execution's events and when it was last active."""

    def __init__(self, events: Iterable[Mapping[str, Any]]) -> None:
        self.events: dict[str, list[Mapping[str, Any]]] = {}
        self._last: dict[str, tuple[str, int]] = {}
        for position, event in enumerate(events):
            execution_id = event.get("execution_id")
            if not isinstance(execution_id, str):
                continue
            self.events.setdefault(execution_id, []).append(event)
            self._last[execution_id] = (str(event.get("timestamp", "")), position)

    def recent_first(self) -> list[str]:
        return sorted(self._last, key=self._last.__getitem__, reverse=True)


def _in_order(events: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    if all(isinstance(e.get("seq"), int) for e in events):
        return sorted(events, key=lambda e: int(e["seq"]))
    return events


def _time_of(event: Mapping[str, Any]) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(str(event["timestamp"]))
    except (KeyError, ValueError):
        return None


def _entry(event: Mapping[str, Any], start: dt.datetime | None) -> TimelineEntry:
    at = _time_of(event)
    offset = None if at is None or start is None else (at - start).total_seconds() * 1000.0
    callback = str(event.get("event", "?"))
    turn = event.get("turn_number")
    describe = _DETAILS.get(callback, _other)
    return TimelineEntry(
        seq=event.get("seq") if isinstance(event.get("seq"), int) else None,
        offset_ms=offset,
        callback=callback,
        turn=turn if isinstance(turn, int) else None,
        detail=describe(event),
        event=event,
    )


def _ms(value: object) -> str:
    return f"{value:.1f} ms" if isinstance(value, int | float) else "? ms"


def _count(value: object, noun: str) -> str:
    return f"{value} {noun}" if value == 1 else f"{value} {noun}s"


def _turn_started(e: Mapping[str, Any]) -> str:
    return f"{_count(e.get('message_count'), 'message')} in view"


def _llm_called(e: Mapping[str, Any]) -> str:
    waited = e.get("pool_wait_ms")
    pool = (f" ({_ms(waited)} waiting for a connection)"
            if isinstance(waited, int | float) and waited >= 1 else "")
    cached = _cached(e.get("cache_read_tokens"), e.get("cache_write_tokens"))
    tried = e.get("fallback_from")
    fallback = (f" (after {', '.join(map(str, tried))} failed)"
                if isinstance(tried, list | tuple) and tried else "")
    return (f"{e.get('model')}{fallback}: {e.get('prompt_tokens')}+"
            f"{e.get('completion_tokens')} tokens{cached}, "
            f"{_ms(e.get('latency_ms'))}{pool}, finish {e.get('finish_reason')}")


def _memory_summarized(e: Mapping[str, Any]) -> str:
    return (f"{e.get('model')} summarized {e.get('messages_summarized')} messages: "
            f"{e.get('prompt_tokens')}+{e.get('completion_tokens')} tokens, "
            f"{_ms(e.get('latency_ms'))}, finish {e.get('finish_reason')}")


def _cached(read: object, written: object) -> str:
    """The prompt cache's part of a model call: `` (900 cached, 100 written to cache)``."""
    parts = []
    if isinstance(read, int) and read:
        parts.append(f"{read} cached")
    if isinstance(written, int) and written:
        parts.append(f"{written} written to cache")
    return f" ({', '.join(parts)})" if parts else ""


def _tool_dispatched(e: Mapping[str, Any]) -> str:
    return f"{e.get('tool_name')} {e.get('tool_call_id')}{_replayed(e)}"


def _tool_completed(e: Mapping[str, Any]) -> str:
    outcome = "ok" if e.get("success") is True else "FAILED"
    return (f"{e.get('tool_name')} {e.get('tool_call_id')} {outcome}, "
            f"{_ms(e.get('latency_ms'))}{_replayed(e)}")


def _replayed(e: Mapping[str, Any]) -> str:
    return " (replayed: the result is the ledger's)" if e.get("replayed") is True else ""


def _loop_exited(e: Mapping[str, Any]) -> str:
    line = (f"exit {e.get('exit_reason')} after {_count(e.get('total_turns'), 'turn')}, "
            f"{_count(e.get('total_llm_calls'), 'model call')}, "
            f"{_count(e.get('total_llm_tokens'), 'token')}, {_ms(e.get('total_latency_ms'))}")
    error, message = e.get("error_type"), e.get("error_message")
    if error:
        line += f": {error}: {message}" if message else f": {error}"
    return line


def _guard_checked(e: Mapping[str, Any]) -> str:
    on = f" on {e.get('tool_name')} {e.get('tool_call_id')}" if e.get("tool_name") else ""
    verdict = str(e.get("verdict", "?")).upper() if e.get("verdict") != "pass" else "pass"
    line = f"{e.get('kind')} guard {e.get('guard')}{on}: {verdict}, {_ms(e.get('latency_ms'))}"
    if e.get("error_type"):
        line += f" (the guard raised {e.get('error_type')})"
    return line + (f": {e.get('reason')}" if e.get("reason") else "")


def _handoff(e: Mapping[str, Any]) -> str:
    why = f": {e.get('reason')}" if e.get("reason") else ""
    return (f"{e.get('from_agent')} → {e.get('to_agent')} (handoff {e.get('handoff')}, "
            f"{e.get('tool_call_id')}){why}")


_CONTEXT_KEYS = frozenset({"event", "timestamp", "seq", "execution_id", "graph_name",
                           "node_id", "operator_ref", "turn_number"})


def _other(e: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={v!r}" for k, v in e.items() if k not in _CONTEXT_KEYS)


def _approval_required(e: Mapping[str, Any]) -> str:
    return f"{e.get('tool')} {e.get('call_id')}{_in(e)} waits for a decision{_until(e)}"


def _in(e: Mapping[str, Any]) -> str:
    """Where a call a run waits on waits, when it is a sub-agent's run's."""
    run_id = e.get("subagent_run_id")
    return "" if run_id is None else f" of sub-agent run {run_id}"


def _subagent_paused(e: Mapping[str, Any]) -> str:
    status = str(e.get("status", "paused")).replace("_", " ")
    return (f"{e.get('tool')} {e.get('call_id')} waits on sub-agent run {e.get('run_id')}, "
            f"{status}")


def _approval_decided(e: Mapping[str, Any]) -> str:
    verb = "approved" if e.get("approved") is True else "denied"
    by = f" by {e.get('principal')}" if e.get("principal") else ""
    why = f": {e.get('reason')}" if e.get("reason") else ""
    return f"{e.get('tool')} {e.get('call_id')} {verb}{by}{why}"


def _waits_for_result(e: Mapping[str, Any]) -> str:
    return f"{e.get('tool')} {e.get('call_id')}{_in(e)} waits for its result{_until(e)}"


def _until(e: Mapping[str, Any]) -> str:
    expires = e.get("expires_at")
    return "" if not isinstance(expires, int | float) else \
        f", expires {dt.datetime.fromtimestamp(expires, dt.UTC):%Y-%m-%d %H:%M:%SZ}"


def _results_posted(e: Mapping[str, Any]) -> str:
    calls = e.get("call_ids")
    return "results of " + (", ".join(map(str, calls)) if isinstance(calls, list) else "?")


_DETAILS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "approval_required": _approval_required,
    "approval_decided": _approval_decided,
    "approval_expired": lambda e: f"{e.get('call_id')} expired: denied",
    "tool_results_required": _waits_for_result,
    "subagent_paused": _subagent_paused,
    "tool_results_posted": _results_posted,
    "tool_results_expired": lambda e: (f"{e.get('tool', '?')} {e.get('call_id')} expired: "
                                       "no result came"),
    "on_agent_turn_started": _turn_started,
    "on_agent_llm_called": _llm_called,
    "on_agent_tool_dispatched": _tool_dispatched,
    "on_agent_tool_completed": _tool_completed,
    "on_agent_loop_exited": _loop_exited,
    "on_agent_guard_checked": _guard_checked,
    "on_agent_handoff": _handoff,
    "on_agent_memory_summarized": _memory_summarized,
}


def _suggest(execution_id: str, known: Sequence[str]) -> list[str]:
    """Known ids whose start is close to ``execution_id`` (a mistyped prefix or id)."""
    starts: dict[str, list[str]] = {}
    for full in known:
        starts.setdefault(full[: len(execution_id)], []).append(full)
    close = did_you_mean(execution_id, starts)
    return [full for start in close for full in starts[start]][:3]


def _listing(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:LISTED_IDS])
    more = len(ids) - LISTED_IDS
    return f"{shown}, and {more} more" if more > 0 else shown
