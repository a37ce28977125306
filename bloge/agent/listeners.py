"""Agent execution listeners: the callbacks, their payloads, and the chain that calls them.

Order per turn: ``on_agent_turn_started`` → ``on_agent_llm_called`` → one
``on_agent_tool_dispatched`` per call (in the model's order) → one ``on_agent_tool_completed``
per call (as they finish) → the next turn, or ``on_agent_loop_exited``; our addition
``on_agent_guard_checked`` comes where a guard gives its verdict, and ``on_agent_handoff``
after the tool round in which the model handed the conversation to another agent, and
``on_agent_memory_summarized`` where a ``summary(n)`` memory's model call folded the oldest
messages into a summary (before the turn it makes room for starts). A listener
that raises is logged and skipped; it never breaks the run. A listener may be any object: it
is called for the callbacks it has and not for the others.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from bloge.llm.types import LlmResponse

_log = logging.getLogger("bloge.agent.listeners")


@dataclass(frozen=True, slots=True)
class AgentCallbackContext:
    """Where the callback comes from: the execution, graph, node and agent operator."""

    execution_id: str
    graph_name: str | None
    node_id: str | None
    operator_ref: str


@dataclass(frozen=True, slots=True)
class TurnStartedPayload:
    turn_number: int
    message_count: int


@dataclass(frozen=True, slots=True)
class LlmCalledPayload:
    """A model call ended. ``latency_ms`` is the whole call, and ``pool_wait_ms`` the part of
    it the call spent waiting for a free connection of its provider's pool (our addition;
    ``0.0`` when it waited for none, or its provider does not say).

    ``model`` is the model that answered (the provider's name for it, after aliases and
    fallbacks); our additions: ``cache_read_tokens`` and ``cache_write_tokens`` of the
    ``prompt_tokens`` came from and went to the provider's prompt cache, and
    ``fallback_from`` names the agent's models tried first, which failed or were skipped;
    ``response_model`` is the model as its server named it in the answer (``None`` when it
    did not say).
    """

    turn_number: int
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    finish_reason: str
    pool_wait_ms: float = 0.0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    fallback_from: tuple[str, ...] = ()
    response_model: str | None = None

    @classmethod
    def of(cls, turn: int, model: str, response: LlmResponse, latency_ms: float,
           pool_wait_ms: float = 0.0) -> LlmCalledPayload:
        """The payload of ``response``, asked of ``model`` in turn ``turn``."""
        return cls(turn, response.model or model, response.prompt_tokens,
                   response.completion_tokens, latency_ms, response.finish_reason, pool_wait_ms,
                   response.cache_read_tokens, response.cache_write_tokens,
                   response.fallback_from, response.served_model)


@dataclass(frozen=True, slots=True)
class ToolDispatchedPayload:
    """``replayed``: the call belongs to a round a resumed run continues, and its result comes
    from the run's ledger: it was dispatched before the run stopped, and does not run again."""

    turn_number: int
    tool_call_id: str
    tool_name: str
    arguments_json: str
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class ToolCompletedPayload:
    """``replayed``: the result was read from the run's ledger (a resumed run), not produced
    now: the call completed before the run stopped, and was counted then."""

    turn_number: int
    tool_call_id: str
    tool_name: str
    success: bool
    latency_ms: float
    result_summary: str
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class LoopExitedPayload:
    """``exit_reason``: ``"stop"``, ``"exit_condition"``, ``"max_turns"``, and our additions
    ``"error"`` (a failure ended the run) and ``"cancelled"``.

    When the run failed or was cancelled, ``error_type`` names the exception's class and
    ``error_message`` holds its message with credentials masked; both are ``None`` otherwise.
    """

    total_turns: int
    total_llm_calls: int
    total_llm_tokens: int
    total_latency_ms: float
    exit_reason: str
    error_type: str | None = None
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class GuardCheckedPayload:
    """A guard gave its verdict (our addition): ``verdict`` is ``"pass"``, ``"trip"`` (the
    run stops) or ``"reject"`` (the call or answer was refused, the run goes on); ``kind`` is
    what it checked (``"input"``, ``"output"``, ``"tool_call"``, with the call's id and
    tool). ``error_type`` names what the guard raised, if it raised (it then counts as
    tripped, or as passed when it fails open). ``findings`` are counts or labels, never the
    text checked."""

    turn_number: int
    guard: str
    kind: str
    verdict: str
    reason: str
    latency_ms: float
    tool_call_id: str | None = None
    tool_name: str | None = None
    error_type: str | None = None
    findings: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class HandoffPayload:
    """The conversation went to another agent (our addition): in turn ``turn_number`` the
    model of ``from_agent`` called the handoff ``handoff`` (call ``tool_call_id``), giving
    ``reason`` (empty when it gave none); ``to_agent`` answers from the next turn on."""

    turn_number: int
    handoff: str
    from_agent: str
    to_agent: str
    tool_call_id: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class MemorySummarizedPayload:
    """A ``summary(n)`` memory summarized (our addition): before turn ``turn_number``, one
    model call of the run summarized ``messages_summarized`` messages (the oldest, after the
    previous summary if there was one), which the summary replaces in the view. ``model``
    is the model that answered; the tokens count in the run's usage and budgets like a
    turn's."""

    turn_number: int
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    finish_reason: str
    messages_summarized: int
    response_model: str | None = None

    @classmethod
    def of(cls, turn: int, model: str, response: LlmResponse, latency_ms: float,
           summarized: int) -> MemorySummarizedPayload:
        """The payload of ``response``, a summary of ``summarized`` messages asked of
        ``model`` before turn ``turn``."""
        return cls(turn, response.model or model, response.prompt_tokens,
                   response.completion_tokens, latency_ms, response.finish_reason, summarized,
                   response.served_model)


