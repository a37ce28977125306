"""``AgentEventJournalBridge``: every agent callback, one journal event."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from bloge.agent import (
    AgentCallbackContext,
    AgentExecutionListener,
    LlmCalledPayload,
    LoopExitedPayload,
    ToolCompletedPayload,
    ToolDispatchedPayload,
    TurnStartedPayload,
)
from bloge.journal.redaction import Redactor

if TYPE_CHECKING:
    # The store imports this module for its field lists: the journal itself, and structlog
    # with it, load when a journal is configured.
    from bloge.journal.journal import EventJournal

#: Payload fields that hold JSON text (possibly cut short): redacted as data when they parse,
#: scanned as text when they do not.
JSON_FIELDS = ("arguments_json", "result_summary")
#: Payload fields that hold free text, scanned for credentials. The other string fields are
#: names and ids the framework, the DSL or the provider chose; known secrets are hidden in them.
TEXT_FIELDS = ("error_message",)


class AgentEventJournalBridge(AgentExecutionListener):
    """An ``AgentExecutionListener`` that records every callback in ``journal``.

    Each event carries ``event`` (the callback's name, e.g. ``"on_agent_tool_completed"``),
    ``timestamp`` (ISO-8601 UTC with microseconds, taken when the callback ran), the
    context's ``execution_id``, ``graph_name``, ``node_id`` and ``operator_ref``, every
    field of the payload under its own name, and ``seq``, 1, 2, 3… within the execution.

    Redaction (see :mod:`bloge.journal.redaction`): values under sensitive names (built in,
    or named in ``redact_keys``) become ``"[redacted]"`` at any depth — inside the JSON of
    ``arguments_json`` and ``result_summary`` too, which are scanned as text when they are
    not valid JSON — credentials in text (``password=…``, ``Authorization: Bearer …``, URL
    user-info) are masked, and every occurrence of a value from ``secrets`` (API keys, say)
    inside a string is replaced. A failed run's ``on_agent_loop_exited`` carries
    ``error_type`` and ``error_message``, redacted alike.

    Recording costs the loop a tuple per callback; the events are rendered at the loop's
    next await and written in batches (see :class:`EventJournal`), and the events of a run
    are all written out when its loop exits.
    A journal failure is reported once and never breaks the run.
    """

    def __init__(
        self,
        journal: EventJournal,
        *,
        redact_keys: Iterable[str] = (),
        secrets: Iterable[str] = (),
    ) -> None:
        self.journal = journal
        redactor = Redactor(redact_keys, secrets, json_keys=JSON_FIELDS, text_keys=TEXT_FIELDS)
        self._emit = journal.channel(redactor).emit

    def __repr__(self) -> str:
        return f"AgentEventJournalBridge({self.journal!r})"

    def on_agent_turn_started(
        self, context: AgentCallbackContext, payload: TurnStartedPayload
    ) -> None:
        self._emit("on_agent_turn_started", context, payload)

    def on_agent_llm_called(self, context: AgentCallbackContext, payload: LlmCalledPayload) -> None:
        self._emit("on_agent_llm_called", context, payload)

    def on_agent_tool_dispatched(
        self, context: AgentCallbackContext, payload: ToolDispatchedPayload
    ) -> None:
        self._emit("on_agent_tool_dispatched", context, payload)

    def on_agent_tool_completed(
        self, context: AgentCallbackContext, payload: ToolCompletedPayload
    ) -> None:
        self._emit("on_agent_tool_completed", context, payload)

    def on_agent_loop_exited(
        self, context: AgentCallbackContext, payload: LoopExitedPayload
    ) -> None:
        self._emit("on_agent_loop_exited", context, payload)
        # The run is over: its events go out now rather than at the loop's next turn.
        self.journal.flush()
