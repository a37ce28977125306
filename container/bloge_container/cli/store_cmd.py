"""``bloge store migrate|prune|check``: the run store's upkeep."""

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

store = typer.Typer(help="Keep the run store: its schema, its size, its threads whole.",
                    no_args_is_help=True,
                    rich_markup_mode=None)

#: The exit code of ``bloge store check`` when it found threads to mend (and did not mend them).
EXIT_DAMAGED = 1


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


@store.command("check")
def check(
    repair: Annotated[bool, typer.Option(
        "--repair", help="Mend what is found: a thread's view is cut before the first missing "
        "message, a checkpoint that refers to one is deleted.")] = False,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """Find threads and checkpoints that refer to messages the store lacks (a write the store
    refused in the middle of a run left them, before bloge kept such writes); exit 1 when
    there are some and --repair was not given."""
    with reported_errors():
        opened = opened_store(open_container(config, profile))
        found = with_store(opened, lambda store: store.check(repair=repair))
        for problem in found:
            out.print(f"{opened.url}: {problem.describe()}" + (": mended" if repair else ""),
                      markup=False)
        if not found:
            out.print(f"{opened.url}: every thread is whole", markup=False)
        elif not repair:
            raise failure(f"{len(found)} views refer to missing messages; bloge store check "
                          "--repair mends them", EXIT_DAMAGED)


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
