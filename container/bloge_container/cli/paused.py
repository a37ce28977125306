"""A run that ``bloge run`` (or ``bloge runs resume``) left paused: what it waits on and the
commands that decide it (exit :data:`EXIT_PAUSED`), or, with ``--wait``, waiting for the
decisions and continuing it here."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import typer

from bloge_container.cli.console import EXIT_PAUSED, EXIT_RUN_FAILED, err, out

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


def report_paused(paused: RunPaused, *, as_json: bool, wait: bool) -> None:
    """Print what the run waits on and how to decide it; exit :data:`EXIT_PAUSED` (or, with
    ``wait``, raise :class:`WaitingForDecisionsError`)."""
    run_id = paused.run_id or ""
    if as_json:
        out.print(json.dumps({"run_id": run_id, "status": paused.status,
                              "pending": [call.to_dict() for call in paused.pending]},
                             ensure_ascii=False, indent=2), markup=False)
    else:
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
    if wait:
        raise WaitingForDecisionsError(run_id)
    raise typer.Exit(EXIT_PAUSED)


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
