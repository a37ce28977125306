"""``bloge approvals list|approve|deny|audit``: the tool calls paused runs wait on, deciding
them, and the audit of every decision.

Whoever runs the command decides as ``user:<login name>`` (the autopilot's principal for its
own commands). When a decision is the last one a run's round waits for, the run continues in
this process and its answer is printed, as ``bloge runs resume`` would — on Temporal its
workflow is sent the decisions and followed here as it goes on on the workers
(``--no-continue`` leaves it paused for a server or another command to continue).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated

import typer

from bloge_container.cli.audit_chain import print_json, utc_time, verify_audit_chain
from bloge_container.cli.console import failure, out, reported_errors
from bloge_container.cli.options import (
    ConfigOption,
    ProfileOption,
    open_container,
    opened_store,
    with_store,
)

if TYPE_CHECKING:
    from bloge.store import Decided, PendingApproval, Store

approvals = typer.Typer(help="Tool calls waiting for a decision: list, approve or deny them; "
                        "the audit.", no_args_is_help=True, rich_markup_mode=None)

RunArgument = Annotated[str, typer.Argument(help="The run's id (or the start of it).",
                                            show_default=False)]
CallArgument = Annotated[str, typer.Argument(help="The waiting call's id.", show_default=False)]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
NoContinue = Annotated[bool, typer.Option(
    "--no-continue", help="Leave the run paused after the last decision: a `bloge serve` "
    "on the same store continues it within a minute, or `bloge runs resume RUN` does.")]


@approvals.command("list")
def list_pending(
    run: Annotated[str | None, typer.Option("--run", help="Only this run's calls.",
                                            show_default=False)] = None,
    as_json: JsonOption = False, config: ConfigOption = None, profile: ProfileOption = None,
) -> None:
    """The calls waiting for a decision (or for a posted result), oldest first."""
    with reported_errors():
        from bloge.store import pending_approvals

        store = opened_store(open_container(config, profile))

        async def listed(store: Store) -> list[PendingApproval]:
            run_id = None if run is None else (await store.find_run(run)).id
            return await pending_approvals(store, run_id=run_id)

        waiting = with_store(store, listed)
        if as_json:
            print_json([call.to_dict() for call in waiting])
            return
        if not waiting:
            out.print("no calls waiting", markup=False)
        for call in waiting:
            print_call(call)


def print_call(call: PendingApproval) -> None:
    """One waiting call, on one line: run, call, tool, arguments, expiry."""
    what = "result" if call.kind == "external" else "approval"
    expires = "" if call.expires_at is None else f"  expires {utc_time(call.expires_at)}"
    if call.expired(time.time()):
        expires += (" (expired: denied when the run resumes)" if call.kind == "approval" else
                    " (expired: the model is told no result came when the run resumes)")
    by = f"  started by {call.requested_by}" if call.requested_by else ""
    out.print(f"{call.run_id}  {call.call_id}  {call.tool}({call.arguments})  waits for "
              f"{what}{expires}{by}", markup=False)


@approvals.command("approve")
def approve(run_id: RunArgument, call_id: CallArgument,
            reason: Annotated[str | None, typer.Option("--reason", help="Why, for the audit.",
                                                       show_default=False)] = None,
            no_continue: NoContinue = False, as_json: JsonOption = False,
            config: ConfigOption = None, profile: ProfileOption = None) -> None:
    """Approve a waiting call: it runs when the run continues (audited)."""
    _decide(run_id, call_id, approve=True, reason=reason, no_continue=no_continue,
            as_json=as_json, config=config, profile=profile)


@approvals.command("deny")
def deny(run_id: RunArgument, call_id: CallArgument,
         reason: Annotated[str, typer.Option("--reason", help="Why: the model is told it.",
                                             show_default=False)],
         no_continue: NoContinue = False, as_json: JsonOption = False,
         config: ConfigOption = None, profile: ProfileOption = None) -> None:
    """Deny a waiting call: the model is told it was denied, and why (audited)."""
    if not reason.strip():  # the model and the audit are told why: an empty why tells nothing
        raise failure("--reason needs a reason: the model is told why its call was denied")
    _decide(run_id, call_id, approve=False, reason=reason, no_continue=no_continue,
            as_json=as_json, config=config, profile=profile)


def _decide(run_id: str, call_id: str, *, approve: bool, reason: str | None,
            no_continue: bool, as_json: bool, config: ConfigOption,
            profile: ProfileOption) -> None:
    from bloge_container.cli.autopilot_cmd import principal

    with reported_errors():
        from bloge.autopilot.calls import audited
        from bloge.store import decide_call, run_to_continue

        container = open_container(config, profile)
        store = opened_store(container)
        who = principal()
        four_eyes = container.settings().approvals.four_eyes

        async def decided(store: Store) -> tuple[Decided, str]:
            run = await store.find_run(run_id)
            decision = await decide_call(store, run.id, call_id, approve=approve,
                                         reason=reason, principal=who, four_eyes=four_eyes,
                                         audit=audited(approved=approve, principal=who,
                                                       reason=reason))
            # A sub-agent's run goes on inside the caller that waits on it.
            return decision, await run_to_continue(store, decision.call.run_id)

        decision, to_continue = with_store(store, decided)
        if as_json:
            print_json({"run_id": decision.call.run_id, "call_id": call_id,
                         "approved": approve, "remaining": decision.remaining})
        else:
            verb = "approved" if approve else "denied"
            left = (f"; {decision.remaining} call(s) of the run still wait"
                    if decision.remaining else "")
            if not decision.remaining and no_continue:
                left = (f"; a bloge serve continues run {to_continue} within a minute, or "
                        f"bloge runs resume {to_continue}")
            out.print(f"{verb} {call_id} of run {decision.call.run_id}{left}", markup=False)
        if decision.remaining == 0 and not no_continue:
            _continue(to_continue, as_json=as_json, config=config, profile=profile)


def _continue(run_id: str, *, as_json: bool, config: ConfigOption,
              profile: ProfileOption) -> None:
    """Continue the run here, as ``bloge runs resume RUN`` does (on Temporal: send its
    workflow the decisions and follow it on the workers to its answer)."""
    from bloge_container.cli.runs_cmd import resume

    resume(run_id, as_json=as_json, config=config, profile=profile)


@approvals.command("audit")
def audit(
    verify: Annotated[bool, typer.Option(
        "--verify", help="Check the hash chain: exit 1 if a record was edited or deleted.")
    ] = False,
    limit: Annotated[int, typer.Option("--limit", min=1, help="The last this many.")] = 50,
    as_json: JsonOption = False, config: ConfigOption = None, profile: ProfileOption = None,
) -> None:
    """Every decision on a tool call, from the store's hash-chained audit, oldest first."""
    with reported_errors():
        from bloge.autopilot.calls import KNOB_PREFIX
        from bloge.autopilot.ledger import AuditLedger

        store = opened_store(open_container(config, profile))
        if verify:
            verify_audit_chain(store, as_json=as_json)
            return
        records = [record for record in with_store(store, lambda s: AuditLedger(s).records())
                   if record.entry.knob.startswith(KNOB_PREFIX)][-limit:]
        if as_json:
            print_json([record.to_dict() for record in records])
            return
        if not records:
            out.print("no decisions audited yet", markup=False)
        for record in records:
            out.print(str(record), markup=False)



