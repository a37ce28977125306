"""``bloge check [FILE…]``: compile DSL files and report every error at file:line:column."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bloge_container.cli.console import EXIT_USAGE, err, out
from bloge_container.cli.options import ConfigOption, ProfileOption


def check(
    files: Annotated[list[Path] | None, typer.Argument(
        help="DSL files to compile (default: the files of bloge.agents.dsl-locations).",
        show_default=False)] = None,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """Compile DSL files with every installed extension; report each error with its location."""
    from bloge import DslCompiler, DslError

    paths = list(files) if files else _configured_files(config, profile)
    compiler = DslCompiler()
    problems = 0
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            err.print(f"{path}: cannot read: {reason}", markup=False)
            problems += 1
            continue
        try:
            blocks = compiler.compile(text, filename=str(path))
        except DslError as exc:
            for error in exc.errors:
                err.print(error.rendered, markup=False)
            problems += len(exc.errors)
            continue
        names = ", ".join(f"{b.kind} {b.name}" for b in blocks) or "no definitions"
        out.print(f"{path}: ok ({names})", markup=False)
    if problems:
        err.print(f"{problems} error{'s' if problems != 1 else ''} in {len(paths)} "
                  f"file{'s' if len(paths) != 1 else ''}", markup=False)
        raise typer.Exit(EXIT_USAGE)


def _configured_files(config: Path | None, profile: str | None) -> list[Path]:
    from bloge_container.agents import dsl_files
    from bloge_container.cli.console import reported_errors
    from bloge_container.cli.options import open_container
    from bloge_container.report import ConditionsReport

    with reported_errors():
        container = open_container(config, profile)
        settings = container.settings()
        paths = dsl_files(settings.agents.dsl_locations, container.project().path,
                          ConditionsReport())
    if not paths:
        err.print("no DSL files: give some, or set bloge.agents.dsl-locations", markup=False)
        raise typer.Exit(EXIT_USAGE)
    return paths
