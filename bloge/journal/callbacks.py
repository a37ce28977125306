"""Agent callbacks as journal events: ``CallbackListener``, a listener that handles every
callback alike, and the fields each event takes from the callback's records.

Two listeners build on it: the journal's :class:`~bloge.journal.bridge.AgentEventJournalBridge`
and the run store's events (:func:`bloge.store.events.callback_events`), which take their
fields from :func:`record_fields` and redact them with one :class:`~bloge.journal.Redactor`.
Nothing here loads structlog: a recorded run needs none of it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, MutableMapping
from operator import attrgetter
from typing import Any, TypeVar

from bloge.agent import (
    AgentCallbackContext,
    AgentExecutionListener,
    GuardCheckedPayload,
    HandoffPayload,
    LlmCalledPayload,
    LoopExitedPayload,
    MemorySummarizedPayload,
    ToolCompletedPayload,
    ToolDispatchedPayload,
    TurnStartedPayload,
)


class CallbackListener(AgentExecutionListener):
    """A listener that hands every callback to :meth:`record`, with its name (e.g.
    ``"on_agent_tool_completed"``), its context and its payload."""

    def record(self, callback: str, context: AgentCallbackContext, payload: object) -> None:
        """Record one callback."""
        raise NotImplementedError

    def on_agent_turn_started(
        self, context: AgentCallbackContext, payload: TurnStartedPayload
    ) -> None:
        self.record("on_agent_turn_started", context, payload)

    def on_agent_llm_called(self, context: AgentCallbackContext, payload: LlmCalledPayload) -> None:
        self.record("on_agent_llm_called", context, payload)

    def on_agent_tool_dispatched(
        self, context: AgentCallbackContext, payload: ToolDispatchedPayload
    ) -> None:
        self.record("on_agent_tool_dispatched", context, payload)

    def on_agent_tool_completed(
        self, context: AgentCallbackContext, payload: ToolCompletedPayload
    ) -> None:
        self.record("on_agent_tool_completed", context, payload)

    def on_agent_guard_checked(
        self, context: AgentCallbackContext, payload: GuardCheckedPayload
    ) -> None:
        self.record("on_agent_guard_checked", context, payload)

    def on_agent_handoff(self, context: AgentCallbackContext, payload: HandoffPayload) -> None:
        self.record("on_agent_handoff", context, payload)

    def on_agent_memory_summarized(self, context: AgentCallbackContext,
                                   payload: MemorySummarizedPayload) -> None:
        self.record("on_agent_memory_summarized", context, payload)

    def on_agent_loop_exited(
        self, context: AgentCallbackContext, payload: LoopExitedPayload
    ) -> None:
        self.record("on_agent_loop_exited", context, payload)


Fields = TypeVar("Fields", bound=MutableMapping[str, Any])


def record_fields(fields: Fields, record: object) -> Fields:
    """``fields`` with those of ``record`` (a dataclass instance) added in declaration
    order. ``TypeError`` when ``record`` is not a dataclass instance."""
    reader = _READERS.get(type(record)) or _reader(type(record))
    fields.update(zip(reader.names, reader.values(record), strict=True))
    return fields


@dataclasses.dataclass(frozen=True, slots=True)
class _Reader:
    """The field names of a dataclass, in declaration order, and what reads their values
    off an instance in one call."""

    names: tuple[str, ...]
    values: Callable[[object], tuple[Any, ...]]


_READERS: dict[type, _Reader] = {}


def _reader(cls: type) -> _Reader:
    """The reader of the dataclass ``cls`` (remembered)."""
    names = tuple(field.name for field in dataclasses.fields(cls))
    # attrgetter of one name gives the value itself, not a tuple of one.
    values = attrgetter(*names) if len(names) > 1 else lambda record: tuple(
        getattr(record, name) for name in names)
    reader = _READERS[cls] = _Reader(names, values)
    return reader
