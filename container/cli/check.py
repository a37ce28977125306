"""``bloge check FILE…``: compile DSL files and report every error at file:line:column."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

EXIT_INVALID = 2


def check(
    files: Annotated[list[Path], typer.Argument(help="DSL files to compile.", show_default=False)],
) -> None:
    """Compile DSL files with every installed extension; report each error with its location."""
    from rich.console import Console

    from bloge import DslCompiler, DslError

    out = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    compiler = DslCompiler()
    problems = 0
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            err.print(f"{path}: cannot read: {exc.strerror if isinstance(exc, OSError) else exc}",
                      markup=False)
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
        err.print(f"{problems} error{'s' if problems != 1 else ''} in {len(files)} "
                  f"file{'s' if len(files) != 1 else ''}", markup=False)
        raise typer.Exit(EXIT_INVALID)
