"""The store's records as a reader is shown them: tool arguments and results masked as the
journal masks them (by the store's redactor, the one its run events pass).

A run's own caller hears its answer whole; whoever reads the records afterwards — the runs
and console APIs, ``bloge runs show`` and ``bloge threads show`` — gets these: a tool call's
arguments masked as the journal masks an ``arguments_json``, a tool's result as a
``result_summary``, whether in a thread's messages, a run's input, its output's
``tool_results`` or the ``done`` event that holds that output. The events the run recorded
otherwise passed the redactor when they were written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from bloge.journal.redaction import Redactor
from bloge.store.records import Run, RunEvent, StoredMessage


def masked_message(redactor: Redactor, stored: StoredMessage) -> dict[str, Any]:
    """``stored`` as JSON data, its tool calls' arguments and a tool message's result
    masked."""
    return _masked_message(redactor, stored.to_dict())


def masked_run(redactor: Redactor, run: Run) -> dict[str, Any]:
    """``run``'s record as JSON data (:meth:`Run.to_dict`), the tool calls and results of
    its input and its output's ``tool_results`` masked (its waiting calls' arguments were
    masked when stored)."""
    document = run.to_dict()
    document["input"] = [_masked_message(redactor, message) for message in document["input"]]
    if document["output"] is not None:
        document["output"] = _masked_output(redactor, document["output"])
    return document


def masked_event(redactor: Redactor, event: RunEvent) -> RunEvent:
    """``event``, the ``tool_results`` of a ``done`` event's output masked."""
    if event.type != "done":
        return event
    return dataclasses.replace(event, body=_masked_output(redactor, event.body))


def _masked_output(redactor: Redactor, output: Mapping[str, Any]) -> dict[str, Any]:
    """An output document (``AgentOutput.to_dict``) with its tool results masked."""
    masked = dict(output)
    if isinstance(masked.get("tool_results"), Mapping):
        # Result by result: a call id is no field name, and must not hide its result whole.
        masked["tool_results"] = {call_id: _masked(redactor, "result_summary", result)
                                  for call_id, result in masked["tool_results"].items()}
    if isinstance(masked.get("messages"), list):
        masked["messages"] = [_masked_message(redactor, m) for m in masked["messages"]]
    return masked


def _masked_message(redactor: Redactor, message: Mapping[str, Any]) -> dict[str, Any]:
    """A message's JSON data (``LlmMessage.to_dict``), its tool calls' arguments and a tool
    message's result masked."""
    data = dict(message)
    if "tool_calls" in data:
        data["tool_calls"] = [{**call, "arguments": _masked(redactor, "arguments_json",
                                                             call["arguments"])}
                              for call in data["tool_calls"]]
    if data.get("role") == "tool" and isinstance(data.get("content"), str):
        data["content"] = _masked(redactor, "result_summary", data["content"])
    return data


def _masked(redactor: Redactor, field: str, value: Any) -> Any:
    """``value`` masked as the journal masks its event's ``field``."""
    return redactor(None, "", {field: value})[field]
