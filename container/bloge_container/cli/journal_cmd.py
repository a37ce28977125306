"""``bloge journal show ID``: the timeline of one run, read back from the journal file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bloge_container.cli.console import err, out, reported_errors
from bloge_container.cli.options import ConfigOption, ProfileOption, open_container

if TYPE_CHECKING:
    from bloge.journal import TimelineEntry
    from bloge.store import Store
    from bloge_container.application import ApplicationContainer

journal = typer.Typer(help="Read the event journal.", no_args_is_help=True,
                      rich_markup_mode=None)


@journal.command("show")
def show(
    execution_id: Annotated[str, typer.Argument(
        help="The run's execution id (a unique prefix is enough).", show_default=False)],
    path: Annotated[Path | None, typer.Option(
        "--path", help="Journal file (default: bloge.event-journal.path).", dir_okay=False,
        show_default=False)] = None,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """Print one run's callbacks in order: time, callback, turn, tools, tokens, exit reason.

    Read from the run store while the journal's sink is the store (the default while the store
    is on), else from the journal file."""
    with reported_errors():
        from bloge.journal import execution_timeline, read_journal, render_timeline

        if path is None:
            from bloge_container.journal import journal_path
            from bloge_container.store import journal_sink

            container = open_container(config, profile)
            if journal_sink(container.settings()) == "store":
                for line in render_timeline(_stored_timeline(container, execution_id)):
                    out.print(line, markup=False)
                return
            path = journal_path(container.settings(), container.project())
        bad_lines: list[str] = []
        events = list(read_journal(path, on_bad_line=lambda bad: bad_lines.append(str(bad))))
        for line in render_timeline(execution_timeline(events, execution_id)):
            out.print(line, markup=False)
        for line in bad_lines:
            err.print(f"warning: {line}", markup=False)


def _stored_timeline(container: ApplicationContainer, run_id: str) -> list[TimelineEntry]:
    from bloge.store import run_timeline
    from bloge_container.cli.options import opened_store, with_store

    async def read(store: Store) -> list[TimelineEntry]:
        run = await store.find_run(run_id)
        return run_timeline(run.id, await store.run_events(run.id))

    return with_store(opened_store(container), read)
