"""``bloge mcp serve --stdio``: every agent as a tool of an MCP server on stdin/stdout, for
desktop clients (``bloge serve`` has the same tools over HTTP at ``/mcp``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from bloge_container.cli.console import failure, reported_errors
from bloge_container.cli.options import ConfigOption, ProfileOption, open_container

if TYPE_CHECKING:
    from bloge.journal import Redactor
    from bloge_container.agents import LoadedAgent
    from bloge_container.application import ApplicationContainer

mcp = typer.Typer(help="The Model Context Protocol: the agents as MCP tools.",
                  no_args_is_help=True)


@mcp.command("serve")
def serve(
    stdio: Annotated[bool, typer.Option(
        "--stdio", help="Speak MCP on stdin/stdout (the only transport of this command).")
    ] = False,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """Serve the agents of bloge.agents.dsl-locations as MCP tools (input: the user's
    message; output: the agent's answer) until the client closes stdin. Logs go to stderr."""
    with reported_errors():
        if not stdio:
            raise failure("bloge mcp serve speaks stdio: pass --stdio (bloge serve serves the "
                          "same tools over HTTP at /mcp)")
        try:
            import mcp as _sdk  # noqa: F401 -- the extra's presence
        except ImportError:
            raise failure("bloge mcp serve needs the MCP SDK: pip install 'bloge[mcp]'") \
                from None
        container = open_container(config, profile)
        journal = container.settings().event_journal
        if journal.enabled and journal.sink == "stdout":
            raise failure("bloge mcp serve speaks MCP on stdout, and bloge.event-journal.sink "
                          "is stdout: choose store or file")
        import asyncio

        asyncio.run(_serve(container))


async def _serve(container: ApplicationContainer) -> None:
    from mcp.server.stdio import stdio_server

    from bloge.journal import Redactor
    from bloge.mcp import AgentTool, agents_server, describe_agent
    from bloge_container.application import close_container
    from bloge_container.components import secret_values

    # A failed run is told to the client without the secrets its error may quote (a
    # provider's answer, a tool's message), as the run store records it.
    redactor = Redactor(secrets=secret_values(container.settings()))
    try:
        tools = [AgentTool(agent_id, describe_agent(loaded.definition),
                           _answer(_whole(container, loaded), redactor))
                 for agent_id, loaded in sorted(container.agents().items())]
        server = agents_server(tools)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        await close_container(container)


def _whole(container: ApplicationContainer, loaded: LoadedAgent) -> Any:
    """The agent's operator answering whole (a streaming agent's is made again, plain)."""
    if not loaded.definition.streaming:
        return loaded.operator
    from dataclasses import replace

    from bloge_container.agents import materialize
    from bloge_container.budgets import budget_policy

    operator = materialize(replace(loaded.definition, streaming=False),
                           container.operator_registry(), container.listeners(),
                           container.report(), container.run_store(),
                           budgets=budget_policy(container.settings()))
    operator.engine.link(loaded.operator.engine.linked)  # the agents it hands over to
    return operator


def _answer(operator: Any, redactor: Redactor) -> Any:
    from bloge.agent import AgentRunError
    from bloge.core.errors import RunError

    async def answer(message: str, request: Any) -> str:  # stdio: no request
        try:
            output = await operator.aexecute(message)
        except AgentRunError as error:
            named = f"run {error.run_id} failed: " if error.run_id else ""
            raise RunError(named + redactor.redact(str(error))) from None
        return str(output.content or "")

    return answer
