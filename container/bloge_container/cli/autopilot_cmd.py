"""``bloge autopilot knobs|proposals|approve|reject|audit``: the autopilot's knobs, the
proposals waiting for a human, and the audit chain in the run store.

Whoever runs the command is the principal (``user:<login name>``): a proposal made under that
name cannot be approved by it.
"""

from __future__ import annotations

import getpass
from typing import TYPE_CHECKING, Annotated, Any

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
    from bloge.autopilot import Autopilot
    from bloge.store import Store

autopilot = typer.Typer(help="Knob changes agents proposed: approve or reject them; the audit.",
                        no_args_is_help=True, rich_markup_mode=None)

ProposalId = Annotated[str, typer.Argument(help="The proposal's id.", show_default=False)]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def principal() -> str:
    """Who runs this command, as the autopilot knows them."""
    return f"user:{getpass.getuser()}"


def _pilot(config: Any, profile: str | None) -> tuple[Autopilot, Store]:
    container = open_container(config, profile)
    store = opened_store(container)
    wiring = container.autopilot()
    if wiring is None:
        raise failure("the autopilot is off: bloge.autopilot.knobs declares no knob")
    pilot: Autopilot = wiring.autopilot
    return pilot, store


@autopilot.command("knobs")
def knobs(as_json: JsonOption = False, config: ConfigOption = None,
          profile: ProfileOption = None) -> None:
    """The knobs, their tiers, bounds and current values (as decided so far)."""
    with reported_errors():
        pilot, store = _pilot(config, profile)
        with_store(store, lambda _: pilot.arefresh())
        found = pilot.knobs()
        if as_json:
            print_json([k.to_dict() for k in found])
            return
        for knob in found:
            bound = f"  -> {knob.setting}" if knob.setting else ""
            dry = "  (dry-run)" if knob.mode == "dry-run" else ""
            out.print(f"{knob.name:<24} {knob.tier.value:<9} {knob.value:g} in "
                      f"[{knob.min:g}, {knob.max:g}]{dry}{bound}", markup=False)


@autopilot.command("proposals")
def proposals(as_json: JsonOption = False, config: ConfigOption = None,
              profile: ProfileOption = None) -> None:
    """The proposals waiting for approval, oldest first (expired ones are expired now)."""
    with reported_errors():
        pilot, store = _pilot(config, profile)
        pending = with_store(store, lambda _: pilot.aproposals())
        if as_json:
            print_json([p.to_dict() for p in pending])
            return
        if not pending:
            out.print("no proposals waiting", markup=False)
        for p in pending:
            out.print(f"{p.id}  {p.knob} {p.previous:g} -> {p.value:g}  by {p.proposer}  "
                      f"expires {utc_time(p.expires_at)}{_reason(p.reason)}", markup=False)


@autopilot.command("approve")
def approve(proposal_id: ProposalId, as_json: JsonOption = False, config: ConfigOption = None,
            profile: ProfileOption = None) -> None:
    """Approve a proposal: its change is applied (and audited). Not your own proposal."""
    with reported_errors():
        pilot, store = _pilot(config, profile)
        applied = with_store(store, lambda _: pilot.aapprove(proposal_id,
                                                             principal=principal()))
        if as_json:
            print_json(applied.to_dict())
            return
        out.print(f"approved {proposal_id}: {applied.name} {applied.previous:g} -> "
                  f"{applied.value:g}", markup=False)


@autopilot.command("reject")
def reject(proposal_id: ProposalId,
           reason: Annotated[str, typer.Option("--reason", help="Why, for the audit.")] = "",
           as_json: JsonOption = False, config: ConfigOption = None,
           profile: ProfileOption = None) -> None:
    """Reject a proposal: nothing changes; the rejection is audited."""
    with reported_errors():
        pilot, store = _pilot(config, profile)
        rejected = with_store(store, lambda _: pilot.areject(proposal_id, principal=principal(),
                                                             reason=reason))
        if as_json:
            print_json(rejected.to_dict())
            return
        out.print(f"rejected {proposal_id}: {rejected.name} stays as it is", markup=False)


@autopilot.command("audit")
def audit(
    verify: Annotated[bool, typer.Option(
        "--verify", help="Check the hash chain: exit 1 if a record was edited or deleted.")
    ] = False,
    limit: Annotated[int, typer.Option("--limit", min=1, help="The last this many.")] = 50,
    as_json: JsonOption = False, config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """The autopilot's decisions from the store's audit chain, oldest first."""
    with reported_errors():
        from bloge.autopilot.ledger import AuditLedger

        store = opened_store(open_container(config, profile))
        if verify:
            verify_audit_chain(store, as_json=as_json)
            return
        records = with_store(store, lambda s: AuditLedger(s).records())[-limit:]
        if as_json:
            print_json([r.to_dict() for r in records])
            return
        if not records:
            out.print("no decisions audited yet", markup=False)
        for record in records:
            out.print(str(record), markup=False)


def _reason(reason: str) -> str:
    return f": {reason}" if reason else ""
