"""The ``bloge`` command: a typer application whose commands live in sibling modules."""

from __future__ import annotations

import typer

from container.cli import check

app = typer.Typer(
    name="bloge",
    help="Declarative LLM agents: compile, check and run bloge DSL files.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("check")(check.check)


@app.callback()
def _root() -> None:
    """bloge for Python."""


def main() -> None:
    """Console-script entry point."""
    app()