class AgentExecutionListener:
    """Subclass and override the callbacks you care about; the others do nothing."""

    def on_agent_turn_started(
        self, context: AgentCallbackContext, payload: TurnStartedPayload
    ) -> None:
        """A turn begins (before the model call)."""

    def on_agent_llm_called(self, context: AgentCallbackContext, payload: LlmCalledPayload) -> None:
        """The model answered."""

    def on_agent_tool_dispatched(
        self, context: AgentCallbackContext, payload: ToolDispatchedPayload
    ) -> None:
        """A tool call was handed to the dispatcher."""

    def on_agent_tool_completed(
        self, context: AgentCallbackContext, payload: ToolCompletedPayload
    ) -> None:
        """A tool call finished, successfully or not."""

    def on_agent_loop_exited(
        self, context: AgentCallbackContext, payload: LoopExitedPayload
    ) -> None:
        """The loop ended; ``payload.exit_reason`` says why."""

    def on_agent_guard_checked(
        self, context: AgentCallbackContext, payload: GuardCheckedPayload
    ) -> None:
        """A guard gave its verdict (our addition)."""

    def on_agent_handoff(self, context: AgentCallbackContext, payload: HandoffPayload) -> None:
        """The run went on with another agent (our addition; see
        :mod:`bloge.agent.handoffs`)."""

    def on_agent_memory_summarized(self, context: AgentCallbackContext,
                                   payload: MemorySummarizedPayload) -> None:
        """The memory folded the oldest messages into a summary, with a model call of the
        run (our addition)."""


Callback = Literal[
    "on_agent_turn_started",
    "on_agent_llm_called",
    "on_agent_tool_dispatched",
    "on_agent_tool_completed",
    "on_agent_loop_exited",
    "on_agent_guard_checked",
    "on_agent_handoff",
    "on_agent_memory_summarized",
]
CALLBACKS: tuple[Callback, ...] = get_args(Callback)


#: A listener's bound callback method.
Handler = Callable[[AgentCallbackContext, Any], object]


