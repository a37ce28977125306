"""``bloge usage``: what the model calls the store recorded spent, grouped by agent, API key,
model or thread, over a recent window."""

from __future__ import annotations

import json
import re
import time
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
    from bloge.store import Store, UsageLine

_WINDOW = re.compile(r"([0-9]+)([mhdw])")
_UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def usage(
    by: Annotated[str, typer.Option("--by", help="Group by agent, key, model or thread.")
                  ] = "agent",
    since: Annotated[str | None, typer.Option(
        "--since", help="Only calls in this recent window, e.g. 30m, 24h, 7d, 2w; all when "
        "left out.", show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """Model calls, tokens and cost (US dollars at bloge.budgets.prices) of the runs the run
    store recorded, the costliest group first."""
    with reported_errors():
        from bloge.store import USAGE_GROUPS

        if by not in USAGE_GROUPS:
            raise failure(f"--by takes {', '.join(USAGE_GROUPS)}, not {by!r}")
        start = None if since is None else time.time() - _seconds(since)
        store = opened_store(open_container(config, profile))
        lines = _report(store, by, start)
        if as_json:
            document = {"by": by, "since": start,
                        "groups": [line.to_dict() for line in lines]}
            out.print(json.dumps(document, indent=2, ensure_ascii=False), markup=False)
            return
        if not lines:
            out.print("no model calls recorded" + (f" in the last {since}" if since else ""),
                      markup=False)
            return
        width = max(len(line.group or "-") for line in lines)
        out.print(f"{by:<{width}}  {'calls':>7}  {'input':>11}  {'output':>10}  "
                  f"{'cost (USD)':>12}", markup=False)
        for line in lines:
            out.print(f"{line.group or '-':<{width}}  {line.model_calls:>7}  "
                      f"{line.input_tokens:>11}  {line.output_tokens:>10}  "
                      f"{line.usd:>12.4f}", markup=False)
        total = sum(line.usd for line in lines)
        out.print(f"{'total':<{width}}  {sum(line.model_calls for line in lines):>7}  "
                  f"{sum(line.input_tokens for line in lines):>11}  "
                  f"{sum(line.output_tokens for line in lines):>10}  {total:>12.4f}",
                  markup=False)


def _report(store: Store, by: str, since: float | None) -> list[UsageLine]:
    from bloge.store import usage_report

    return with_store(store, lambda opened: usage_report(opened, by=by, since=since))


def _seconds(window: str) -> float:
    found = _WINDOW.fullmatch(window.strip())
    if found is None:
        raise failure(f"--since takes a window such as 30m, 24h, 7d or 2w, not {window!r}")
    return int(found[1]) * _UNIT_SECONDS[found[2]]
