"""``AgentEventJournalBridge``: every agent callback, one journal event; and the events of the
calls paused runs wait on, as the run store tells them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from bloge.agent import AgentCallbackContext
from bloge.journal.callbacks import CallbackListener
from bloge.journal.chain import new_event
from bloge.journal.redaction import Redactor, callback_redactor

if TYPE_CHECKING:
    from bloge.journal.journal import EventJournal

class AgentEventJournalBridge(CallbackListener):
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
    inside a string is replaced. ``redactor`` stands for the one these would build (the run
    store passes its own). A failed run's ``on_agent_loop_exited`` carries ``error_type`` and
    ``error_message``, redacted alike.

    Each callback passes the journal's chain at once; the journal writes in batches (see
    :class:`EventJournal`), and the events of a run are all written out when its loop exits.
    A journal failure is reported once and never breaks the run.
    """

    def __init__(
        self,
        journal: EventJournal,
        *,
        redact_keys: Iterable[str] = (),
        secrets: Iterable[str] = (),
        redactor: Redactor | None = None,
    ) -> None:
        self.journal = journal
        self.redactor = redactor if redactor is not None else callback_redactor(redact_keys,
                                                                                secrets)

    def __repr__(self) -> str:
        return f"AgentEventJournalBridge({self.journal!r})"

    def record(self, callback: str, context: AgentCallbackContext, payload: object) -> None:
        self.journal.log(new_event(callback, (context, payload), {}), redactor=self.redactor)
        if callback == "on_agent_loop_exited":
            # The run is over: its events go out now rather than with a later run's.
            self.journal.flush()

    def record_call_event(self, kind: str, run_id: str, body: Mapping[str, Any]) -> None:
        """An event of a call a paused run waits on (``approval_required``,
        ``approval_decided``, ``approval_expired``, ``tool_results_required``,
        ``tool_results_posted``, ``tool_results_expired``), as the run store tells it (see
        :mod:`bloge.store.call_journal`): ``event`` is ``kind``, ``execution_id`` the run's
        id, then the event's fields, redacted as a callback's are. Written out at once: a
        decision is rare, and may be all a command does."""
        self.journal.log(new_event(kind, (), {"execution_id": run_id, **body}),
                         redactor=self.redactor)
        self.journal.flush()

