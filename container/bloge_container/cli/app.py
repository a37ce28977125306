"""The ``bloge`` command: a typer application whose commands live in sibling modules.

Commands import bloge lazily, so ``bloge --help`` stays fast.
"""

from __future__ import annotations

from typing import Annotated

import typer

from bloge_container.cli import (
    agents_cmd,
    approvals_cmd,
    autopilot_cmd,
    check,
    config_cmd,
    console,
    eval_cmd,
    journal_cmd,
    mcp_cmd,
    rpc_cmd,
    run,
    runs_cmd,
    serve_cmd,
    store_cmd,
    threads_cmd,
    usage_cmd,
    worker_cmd,
)

app = typer.Typer(
    name="bloge",
    help="Declarative LLM agents: compile, check and run bloge DSL files.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.command("run")(run.run)
app.command("check")(check.check)
app.command("agents")(agents_cmd.agents)
app.command("config")(config_cmd.config)
app.command("serve")(serve_cmd.serve)
app.command("worker")(worker_cmd.worker)
app.command("usage")(usage_cmd.usage)
app.add_typer(journal_cmd.journal, name="journal")
app.add_typer(runs_cmd.runs, name="runs")
app.add_typer(threads_cmd.threads, name="threads")
app.add_typer(store_cmd.store, name="store")
app.add_typer(autopilot_cmd.autopilot, name="autopilot")
app.add_typer(approvals_cmd.approvals, name="approvals")
app.add_typer(rpc_cmd.rpc, name="rpc")
app.add_typer(mcp_cmd.mcp, name="mcp")
app.add_typer(eval_cmd.evals, name="eval")


def _print_version(asked: bool) -> None:
    if asked:
        from importlib.metadata import version

        typer.echo(f"bloge {version('bloge')}")
        raise typer.Exit


@app.callback()
def _root(
    _version: Annotated[bool, typer.Option(
        "--version", help="Print bloge's version and exit.", callback=_print_version,
        is_eager=True)] = False,
) -> None:
    """bloge for Python."""


def main() -> None:
    """Console-script entry point."""
    console.log_to_stderr()
    app()
