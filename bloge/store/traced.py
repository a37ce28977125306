"""A recorded run's spans, when its store traces runs (``store.tracing``, a
:class:`bloge.tracing.RunTracing` the container sets when ``bloge.tracing.enabled``).

The spans are a view of the run's events: the recorder hands each event it keeps to the
run's :class:`~bloge.tracing.RunSpans`. What the events do not hold — the messages a model
call sends and the answer it gets — is passed here only when content is captured, through
the store's redactor, the one the events pass. Without ``store.tracing`` nothing here runs
and nothing of OpenTelemetry is imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from bloge.core import tracecontext
from bloge.core.tracecontext import TraceParent
from bloge.journal.redaction import Redactor
from bloge.llm import LlmMessage, LlmResponse


class Spans(Protocol):
    """What the recorder feeds: :class:`bloge.tracing.RunSpans`."""

    context: TraceParent
    #: What this task's runs and calls carried before the run (a run inside another run's
    #: tool call: that call's), put back when it ends.
    outer: tuple[Any, TraceParent | None]

    def event(self, kind: str, body: Any, at: float) -> None: ...

    def model_call(self, turn: int, messages: Any = None) -> TraceParent: ...

    def answered(self, answer: Any) -> None: ...

    def close(self, at: float, usage: Any = None) -> None: ...


def run_spans(tracing: Any, *, run_id: str, thread_id: str, agent: str, started_at: float,
              parent: TraceParent | None, model: str | None = None,
              history: Sequence[Any] = (), answering: str | None = None) -> Spans:
    """The spans of run ``run_id`` under ``tracing`` (``history``: the stored events of a
    run being resumed; ``answering``: the agent it was handed to); the run's tool calls and
    rpc calls carry its trace from now on (in this task, until :func:`ended`)."""
    spans: Spans = tracing.run(run_id=run_id, thread_id=thread_id, agent=agent,
                               started_at=started_at, parent=parent, model=model,
                               history=history, answering=answering)
    spans.outer = (tracecontext.run_span.get(), tracecontext.outgoing.get())
    tracecontext.run_span.set((run_id, spans.context))
    tracecontext.outgoing.set(spans.context)
    return spans


def started_in() -> TraceParent | None:
    """The trace context a new run starts in: the tool call of a traced run it runs inside
    (a sub-agent), else the request that started it, if either."""
    return tracecontext.outgoing.get() or tracecontext.caller.get()


def model_call(spans: Spans, redactor: Redactor, turn: int, view: Sequence[LlmMessage], *,
               capture: bool) -> None:
    """Model call ``turn`` begins with ``view`` (kept with ``capture``): its request
    carries the call's span."""
    messages = _redacted(redactor, [_message(m) for m in view]) if capture else None
    tracecontext.outgoing.set(spans.model_call(turn, messages))


def answered(spans: Spans, redactor: Redactor, response: LlmResponse) -> None:
    """The model's answer, for the call's span (content is captured)."""
    answer = _message(LlmMessage("assistant", response.content, tool_calls=response.tool_calls))
    answer["finish_reason"] = response.finish_reason
    spans.answered(_redacted(redactor, [answer]))


def ended(spans: Spans, at: float, usage: Any = None) -> None:
    """The run is over here (at ``at``, with ``usage``: a paused run's span ends now): later
    calls of this task carry what they carried before it."""
    spans.close(at, usage)
    run_span, outgoing = spans.outer
    tracecontext.run_span.set(run_span)
    tracecontext.outgoing.set(outgoing)


def _message(message: LlmMessage) -> dict[str, Any]:
    """``message`` as the GenAI conventions write a message: its role and parts."""
    parts: list[dict[str, Any]] = []
    if message.role == "tool":
        parts.append({"type": "tool_call_response", "id": message.tool_call_id,
                      "response": message.content})
    elif message.content:
        parts.append({"type": "text", "content": message.content})
    parts.extend({"type": "tool_call", "id": call.id, "name": call.name,
                  "arguments": call.arguments} for call in message.tool_calls)
    return {"role": message.role, "parts": parts}


def _redacted(redactor: Redactor, value: Any) -> Any:
    """``value`` redacted as the run's events are: sensitive keys at any depth, credentials
    in text, the configured secrets."""
    return redactor(None, "", {"content": value})["content"]
