"""``bloge runs list|show|resume|cancel``: the runs the store recorded."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Annotated

import typer

from bloge_container.cli.console import failure, out, reported_errors
from bloge_container.cli.options import (
    ConfigOption,
    ProfileOption,
    open_container,
    opened_store,
    with_store,
)

if TYPE_CHECKING:
    from bloge import AgentUsage
    from bloge.server.state import RunCanceller
    from bloge.store import Run, RunEvent, Store

runs = typer.Typer(help="The runs the run store recorded.", no_args_is_help=True,
                   rich_markup_mode=None)

RunId = Annotated[str, typer.Argument(help="The run's id (a unique prefix is enough).",
                                      show_default=False)]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
EvalsOption = Annotated[bool, typer.Option(
    "--evals", help="Also those of evals' cases (`bloge eval run`), left out by default.")]


@runs.command("list")
def list_runs(
    thread: Annotated[str | None, typer.Option("--thread", help="Only the runs of this thread.",
                                               show_default=False)] = None,
    status: Annotated[str | None, typer.Option(
        "--status", help="Only runs in this status: queued, running, succeeded, failed, "
        "cancelled, interrupted.", show_default=False)] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="At most this many.")] = 20,
    evals: EvalsOption = False,
    as_json: JsonOption = False,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """The most recent runs first: id, status, agent, thread, turns, when, exit reason. The
    runs of evals' cases (`bloge eval run`) are left out, unless --evals or --thread names
    their thread."""
    with reported_errors():
        from bloge.store import RunStatus, masked_run

        try:
            wanted = None if status is None else RunStatus(status)
        except ValueError:
            known = ", ".join(s.value for s in RunStatus)
            raise failure(f"no run status {status!r} (statuses: {known})") from None
        store = opened_store(open_container(config, profile))
        found = with_store(store, lambda store: store.list_runs(
            thread_id=thread, status=wanted, limit=limit, evals=evals or thread is not None))
        if as_json:
            out.print(json.dumps([masked_run(store.redactor, r) for r in found], indent=2,
                                 ensure_ascii=False), markup=False)
            return
        for run in found:
            agent = run.agent_id if run.agent == run.agent_id else f"{run.agent_id}→{run.agent}"
            out.print(f"{run.id}  {run.status.value:<11} {agent:<16} thread {run.thread_id}"
                      f"  {_count(run.turns, 'turn'):<8} {when(run.created_at)}"
                      f"  {run.exit_reason or ''}".rstrip(), markup=False)
        if not found:
            out.print("no runs", markup=False)


@runs.command("show")
def show(run_id: RunId, as_json: JsonOption = False, config: ConfigOption = None,
         profile: ProfileOption = None) -> None:
    """One run: its status, answer or error, usage, and the timeline of its callbacks."""
    with reported_errors():
        from bloge.journal import render_timeline
        from bloge.store import masked_event, masked_run, run_timeline

        store = opened_store(open_container(config, profile))

        async def read(store: Store) -> tuple[Run, list[RunEvent], list[Run]]:
            run = await store.find_run(run_id)
            return run, await store.run_events(run.id), await store.child_runs(run.id)

        run, events, children = with_store(store, read)
        if as_json:
            document = {**masked_run(store.redactor, run),
                        "children": [child.summary() for child in children],
                        "events": [{"seq": e.seq, "type": e.type, "at": e.at,
                                    **masked_event(store.redactor, e).body} for e in events]}
            out.print(json.dumps(document, indent=2, ensure_ascii=False), markup=False)
            return
        for line in _summary(run, agents_of(run, events)):
            out.print(line, markup=False)
        for child in children:  # the runs its sub-agents' calls started
            out.print(child_line(child), markup=False)
        timeline = run_timeline(run.id, events) if events else []
        for line in render_timeline(timeline):
            out.print(line, markup=False)


@runs.command("resume")
def resume(
    run_id: RunId,
    max_turns: Annotated[int | None, typer.Option(
        "--max-turns", min=1, help="Give the agent more turns (after max_turns).",
        show_default=False)] = None,
    budget: Annotated[list[str] | None, typer.Option(
        "--budget", help="Raise a budget limit (after a budget stop), e.g. usd=1.00, "
        "tokens=80000, tool_calls=40, time=5m; thread.<limit>=… for the thread's "
        "(repeatable).", show_default=False)] = None,
    stream: Annotated[bool, typer.Option("--stream", help="Show the answer's tokens live.")
                      ] = False,
    as_json: JsonOption = False,
    wait: Annotated[bool, typer.Option(
        "--wait", help="When a tool call still waits for approval, wait here for the "
        "decisions and continue (instead of exiting 3).")] = False,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """Continue a run that stopped — interrupted, failed, cancelled, out of turns or out of
    budget, or paused and decided — from its last completed step. Tool calls whose results
    were recorded are not run again."""
    from bloge_container.cli.failures import Invocation
    from bloge_container.cli.run import Start, run_until_answered

    with reported_errors():
        from bloge_container.store import opened

        container = open_container(config, profile)
        opened_store(container)  # the store is on
        # Looked up in a store of its own, closed at once: the run then uses the container's.
        lookup = opened(container.settings(), container.project())
        run = with_store(lookup, lambda store: store.find_run(run_id))
        agents = container.agents()
        if run.agent_id not in agents:
            raise failure(f"run {run.id} is a run of agent {run.agent_id!r}, which "
                          "bloge.agents.dsl-locations no longer declares")
        invocation = Invocation(run.agent_id, None, max_turns, config, profile,
                                budget=tuple(budget or ()))
        run_until_answered(container, agents[run.agent_id].definition, Start(run_id=run.id),
                           invocation, stream=stream, as_json=as_json, wait=wait)


@runs.command("cancel")
def cancel(run_id: RunId, config: ConfigOption = None, profile: ProfileOption = None) -> None:
    """Stop a run: a running one stops at its worker's next check — on Temporal at once, its
    workflow cancelled; one nobody runs any more (interrupted, paused) is cancelled at once —
    on Temporal, its workflow too."""
    with reported_errors():
        container = open_container(config, profile)
        settings = container.settings()
        store = opened_store(container)
        cancels: RunCanceller = store
        on_temporal = settings.runner == "temporal"
        if on_temporal:
            from bloge_container import temporal

            # Its workflow is cancelled too: a running one ends at once, a paused one, which
            # waits for answers, with it.
            cancels = temporal.runs_store(settings, store)

        async def cancelled(store: Store) -> Run:
            from bloge.store import run_moved_on

            run = await store.find_run(run_id)
            found: Run = await cancels.cancel_run(run.id)
            if on_temporal:  # its workflow's last activity records it cancelled
                found = await run_moved_on(store, found, _running, every=STOP_POLL_SECONDS,
                                           within=settings.temporal.workflow_task_timeout)
            return found

        run = with_store(store, cancelled)
        if run.cancel_requested and _running(run) and on_temporal:
            # No worker took the cancelled workflow's task yet: the next one to poll does.
            out.print(f"run {run.id}: asked to stop; its workflow is cancelled, and it ends "
                      f"once a worker of task queue {settings.temporal.task_queue!r} takes "
                      "that", markup=False)
        elif run.cancel_requested and _running(run):
            # Its worker stops it when it next renews the lease; a worker that died leaves
            # it cancelled when the lease ends. Either way, within a lease.
            out.print(f"run {run.id}: asked to stop; it stops within {store.lease:g} s",
                      markup=False)
        else:
            out.print(f"run {run.id}: {run.status.value}", markup=False)


#: How often ``bloge runs cancel`` on Temporal reads the run again until it stopped, in s.
STOP_POLL_SECONDS = 0.05


def _running(run: Run) -> bool:
    return run.status.value in ("running", "queued")


def _tokens(usage: AgentUsage) -> str:
    """The run's tokens, saying so when some model calls reported none."""
    if not usage.unreported_calls:
        return f"{usage.total_tokens} tokens"
    if usage.unreported_calls == usage.llm_calls:
        return "tokens unknown (the model reported no usage)"
    return (f"at least {usage.total_tokens} tokens "
            f"({usage.unreported_calls} of the model calls reported no usage)")


