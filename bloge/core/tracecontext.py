"""W3C Trace Context, without OpenTelemetry: what a request says its trace is, what a run's
outgoing calls carry, and the ids of a run's spans.

- :class:`TraceParent` is a parsed ``traceparent`` header (with its ``tracestate``); a
  malformed one is ``None``, as the W3C recommendation says (a new trace starts).
- :data:`caller` holds the trace context of the request being served (``bloge serve`` sets
  it per request); a run started from that request records it and its spans become children
  of the caller's span.
- :data:`outgoing` holds the ``traceparent`` that a run's model calls and rpc calls carry
  (the span of the model call, tool call or run that makes them); a client sends
  :func:`with_trace_headers` of its request's headers.
- :func:`trace_id_of` and :func:`span_id_of` derive ids from a run's id and a span's place in
  it (turn, tool call id): every worker that records a part of the run — a resumed run, a
  Temporal activity on another worker, a replay — names the same span alike.

All of it is a few context-variable reads when tracing is off: nothing here imports
OpenTelemetry.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass

_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$")
#: At most this many characters of ``tracestate`` are kept (the W3C limit is 32 members of
#: at most 256 characters each; a header larger than this is dropped, not cut).
TRACESTATE_LIMIT = 512


@dataclass(frozen=True, slots=True)
class TraceParent:
    """A W3C trace context: the caller's trace, its span, its flags and its vendors'
    ``tracestate`` (empty when none)."""

    trace_id: int
    span_id: int
    flags: int = 1
    state: str = ""

    @classmethod
    def parse(cls, traceparent: str | None, tracestate: str | None = None) -> TraceParent | None:
        """The context of ``traceparent`` (and ``tracestate``), or ``None`` when it is
        missing or malformed (version ``ff``, an all-zero id, a future version's header of
        the wrong length…)."""
        if not traceparent:
            return None
        found = _TRACEPARENT.match(traceparent.strip().lower())
        if found is None:
            return None
        version, trace, span, flags, rest = found.groups()
        if version == "ff" or (version == "00" and rest):
            return None
        trace_id, span_id = int(trace, 16), int(span, 16)
        if not trace_id or not span_id:
            return None
        state = (tracestate or "").strip()
        if len(state) > TRACESTATE_LIMIT or not state.isprintable():
            state = ""
        return cls(trace_id, span_id, int(flags, 16), state)

    @property
    def header(self) -> str:
        """The ``traceparent`` header of this context."""
        return f"00-{self.trace_id:032x}-{self.span_id:016x}-{self.flags:02x}"

    def child(self, span_id: int) -> TraceParent:
        """The same trace, with ``span_id`` as the parent of what is called next."""
        return TraceParent(self.trace_id, span_id, self.flags, self.state)

    def stored(self) -> str:
        """How a run keeps it: the header, then the state after a space."""
        return f"{self.header} {self.state}".rstrip()

    @classmethod
    def from_stored(cls, text: str | None) -> TraceParent | None:
        """The context a run kept with :meth:`stored`."""
        if not text:
            return None
        header, _, state = text.partition(" ")
        return cls.parse(header, state)


#: The trace context of the request being served, if it carried one.
caller: ContextVar[TraceParent | None] = ContextVar("bloge_trace_caller", default=None)
#: The trace context the calls made now carry (a model call's span, a run's span).
outgoing: ContextVar[TraceParent | None] = ContextVar("bloge_trace_outgoing", default=None)


def with_trace_headers(headers: Mapping[str, str]) -> Mapping[str, str]:
    """``headers`` with the ``traceparent`` (and ``tracestate``) of :data:`outgoing` — or
    ``headers`` themselves, not copied, when no traced run makes the call."""
    context = outgoing.get()
    if context is None:
        return headers
    added = {**headers, "traceparent": context.header}
    if context.state:
        added["tracestate"] = context.state
    return added


def _digest(size: int, parts: tuple[object, ...]) -> int:
    text = "\x1f".join(str(part) for part in parts).encode("utf-8")
    value = int.from_bytes(hashlib.blake2b(text, digest_size=size).digest(), "big")
    return value or 1  # zero is no id


def trace_id_of(run_id: str) -> int:
    """The trace of run ``run_id`` when nothing called it within a trace."""
    return _digest(16, ("bloge.trace", run_id))


def span_id_of(run_id: str, *place: object) -> int:
    """The span of run ``run_id`` at ``place``: ``()`` the run, ``("chat", turn)`` a model
    call, ``("summary", turn)`` a memory's summary before that turn, ``("tool", call_id)`` a
    tool call."""
    return _digest(8, ("bloge.span", run_id, *place))


#: The traced run executed in this context, and its span: its tool calls' spans derive from
#: it (:func:`enter_tool_call`).
run_span: ContextVar[tuple[str, TraceParent] | None] = ContextVar("bloge_trace_run",
                                                                  default=None)


def enter_tool_call(call_id: str) -> None:
    """Tool call ``call_id`` of the traced run runs now (in its own task): what it calls
    carries its span. Nothing when no traced run runs here."""
    traced = run_span.get()
    if traced is not None:
        run_id, context = traced
        outgoing.set(context.child(span_id_of(run_id, "tool", call_id)))
