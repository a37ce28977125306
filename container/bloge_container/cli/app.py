"""The ``bloge`` command: a typer application whose commands live in sibling modules.

A command's module is imported when that command runs (or its own ``--help`` is shown), not
before: ``bloge --help`` lists the commands from :data:`COMMANDS` alone, and ``bloge run``
loads neither the server's, the RPC's nor the store's commands. Commands import bloge lazily
too.
"""

from __future__ import annotations

import importlib
import textwrap
from typing import Annotated, Any, NamedTuple

import typer
from typer.core import TyperGroup


class Command(NamedTuple):
    """Where a command is (a function or a :class:`typer.Typer` of subcommands, ``attribute``
    of ``module``), and its line in ``bloge --help`` — the command's own short help, which
    tests/test_cli.py compares with it."""

    module: str
    attribute: str
    help: str


COMMANDS: dict[str, Command] = {
    "run": Command("run", "run", "Run an agent and print its answer."),
    "check": Command("check", "check", (
        "Compile DSL files with every installed extension against the operators the settings "
        "register (so a misspelled operator is reported); report each error with its "
        "location.")),
    "agents": Command("agents_cmd", "agents", (
        "List the agents of bloge.agents.dsl-locations: id, kind, model, memory, tools, "
        "file.")),
    "config": Command("config_cmd", "config", (
        "Show the effective settings and which components were wired, and why.")),
    "serve": Command("serve_cmd", "serve", (
        "Serve the agents of bloge.agents.dsl-locations over HTTP until Ctrl-C or SIGTERM "
        "(runs still going then get bloge.server.shutdown-grace to finish, then are "
        "cancelled with their checkpoint).")),
    "worker": Command("worker_cmd", "worker", (
        "Serve the agents of bloge.agents.dsl-locations as a Temporal worker: their runs' "
        "workflows and their model and tool calls (bloge.temporal.address, namespace, "
        "task-queue), until Ctrl-C or SIGTERM.")),
    "usage": Command("usage_cmd", "usage", (
        "Model calls, tokens and cost (US dollars at bloge.budgets.prices) of the runs the "
        "run store recorded, the costliest group first.")),
    "journal": Command("journal_cmd", "journal", "Read the event journal."),
    "runs": Command("runs_cmd", "runs", "The runs the run store recorded."),
    "threads": Command("threads_cmd", "threads", "The conversations the run store keeps."),
    "store": Command("store_cmd", "store", (
        "Keep the run store: its schema, its size, its threads whole.")),
    "autopilot": Command("autopilot_cmd", "autopilot", (
        "Knob changes agents proposed: approve or reject them; the audit.")),
    "approvals": Command("approvals_cmd", "approvals", (
        "Tool calls waiting for a decision: list, approve or deny them; the audit.")),
    "rpc": Command("rpc_cmd", "rpc", (
        "RPC services: how each is bound, one call, answering over NATS.")),
    "mcp": Command("mcp_cmd", "mcp", "The Model Context Protocol: the agents as MCP tools."),
    "eval": Command("eval_cmd", "evals", (
        "Regression tests for agents: datasets, recorded runs, results.")),
}


class _LazyCommands(TyperGroup):
    """The root group: each of :data:`COMMANDS` loaded on first use."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        loaded = self.commands.get(cmd_name)
        if loaded is None and cmd_name in COMMANDS:
            loaded = self.commands[cmd_name] = _load(cmd_name, COMMANDS[cmd_name])
        return loaded

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        width = formatter.width - 6 - max(map(len, COMMANDS))
        with formatter.section("Commands"):
            formatter.write_dl([(name, textwrap.shorten(command.help, width, placeholder="..."))
                                for name, command in COMMANDS.items()])


def _load(name: str, command: Command) -> Any:
    found = getattr(importlib.import_module(f"bloge_container.cli.{command.module}"),
                    command.attribute)
    if isinstance(found, typer.Typer):
        group = typer.main.get_group(found)
        group.name = name
        return group
    single = typer.Typer(rich_markup_mode=None)
    single.command(name)(found)
    return typer.main.get_command(single)


app = typer.Typer(
    cls=_LazyCommands,
    name="bloge",
    help="Declarative LLM agents: compile, check and run bloge DSL files.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


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
    """Console-script entry point.

    What bloge's start-up makes (modules, classes, functions, the settings: some 90,000
    objects the collector tracks) lives as long as the command, so the collector has nothing
    to find in it: it is off until :func:`~bloge_container.cli.options.open_container` has
    loaded the application (walking those objects again and again was a tenth of ``bloge
    run``). At exit, what the command made is left to the operating system rather than walked
    once more to be freed (another fifth of ``bloge run``): the commands close their files and
    the store, buffered output is flushed and ``atexit`` handlers run all the same.
    """
    import gc

    from bloge_container.cli.logs import log_to_stderr

    gc.disable()
    log_to_stderr()
    try:
        app()
    finally:
        gc.freeze()
