"""What a failed or interrupted run leaves behind: its checkpoint under the project's
``var/checkpoints/``, the command that resumes it, and with ``--json`` one JSON document."""

from __future__ import annotations

import json
import shlex
import signal
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from bloge_container.cli.console import EXIT_INTERRUPTED, EXIT_RUN_FAILED, EXIT_USAGE, err, out
from bloge_container.cli.interrupt import Interrupted, exit_now

if TYPE_CHECKING:
    from bloge import AgentCheckpoint, AgentRunError

CHECKPOINTS = Path("var/checkpoints")


@dataclass(frozen=True, slots=True)
class Invocation:
    """How ``bloge run`` was called, so that the resume command names the same run."""

    target: str
    agent_id: str | None
    max_turns: int | None
    config: Path | None
    profile: str | None
    budget: tuple[str, ...] = ()
    """The ``--budget`` limits given."""


@dataclass(frozen=True, slots=True)
class Reporting:
    """Where and how to report: the project folder, the secrets to keep out, the format."""

    project: Path
    secrets: Sequence[str]
    as_json: bool
    streamed: bool
    durable: bool = True
    """Whether the store keeps the run for later commands (not ``memory://``)."""


def run_failed(error: AgentRunError, invocation: Invocation, reporting: Reporting) -> NoReturn:
    """Save the failed run's checkpoint, report it with the resume command, exit 1 (2 when
    the run store refused a write: a run-store error, to fix before resuming)."""
    from bloge.store import StoreError

    _report(error, invocation, reporting)
    raise typer.Exit(EXIT_USAGE if isinstance(error.__cause__, StoreError) else EXIT_RUN_FAILED)


def run_interrupted(stop: BaseException, invocation: Invocation,
                    reporting: Reporting) -> NoReturn:
    """After Ctrl-C, SIGTERM or ``bloge runs cancel`` (``stop``, the cancellation): save the
    checkpoint the cancelled run carried (its ``__cause__``), report, and end the process
    with 130 (143 after SIGTERM) without waiting for tool threads still running."""
    from bloge import AgentRunError

    cause = stop.__cause__
    lead, code = ((stop.lead, stop.exit_code) if isinstance(stop, Interrupted)
                  else ("interrupted", EXIT_INTERRUPTED))
    if isinstance(cause, AgentRunError):
        _report(cause, invocation, reporting, lead=lead)
    elif reporting.as_json:
        _print_document({"error": {"type": _interruption_type(stop), "message": lead,
                                   "cause": None},
                         "exit_reason": "cancelled", "checkpoint_file": None,
                         "resume_command": None}, reporting)
    else:
        err.print(lead, markup=False)
    exit_now(code)


def _interruption_type(stop: BaseException) -> str:
    if isinstance(stop, Interrupted) and stop.signum == signal.SIGTERM:
        return "SIGTERM"
    return "KeyboardInterrupt"


def _report(error: AgentRunError, invocation: Invocation, reporting: Reporting, *,
            lead: str | None = None) -> None:
    """Print the stopped run: ``lead`` (else ``error`` or ``interrupted``), the message, the
    commands that resume it (none for a run whose input its guard refused: kept nowhere,
    nothing is left to answer)."""
    from bloge import BudgetExceededError, GuardrailTrippedError, MaxTurnsExceededError
    from bloge.llm.providers.server_errors import redact

    message = redact(str(error), reporting.secrets)
    if isinstance(error, GuardrailTrippedError) and error.kind == "input":
        _report_refused_input(error, message, reporting, lead=lead)
        return
    recorded = error.run_id if reporting.durable else None
    saved = _shown(save_checkpoint(error.checkpoint, reporting.project, run_id=recorded))
    max_turns = invocation.max_turns
    if isinstance(error, MaxTurnsExceededError):
        max_turns = max(error.max_turns * 2, error.checkpoint.turn_count + 1)
    if isinstance(error, BudgetExceededError) and error.scope != "key":
        raised = raised_limit(error)
        kept = tuple(limit for limit in invocation.budget
                     if limit.partition("=")[0] != raised.partition("=")[0])
        invocation = replace(invocation, budget=(*kept, raised))
    command = _resume_command(invocation, saved, max_turns)
    # A recorded run also resumes from the store, by its id (with its ledger: tool calls
    # that completed are not run again).
    run_command = (None if error.run_id is None or not reporting.durable
                   else _resume_run_command(invocation, error.run_id, max_turns))
    if reporting.as_json:
        _print_document(_document(error, message, saved=saved, command=command,
                                  run_command=run_command), reporting)
        return
    if lead is None:
        lead = "interrupted" if error.exit_reason == "cancelled" else "error"
    err.print(f"{lead}: {message}", markup=False)
    if run_command is not None:
        err.print(f"run {error.run_id} is recorded; resume it with:", markup=False)
        err.print(f"  {run_command}", markup=False)
    err.print(f"checkpoint saved to {saved}; resume with:", markup=False)
    err.print(f"  {command}", markup=False)


