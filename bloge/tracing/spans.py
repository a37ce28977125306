"""``RunSpans``: one run's events as GenAI spans — ``invoke_agent <agent>`` for the run,
``chat <model>`` for each model call (a ``summary(n)`` memory's included, marked
``bloge.memory.summary``) and ``execute_tool <tool>`` for each tool call, its children.

The spans are read off the run's events (the journal's callbacks, as the run store keeps
them: redacted), each handed to the exporter when its end event arrives, with ids derived from
the run (:func:`~bloge.core.tracecontext.span_id_of`): a run resumed after a crash, or
continued by a Temporal activity on another worker, adds the spans of what it does to the same
trace, under the same run span, and a tool call it takes from the ledger (a ``replayed``
event) is not traced again. The run span itself is exported once, by whoever records the run's
end, from the run's start (kept with the run) to its end. What bloge adds — cost, budget
stops, pauses and the segments a paused run resumes in, approval decisions, guard verdicts —
is read off the same events (:mod:`bloge.tracing.verdicts`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from bloge.core.tracecontext import TraceParent, span_id_of, trace_id_of
from bloge.tracing import verdicts

if TYPE_CHECKING:
    from bloge.tracing.exporting import RunTracing

_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_NANOS = 1_000_000_000


class RunSpans:
    """The spans of one run of ``tracing`` (see the module docs). Feed it the run's events
    with :meth:`event`; :meth:`model_call` says which span a model call is (for the
    ``traceparent`` its request carries) and, when content is captured, takes its messages.
    """

    __slots__ = ("_answer", "_asked", "_call_guards", "_chat", "_decisions", "_ended", "_exit",
                 "_messages", "_run_events", "_segment", "_segment_parent", "_tools",
                 "_waiting", "agent", "answering", "context", "model", "outer", "parent",
                 "run_id", "started_at", "thread_id", "tracing")

    def __init__(self, tracing: RunTracing, *, run_id: str, thread_id: str, agent: str,
                 started_at: float, parent: TraceParent | None, model: str | None = None,
                 history: Iterable[Any] = (), answering: str | None = None) -> None:
        self.tracing = tracing
        self.run_id = run_id
        self.thread_id = thread_id
        #: The agent the run was started with (its span's), and the one that has the
        #: conversation now (its calls' spans'): another after a handoff, as ``answering``
        #: or the ``history`` says.
        self.agent = agent
        history = tuple(history)
        self.answering = answering or next((event.body["to_agent"] for event in reversed(history)
                                            if event.type == "on_agent_handoff"), agent)
        self.started_at = started_at
        self.parent = parent
        trace_id = parent.trace_id if parent is not None else trace_id_of(run_id)
        #: The run span's context: what the run's rpc calls carry.
        # A run resumed after a pause goes on in a segment span of its own (see verdicts).
        continuation = verdicts.continued(run_id, history)
        self.context = TraceParent(trace_id,
                                   verdicts.segment_span_id(run_id, continuation.segment), 1,
                                   parent.state if parent is not None else "")
        self._segment, self._segment_parent = continuation.segment, continuation.parent_id
        if continuation.started_at is not None:
            self.started_at = continuation.started_at
        #: How the calls that waited for approval were decided: (decision, principal).
        self._decisions = continuation.decisions
        #: Guard verdicts and handoffs for the run span; guard verdicts for each tool
        #: call's span.
        self._run_events: list[Event] = []
        self._call_guards: dict[str, list[Event]] = {}
        #: The calls a pausing run waits on: (call id, event kind).
        self._waiting: list[tuple[str, str]] = []
        self._ended = False
        #: The model the agent asks for, and the model call asked and not answered yet:
        #: (turn, when it was asked), whose span a failure ends.
        self.model = model
        self._asked: tuple[int, float] | None = None
        self._tools: dict[str, tuple[float, Mapping[str, Any]]] = {}
        self._chat: tuple[Mapping[str, Any], float] | None = None  # held for its answer
        self._messages: Any = None
        self._answer: Any = None
        self._exit: Mapping[str, Any] = {}
        #: What the task carried before the run (see :mod:`bloge.store.traced`).
        self.outer: tuple[Any, TraceParent | None] = (None, None)

    # -- what the run's observer tells

    def model_call(self, turn: int, messages: Any = None) -> TraceParent:
        """Model call ``turn`` begins, with ``messages`` (redacted JSON data; kept only when
        content is captured): the context its request carries."""
        if self.tracing.capture_content:
            self._messages = messages
        return self.context.child(span_id_of(self.run_id, "chat", turn))

    def answered(self, answer: Any) -> None:
        """The model call's answer (redacted JSON data), when content is captured."""
        self._answer = answer
        self._end_chat()

    # -- the run's events

    def event(self, kind: str, body: Mapping[str, Any], at: float) -> None:
        """One event of the run (a callback's name, or ``done``/``error``), at time ``at``."""
        if self._chat is not None and kind != "token":
            self._end_chat()
        match kind:
            case "on_agent_turn_started":
                self._asked = (body["turn_number"], at)
            case "on_agent_llm_called":
                self._asked = None
                self.model = body["model"]
                self._chat = (body, at)
                if not self.tracing.capture_content:
                    self._end_chat()
            case "on_agent_tool_dispatched":
                if not body.get("replayed") or self._refused(body["tool_call_id"]):
                    self._tools[body["tool_call_id"]] = (at, body)
            case "on_agent_tool_completed":
                dispatched = self._tools.pop(body["tool_call_id"], None)
                if dispatched is not None and (not body.get("replayed")
                                               or self._refused(body["tool_call_id"])):
                    self._tool_span(body, dispatched, at)
            case "on_agent_memory_summarized":
                self._summary_span(body, at)
            case "on_agent_guard_checked":
                guard = verdicts.guard_event(body, at,
                                             capture_content=self.tracing.capture_content)
                if body.get("kind") == "tool_call" and body.get("tool_call_id"):
                    self._call_guards.setdefault(body["tool_call_id"], []).append(guard)
                else:
                    self._run_events.append(guard)
            case "on_agent_handoff":
                self.answering = body["to_agent"]
                self._run_events.append(verdicts.handoff_event(
                    body, at, capture_content=self.tracing.capture_content))
            case "approval_expired":
                self._decisions[body["call_id"]] = (verdicts.EXPIRED, None)
            case "approval_required" | "tool_results_required":
                self._waiting.append((body["call_id"], kind))
            case "on_agent_loop_exited":
                self._exit = body
            case "done" | "error":
                if self._asked is not None and kind == "error":
                    self._failed_chat(body, at)
                self._run_span(kind, body, at)

    def close(self, at: float, usage: Mapping[str, Any] | None = None) -> None:
        """The run's worker is done with it: a run that paused ends its span now, as
        ``paused``, with its ``usage`` so far (a run that ended did at its end event)."""
        if self._waiting and not self._ended:
            self._run_span("paused", {"usage": usage}, at)

    def _refused(self, call_id: str) -> bool:
        """Whether ``call_id`` waited and was denied (or expired) since the last pause: its
        result comes from the decision, and its span is sent now."""
        decided = self._decisions.get(call_id)
        return decided is not None and decided[0] != verdicts.APPROVED

    # -- spans

    def _span(self, name: str, span_id: int, parent_id: int, *, kind: SpanKind,
              attributes: Mapping[str, Any], start: float, end: float,
              error: str | None = None, events: Sequence[Event] = ()) -> None:
        context = self.context
        caller = self.parent
        parent = None if not parent_id else SpanContext(
            context.trace_id, parent_id,
            is_remote=caller is not None and parent_id == caller.span_id, trace_flags=_SAMPLED)
        status = Status(StatusCode.ERROR, error) if error else Status(StatusCode.UNSET)
        self.tracing.export(ReadableSpan(
            name, SpanContext(context.trace_id, span_id, is_remote=False, trace_flags=_SAMPLED),
            parent, self.tracing.resource, dict(attributes), kind=kind,
            instrumentation_scope=self.tracing.scope, status=status,
            start_time=int(start * _NANOS), end_time=int(max(end, start) * _NANOS),
            events=events))

    def _common(self, operation: str, agent: str | None = None) -> dict[str, Any]:
        """The attributes every span has: of a call of ``agent``, else of the agent that
        has the conversation now."""
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": operation, "gen_ai.agent.name": agent or self.answering,
            "gen_ai.conversation.id": self.thread_id, "bloge.run.id": self.run_id,
            "bloge.thread.id": self.thread_id,
        }
        if self.tracing.provider:
            attributes["gen_ai.provider.name"] = self.tracing.provider
        return attributes

    def _end_chat(self) -> None:
        held, self._chat = self._chat, None
        if held is None:
            return
        body, at = held
        attributes = self._chat_attributes(body)
        if self._messages is not None:
            attributes["gen_ai.input.messages"] = _json(self._messages)
        if self._answer is not None:
            attributes["gen_ai.output.messages"] = _json(self._answer)
        self._messages = self._answer = None
        self._chat_span(body, at, span_id_of(self.run_id, "chat", body["turn_number"]),
                        attributes)

    def _summary_span(self, body: Mapping[str, Any], at: float) -> None:
        """The model call a ``summary(n)`` memory made before turn ``turn_number``: a
        ``chat`` span of the run like a turn's, with ``bloge.memory.summary`` set."""
        attributes = self._chat_attributes(body)
        attributes["bloge.memory.summary"] = True
        attributes["bloge.memory.summarized_messages"] = body["messages_summarized"]
        self._chat_span(body, at, span_id_of(self.run_id, "summary", body["turn_number"]),
                        attributes)

    def _chat_attributes(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The attributes of the span of the model call ``body`` tells of."""
        attributes = self._common("chat")
        attributes.update({
            "gen_ai.request.model": body["model"],
            "gen_ai.usage.input_tokens": body["prompt_tokens"],
            "gen_ai.usage.output_tokens": body["completion_tokens"],
            "gen_ai.response.finish_reasons": (body["finish_reason"],),
            "bloge.turn": body["turn_number"],
        })
        if body.get("response_model"):
            attributes["gen_ai.response.model"] = body["response_model"]
        return attributes

    def _chat_span(self, body: Mapping[str, Any], at: float, span_id: int,
                   attributes: Mapping[str, Any]) -> None:
        """Export the span of the model call ``body`` tells of, which ended at ``at``, and
        its GenAI client metrics: its duration and its tokens."""
        model = body["model"]
        seconds = body["latency_ms"] / 1000.0
        self._span(f"chat {model}", span_id, self.context.span_id, kind=SpanKind.CLIENT,
                   attributes=attributes, start=at - seconds, end=at)
        measured = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
        if self.tracing.provider:
            measured["gen_ai.provider.name"] = self.tracing.provider
        self.tracing.operation_duration.record(seconds, measured)
        self.tracing.token_usage.record(body["prompt_tokens"],
                                        {**measured, "gen_ai.token.type": "input"})
        self.tracing.token_usage.record(body["completion_tokens"],
                                        {**measured, "gen_ai.token.type": "output"})

    def _failed_chat(self, body: Mapping[str, Any], at: float) -> None:
        """The model call a failure (or a cancellation) ended before it answered."""
        turn, asked = self._asked or (0, at)
        self._asked = None
        model = self.model or "unknown"
        error = self._exit.get("error_type") or body.get("error_type") or "error"
        attributes = self._common("chat")
        attributes.update({"gen_ai.request.model": model, "bloge.turn": turn,
                           "error.type": error})
        self._span(f"chat {model}", span_id_of(self.run_id, "chat", turn),
                   self.context.span_id, kind=SpanKind.CLIENT, attributes=attributes,
                   start=asked, end=at, error=error)
        measured = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model,
                    "error.type": error}
        if self.tracing.provider:
            measured["gen_ai.provider.name"] = self.tracing.provider
        self.tracing.operation_duration.record(max(at - asked, 0.0), measured)

    def _tool_span(self, body: Mapping[str, Any], dispatched: tuple[float, Mapping[str, Any]],
                   at: float) -> None:
        started, call = dispatched
        name = body["tool_name"]
        attributes = self._common("execute_tool")
        attributes.update({
            "gen_ai.tool.name": name, "gen_ai.tool.call.id": body["tool_call_id"],
            "gen_ai.tool.type": "function", "bloge.turn": body["turn_number"],
        })
        error = None
        decided = self._decisions.pop(body["tool_call_id"], None)
        if decided is not None:
            attributes.update(verdicts.approval_attributes(decided))
        if not body["success"] and (decided is None or decided[0] == verdicts.APPROVED):
            error = attributes["error.type"] = "tool_error"  # a refused call did not fail
        if self.tracing.capture_content:
            attributes["gen_ai.tool.call.arguments"] = call["arguments_json"]
            attributes["gen_ai.tool.call.result"] = body["result_summary"]
        self._span(f"execute_tool {name}", span_id_of(self.run_id, "tool", body["tool_call_id"]),
                   self.context.span_id, kind=SpanKind.INTERNAL, attributes=attributes,
                   start=started, end=at, error=error,
                   events=self._call_guards.pop(body["tool_call_id"], ()))

    def _run_span(self, kind: str, body: Mapping[str, Any], at: float) -> None:
        self._ended = True
        exited = self._exit
        attributes = self._common("invoke_agent", self.agent)
        exit_reason = exited.get("exit_reason") or body.get("exit_reason") or "stop"
        attributes["bloge.exit_reason"] = exit_reason
        if "total_turns" in exited:
            attributes["bloge.turns"] = exited["total_turns"]
            attributes["bloge.llm_calls"] = exited["total_llm_calls"]
            attributes["bloge.usage.total_tokens"] = exited["total_llm_tokens"]
        attributes.update(verdicts.usage_attributes(body.get("usage")))
        if kind == "paused":
            attributes["bloge.exit_reason"] = "paused"
            attributes.update(verdicts.pause_attributes(self._waiting))
        attributes.update(verdicts.budget_attributes(body.get("budget")))
        if self._segment:
            attributes["bloge.segment"] = self._segment
        error = None
        if kind == "error":
            error = attributes["error.type"] = (exited.get("error_type") or body.get("error_type")
                                                or exit_reason)
        elif self.tracing.capture_content and "content" in body:
            attributes["gen_ai.output.messages"] = _json(
                [{"role": "assistant", "parts": [{"type": "text", "content": body["content"]}]}])
        parent_id = self._segment_parent or (
            self.parent.span_id if self.parent is not None else 0)
        events = [*self._run_events, *(g for held in self._call_guards.values() for g in held)]
        self._run_events, self._call_guards = [], {}
        self._span(f"invoke_agent {self.agent}", self.context.span_id, parent_id,
                   kind=SpanKind.INTERNAL, attributes=attributes, start=self.started_at,
                   end=at, error=error, events=events)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
