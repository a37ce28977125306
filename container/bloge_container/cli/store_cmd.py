"""``bloge store migrate|prune``: the run store's upkeep."""

from __future__ import annotations

from typing import Annotated

import typer

from bloge_container.cli.console import failure, out, reported_errors
from bloge_container.cli.options import (
    ConfigOption,
    ProfileOption,
    open_container,
    opened_store,
    with_store,
)

store = typer.Typer(help="Keep the run store: its schema, its size.", no_args_is_help=True,
                    rich_markup_mode=None)


@store.command("migrate")
def migrate(config: ConfigOption = None, profile: ProfileOption = None) -> None:
    """Create the store's tables, or bring them up to this bloge's schema."""
    with reported_errors():
        opened = opened_store(open_container(config, profile))
        before, after = with_store(opened, lambda store: store.migrate())
        what = "up to date" if before == after else f"migrated from version {before}"
        out.print(f"{opened.url}: schema version {after} ({what})", markup=False)


@store.command("prune")
def prune(
    older_than: Annotated[str, typer.Option(
        "--older-than", help="Delete runs that ended longer ago than this (30d, 12h, 90m), "
        "and the threads no run refers to any more.")] = "30d",
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """Delete old runs with their events, checkpoints and tool calls, and unused threads."""
    with reported_errors():
        seconds = _age(older_than)
        opened = opened_store(open_container(config, profile))
        pruned = with_store(opened, lambda store: store.prune(older_than=seconds))
        out.print(f"{opened.url}: deleted {pruned.runs} runs and {pruned.threads} threads "
                  f"older than {older_than}", markup=False)


def _age(text: str) -> float:
    from bloge_config import parse_duration

    units = {"d": 86400.0, "w": 604800.0}
    if text.strip().replace(".", "", 1).isdigit():
        # What is deleted cannot come back: 30 may mean days as well as seconds.
        number = text.strip()
        raise failure(f"--older-than {text!r} has no unit; write {number}d (days), {number}h, "
                      f"{number}m or {number}s")
    try:
        if text[-1:] in units and text[:-1].replace(".", "", 1).isdigit():
            return float(text[:-1]) * units[text[-1]]
        return parse_duration(text)
    except ValueError:
        raise failure(f"--older-than {text!r} is not a duration; write e.g. 30d, 12h or "
                      "90m") from None