def agents_of(run: Run, events: list[RunEvent]) -> list[str]:
    """The agents that had the run, in order: its own, then each one it was handed to."""
    chain = [run.agent_id]
    chain.extend(str(event.body.get("to_agent")) for event in events
                 if event.type == "on_agent_handoff")
    return chain


def _summary(run: Run, chain: list[str]) -> list[str]:
    lines = [f"run {run.id} · agent {' → '.join(chain)} · thread {run.thread_id}"
             + (f" · child of run {run.parent_run_id}" if run.parent_run_id else ""),
             f"  status {run.status.value}"
             + (f", exit {run.exit_reason}" if run.exit_reason else "")
             + f" · {_count(run.turns, 'turn')} · {_count(run.usage.llm_calls, 'model call')}, "
             f"{_tokens(run.usage)}, {_count(run.usage.tool_calls, 'tool call')}, "
             f"${run.usage.cost_usd:.4f}",
             f"  started {when(run.created_at)}"
             + (f", ended {when(run.finished_at)}" if run.finished_at else "")]
    if run.error is not None:
        lines.append(f"  error {run.error.type}: {run.error.message}")
        if run.error.request is not None:
            lines.append(f"  refused request {run.error.request}")
    if run.output is not None:
        lines.append(f"  answer {run.output.get('content', '')}")
    for call in run.pending_approvals:  # a paused run: what it waits on
        what = "its result" if call.kind == "external" else "a decision"
        where = "" if call.run_id == run.id else f" in sub-agent run {call.run_id}"
        lines.append(f"  waits for {what}: {call.call_id} {call.tool}({call.arguments}){where}")
    return lines


def child_line(child: Run) -> str:
    """The line of a run a sub-agent's call started: what it is, how it ended, what it spent
    (not in its caller's usage line, though its caller's budget counts it)."""
    return (f"  child run {child.id} · agent {child.agent_id} · {child.status.value}"
            + (f", exit {child.exit_reason}" if child.exit_reason else "")
            + f" · {_count(child.usage.llm_calls, 'model call')}, {_tokens(child.usage)}, "
            f"{_count(child.usage.tool_calls, 'tool call')}, ${child.usage.cost_usd:.4f}")


def when(at: float) -> str:
    return dt.datetime.fromtimestamp(at, dt.UTC).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def _count(value: int, noun: str) -> str:
    return f"{value} {noun}" if value == 1 else f"{value} {noun}s"