def _report_refused_input(error: AgentRunError, message: str, reporting: Reporting, *,
                          lead: str | None) -> None:
    if reporting.as_json:
        _print_document(_document(error, message, saved=None, command=None, run_command=None),
                        reporting)
        return
    err.print(f"{lead or 'error'}: {message}", markup=False)
    err.print("its input was refused and kept nowhere, so there is nothing to resume: "
              "send another input", markup=False)


def _document(error: AgentRunError, message: str, *, saved: str | None, command: str | None,
              run_command: str | None) -> dict[str, Any]:
    """``--json``'s document of a stopped run."""
    cause = error.__cause__
    return {
        "error": {"type": type(error).__name__, "message": message,
                  "cause": type(cause).__name__ if cause is not None else None},
        "exit_reason": error.exit_reason,
        "run_id": error.run_id,
        "thread_id": error.thread_id,
        "checkpoint_file": saved,
        "resume_command": command,
        "resume_run_command": run_command,
    }


def raised_limit(error: Any) -> str:
    """The ``--budget`` limit that lets a run a budget stopped go on: twice the limit, or
    what it used and twice what it needed, whichever is more, rounded up (a thread's as
    ``thread.<limit>``)."""
    import math

    name = error.limit_name
    value = max(error.limit * 2, error.used + error.needed * 2)
    if name == "usd":
        cents = math.ceil(value * 100 - 1e-9)
        shown = f"{cents / 100:.2f}" if cents else f"{value:.6f}"
    elif name == "time":
        shown = f"{math.ceil(value) or 1}s"
    else:
        shown = str(math.ceil(value) or 1)
    prefix = "thread." if error.scope == "thread" else ""
    return f"{prefix}{name}={shown}"


def save_checkpoint(checkpoint: AgentCheckpoint, project: Path, *,
                    run_id: str | None = None) -> Path:
    """A new file of ``var/checkpoints/`` holding ``checkpoint``, readable by its owner only:
    named by the agent, the turn and the time, made unique (runs of one agent stopping in the
    same second each keep their own). The file of a recorded run names it (``"run_id"``),
    so that ``bloge run --resume FILE`` continues that run."""
    import datetime as dt
    import os
    import tempfile

    folder = project / CHECKPOINTS
    folder.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    handle, name = tempfile.mkstemp(
        prefix=f"{checkpoint.agent_id or 'agent'}-turn{checkpoint.turn_count}-{stamp}-",
        suffix=".json", dir=folder)
    text = checkpoint.to_json()
    if run_id is not None:
        text = json.dumps({**json.loads(text), "run_id": run_id}, ensure_ascii=False)
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        file.write(text)
    return Path(name)


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it is below it, else absolute."""
    absolute = path.resolve()
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)


def _resume_command(invocation: Invocation, saved: str, max_turns: int | None) -> str:
    words = ["bloge", "run", invocation.target, "--resume", saved]
    if invocation.agent_id is not None:
        words += ["--agent", invocation.agent_id]
    return shlex.join(words + _same_options(invocation, max_turns))


def _resume_run_command(invocation: Invocation, run_id: str, max_turns: int | None) -> str:
    return shlex.join(["bloge", "runs", "resume", run_id, *_same_options(invocation, max_turns)])


def _same_options(invocation: Invocation, max_turns: int | None) -> list[str]:
    """The options that make the resumed run the same application, with its turn cap."""
    words = [] if max_turns is None else ["--max-turns", str(max_turns)]
    for limit in invocation.budget:
        words += ["--budget", limit]
    if invocation.config is not None:
        words += ["--config", str(invocation.config)]
    if invocation.profile is not None:
        words += ["--profile", invocation.profile]
    return words


def _print_document(document: dict[str, Any], reporting: Reporting) -> None:
    from bloge.core.masking import mask_urls_in

    document = mask_urls_in(document)
    if reporting.streamed:  # one more JSON line after the chunks
        out.print(json.dumps({"type": "error", **document}, ensure_ascii=False), markup=False)
    else:
        out.print(json.dumps(document, ensure_ascii=False, indent=2), markup=False)
