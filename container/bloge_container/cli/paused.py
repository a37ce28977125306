"""A run that ``bloge run`` (or ``bloge runs resume``) left paused: what it waits on and the
commands that decide it (exit :data:`EXIT_PAUSED`), or, with ``--wait``, waiting for the
decisions and continuing it here."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from bloge_container.cli.console import EXIT_PAUSED, EXIT_RUN_FAILED, EXIT_USAGE, err, out

if TYPE_CHECKING:
    from bloge.agent import RunPaused
    from bloge.store import Run, Store

#: How often ``--wait`` reads the run again, in seconds.
WAIT_POLL_SECONDS = 1.0


class WaitingForDecisionsError(Exception):
    """``--wait``: run ``run_id`` paused; wait for its decisions, then continue it."""

    def __init__(self, run_id: str) -> None:
        super().__init__(run_id)
        self.run_id = run_id


def report_paused(paused: RunPaused, *, as_json: bool, streamed: bool, wait: bool) -> None:
    """Print what the run waits on and how to decide it; exit :data:`EXIT_PAUSED` (or, with
    ``wait``, raise :class:`WaitingForDecisionsError`). A run no store keeps cannot be
    decided: that is said instead, and the exit is :data:`EXIT_USAGE`. With ``streamed``
    JSON, the pause is one line, the stream's last (``"type": "paused"``)."""
    run_id = paused.run_id
    if run_id is None:
        _unrecorded(paused, as_json=as_json, streamed=streamed)
    if as_json:
        document = {"run_id": run_id, "thread_id": paused.thread_id, "status": paused.status,
                    "pending": [{**call.to_dict(), "run_id": call.run_id or run_id}
                                for call in paused.pending]}
        _print(document, "paused", streamed=streamed)
    else:
        _print_text(paused, run_id, wait=wait)
    if wait:
        raise WaitingForDecisionsError(run_id)
    raise typer.Exit(EXIT_PAUSED)


def _print_text(paused: RunPaused, run_id: str, *, wait: bool) -> None:
    err.print(f"run {run_id} is {paused.status.replace('_', ' ')}:", markup=False)
    for call in paused.pending:
        where = f"  in sub-agent run {call.run_id}" if call.run_id else ""
        err.print(f"  {call.call_id}  {call.tool}({call.arguments}){where}", markup=False)
    for call in paused.pending:
        if call.kind == "approval":
            err.print(f"  bloge approvals approve {run_id} {call.call_id} [--reason "
                      f'"…"]\n  bloge approvals deny {run_id} {call.call_id} --reason '
                      '"…"', markup=False)
        else:
            err.print(f'  POST /runs/{run_id}/tool-results {{"{call.call_id}": …}}',
                      markup=False)
    if not wait:
        err.print("the run continues when the last call is decided (or run it with "
                  "--wait to wait for the decisions here)", markup=False, style="dim")
    if paused.thread_id is not None:
        err.print(f"run {run_id} on thread {paused.thread_id}", markup=False, style="dim")


def _unrecorded(paused: RunPaused, *, as_json: bool, streamed: bool) -> NoReturn:
    """A run that paused with the run store off: nothing keeps it for a decision."""
    calls = ", ".join(f"{call.tool} ({call.call_id})" for call in paused.pending)
    message = (f"the run is {paused.status.replace('_', ' ')} ({calls}), but a paused run "
               "waits in the run store, and bloge.store.enabled is false: nothing can decide "
               "it; turn the store on (bloge.store.enabled: true, or BLOGE_STORE__ENABLED="
               "true) and run it again")
    if as_json:
        _print({"error": {"type": "RunPaused", "message": message, "cause": None},
                "run_id": None, "status": paused.status,
                "pending": [call.to_dict() for call in paused.pending]},
               "error", streamed=streamed)
    else:
        err.print(f"error: {message}", markup=False)
    raise typer.Exit(EXIT_USAGE)


def _print(document: dict[str, Any], kind: str, *, streamed: bool) -> None:
    """``document`` on stdout: one more line of the stream's (typed ``kind``), or indented."""
    if streamed:
        out.print(json.dumps({"type": kind, **document}, ensure_ascii=False), markup=False)
    else:
        out.print(json.dumps(document, ensure_ascii=False, indent=2), markup=False)


async def decided(store: Store, *, run_id: str, poll: float = WAIT_POLL_SECONDS) -> Run:
    """The run once nothing of it waits any more: decided and still paused (to continue
    here), or continued by another process and ended."""
    while True:
        run = await store.get_run(run_id)
        if run.status.paused and not run.pending_approvals:
            return run
        if run.status.finished:
            return run
        await asyncio.sleep(poll)


def ended_elsewhere(run: Run, *, as_json: bool) -> None:
    """A run another process continued and ended: its answer, or its failure (exit 1)."""
    if as_json:
        out.print(json.dumps(run.to_dict(), ensure_ascii=False, indent=2), markup=False)
    elif run.output is not None:
        out.print(str(run.output.get("content", "")), markup=False)
    if run.error is not None or run.output is None:
        if not as_json:
            err.print(f"run {run.id} ended {run.status.value}"
                      + (f": {run.error.message}" if run.error else ""), markup=False)
        raise typer.Exit(EXIT_RUN_FAILED)
