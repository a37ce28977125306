"""What ``bloge autopilot audit`` and ``bloge approvals audit`` share: printing JSON and times,
and checking the store's hash-chained audit (``--verify``)."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING

import typer

from bloge_container.cli.console import EXIT_RUN_FAILED, out
from bloge_container.cli.options import with_store

if TYPE_CHECKING:
    from bloge.store import Store


def print_json(value: object) -> None:
    """``value`` as indented JSON on stdout."""
    out.print(json.dumps(value, indent=2, ensure_ascii=False), markup=False)


def utc_time(at: float) -> str:
    """``at`` (seconds since the epoch) as ``YYYY-MM-DD HH:MM:SSZ``."""
    return dt.datetime.fromtimestamp(at, dt.UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def verify_audit_chain(store: Store, *, as_json: bool) -> None:
    """Check the audit's hash chain in ``store`` and say what was found; exit 1 when a record
    was edited or deleted."""
    from bloge.autopilot.ledger import AuditLedger

    verified = with_store(store, lambda s: AuditLedger(s).verify())
    if as_json:
        print_json({"ok": verified.ok, "records": verified.records,
                    "problems": list(verified.problems)})
    elif verified.ok:
        out.print(f"the audit chain verifies: {verified.records} records", markup=False)
    else:
        for problem in verified.problems:
            out.print(f"TAMPERED: {problem}", markup=False)
    if not verified.ok:
        raise typer.Exit(EXIT_RUN_FAILED)
