"""``bloge agents``: the agents the application declares."""

from __future__ import annotations

from rich.markup import escape

from bloge_container.cli.console import out, reported_errors
from bloge_container.cli.options import (
    ConfigOption,
    ProfileOption,
    missing_settings_file,
    open_container,
)


def agents(config: ConfigOption = None, profile: ProfileOption = None) -> None:
    """List the agents of bloge.agents.dsl-locations: id, kind, model, memory, tools, file."""
    with reported_errors():
        from bloge_container.agents import display

        container = open_container(config, profile)
        loaded = container.agents()
        project = container.project().path
        if not loaded:
            no_project = missing_settings_file(config)
            out.print(f"no agents found: {no_project}" if no_project is not None
                      else "no agents found; check bloge.agents.dsl-locations", markup=False)
            return
        for agent_id, agent in sorted(loaded.items()):
            definition = agent.definition
            kind = "stream agent" if definition.streaming else "agent"
            details = (f"{kind}  model {definition.model}  "
                       f"memory {definition.memory_strategy.to_dsl()}  "
                       f"max_turns {definition.max_turns}")
            out.print(f"[bold]{escape(agent_id)}[/bold]  {escape(details)}")
            out.print(f"  file:  {display(agent.source, project)}", markup=False)
            tools = ", ".join(tool.name for tool in definition.tools) or "none"
            out.print(f"  tools: {tools}", markup=False)