class ListenerChain:
    """Calls every listener in order; a raising listener is logged and the others still run.

    A listener is called only for the callbacks it has: the methods are looked up once, when
    the chain is built, so a listener without ``on_agent_llm_called`` (or one inheriting the
    do-nothing method of :class:`AgentExecutionListener`) costs nothing per event. ``wanted``
    holds the callbacks some listener has: a caller builds an event's payload only when its
    callback is there.

    A run's own listeners (its recorder's) come last through :meth:`then`, which shares what
    the chain looked up; their methods' table is shared by listeners of a class
    (:func:`_methods`), so the chain every run in progress keeps holds no table of its own.
    """

    __slots__ = ("_handlers", "_own", "listeners", "wanted")

    def __init__(self, listeners: Iterable[AgentExecutionListener]) -> None:
        self.listeners = tuple(listeners)
        self._handlers: dict[str, tuple[Handler, ...]] = {
            callback: tuple(handler for listener in self.listeners
                            if (handler := _handler(listener, callback)) is not None)
            for callback in CALLBACKS
        }
        self._own: tuple[tuple[object, Mapping[str, Method]], ...] = ()
        self.wanted: frozenset[str] = _shared(frozenset(
            callback for callback, handlers in self._handlers.items() if handlers))

    def then(self, listener: AgentExecutionListener) -> ListenerChain:
        """This chain, then ``listener``, a listener of one run."""
        methods = _methods(listener)
        chain = ListenerChain.__new__(ListenerChain)
        chain.listeners = (*self.listeners, listener)
        chain._handlers = self._handlers  # noqa: SLF001 -- a chain of its own class
        chain._own = (*self._own, (listener, methods))  # noqa: SLF001 -- as above
        chain.wanted = _shared(self.wanted | frozenset(methods))
        return chain

    def __bool__(self) -> bool:
        return bool(self.listeners)

    def notify(self, callback: Callback, context: AgentCallbackContext, payload: object) -> None:
        """Deliver one event to every listener that has ``callback``."""
        for handler in self._handlers[callback]:
            _deliver(handler, callback, context, payload)
        for listener, methods in self._own:
            if (method := methods.get(callback)) is not None:
                try:
                    method(listener, context, payload)
                except Exception:  # noqa: BLE001 -- a raising listener is logged and skipped
                    _log.warning("listener %r raised in %s; skipped", listener, callback,
                                 exc_info=True)


#: A listener's callback method, called with the listener first.
Method = Callable[[Any, AgentCallbackContext, Any], object]

#: Each table of class methods :func:`_methods` found, once: the runs in progress share them.
_TABLES: dict[tuple[tuple[str, Method], ...], Mapping[str, Method]] = {}


def _methods(listener: object) -> Mapping[str, Method]:
    """``listener``'s methods for the callbacks it has (as :func:`_handler` finds them), by
    callback. Looked up for each run (a method patched on its class is seen by the next
    run), but the table of a listener whose methods are its class's is shared by every
    listener with those same methods; one with a method of its own (an attribute, a static
    or class method) gets a table of its own."""
    methods: dict[str, Method] = {}
    of_class = True
    for callback in CALLBACKS:
        handler = _handler(listener, callback)
        if handler is None:
            continue
        if (function := _of_its_class(listener, callback, handler)) is not None:
            methods[callback] = function
        else:
            methods[callback] = _bound(handler)
            of_class = False
    return _TABLES.setdefault(tuple(methods.items()), methods) if of_class else methods


def _of_its_class(listener: object, callback: str, handler: Handler) -> Method | None:
    """The function of ``handler``, ``listener``'s method for ``callback``, when that is the
    method of its class (not an attribute of its own, a static or a class method)."""
    function = getattr(handler, "__func__", None)
    if function is None or getattr(handler, "__self__", None) is not listener:
        return None
    of_class: Method | None = getattr(type(listener), callback, None)
    return of_class if of_class is function else None


def _bound(handler: Handler) -> Method:
    """``handler``, one listener's own, called as a :data:`Method` is."""
    def method(_listener: object, context: AgentCallbackContext, payload: object) -> object:
        return handler(context, payload)
    return method


#: Each set of callbacks wanted, once: the chains of the runs in progress share them.
_WANTED: dict[frozenset[str], frozenset[str]] = {}


def _shared(wanted: frozenset[str]) -> frozenset[str]:
    return _WANTED.setdefault(wanted, wanted)


def _deliver(handler: Handler, callback: str, context: AgentCallbackContext,
             payload: object) -> None:
    try:
        handler(context, payload)
    except Exception:  # noqa: BLE001 -- a raising listener is logged and skipped
        _log.warning("listener %r raised in %s; skipped",
                     getattr(handler, "__self__", handler), callback, exc_info=True)


def _handler(listener: object, callback: str) -> Handler | None:
    """``listener``'s method for ``callback``, or ``None`` when it has none, or only the one
    :class:`AgentExecutionListener` gives, which does nothing."""
    method: Any = getattr(listener, callback, None)
    if not callable(method):
        return None
    if getattr(method, "__func__", None) is getattr(AgentExecutionListener, callback):
        return None
    handler: Handler = method
    return handler
