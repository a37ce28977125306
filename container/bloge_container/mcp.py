"""``bloge.mcp.servers``: each MCP server started with the application, its tools operators
(``<name>.<tool>``), each decision in the conditions report."""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

from bloge_config import BlogeSettings
from bloge_config.models import McpServerSettings
from bloge_container.components import ProjectDir
from bloge_container.errors import ConfigurationError
from bloge_container.report import ConditionsReport

#: ``command: python`` is the interpreter bloge runs on, so that a server shipped with the
#: project runs in the project's environment.
PYTHON = "python"


def mcp_endpoint(report: ConditionsReport) -> str | None:
    """on-class: ``bloge serve``'s ``/mcp`` when the MCP SDK is installed; why it is off, or
    ``None`` when it is on (the decision in the report either way)."""
    off = (None if importlib.util.find_spec("mcp") is not None
           else "the MCP SDK is not installed: pip install 'bloge[mcp]'")
    report.record("McpEndpoint[/mcp]", registered=off is None, kind="on-class",
                  reason="bloge serve serves the agents as MCP tools there (streamable HTTP, "
                         "stateless)" if off is None else f"bloge serve answers 404: {off}")
    return off


def mcp_servers(settings: BlogeSettings, project: ProjectDir, report: ConditionsReport,
                closables: list[Any]) -> Any:
    """The started servers (a :class:`bloge.mcp.McpServers`), or ``None`` when none is
    configured and enabled. A required server that cannot start is a
    :class:`ConfigurationError` naming it."""
    enabled: dict[str, McpServerSettings] = {}
    for name, section in settings.mcp.servers.items():
        if section.enabled:
            enabled[name] = section
        else:
            report.record(f"McpServer[{name}]", registered=False, kind="on-property",
                          reason=f"bloge.mcp.servers.{name}.enabled is false")
    if not enabled:
        return None
    if importlib.util.find_spec("mcp") is None:
        raise ConfigurationError(f"bloge.mcp.servers declares {', '.join(sorted(enabled))} but "
                                 "the MCP SDK is not installed: pip install 'bloge[mcp]'")
    from bloge.mcp import McpServers

    servers = McpServers([_spec(name, section, project) for name, section in enabled.items()])
    try:
        _record(servers, enabled, report)
    except ConfigurationError:
        servers.close()
        raise
    closables.append(servers)
    return servers


def _spec(name: str, section: McpServerSettings, project: ProjectDir) -> Any:
    from bloge.mcp import McpServerSpec

    command = section.command
    if command == PYTHON:
        command = sys.executable
    cwd = section.cwd if section.cwd is None or section.cwd.is_absolute() else \
        project.path / section.cwd
    return McpServerSpec(
        name, transport=section.transport, command=command, args=section.args,
        env={key: value.get_secret_value() for key, value in section.env.items()},
        cwd=str(cwd or project.path), url=section.url,
        headers={key: value.get_secret_value() for key, value in section.headers.items()},
        startup_timeout=section.startup_timeout, call_timeout=section.call_timeout,
        max_result_bytes=int(section.max_result_bytes), rename=section.rename)


def _record(servers: Any, sections: dict[str, McpServerSettings],
            report: ConditionsReport) -> None:
    for name, outcome in servers.outcomes.items():
        key = f"bloge.mcp.servers.{name}"
        if outcome.error is not None:
            if sections[name].required:
                raise ConfigurationError(f"{key}: {outcome.error}; set {key}.required to false "
                                         "to start without it")
            report.record(f"McpServer[{name}]", registered=False, kind="on-property",
                          reason=f"{outcome.error} ({key}.required is false)")
            continue
        listing = outcome.connection.listing
        names = [outcome.spec.operator_name(tool.name) for tool in listing.tools]
        report.record(f"McpServer[{name}]", registered=True, kind="on-property",
                      reason=f"{key} over {outcome.spec.transport} ({outcome.spec.where()}): "
                             f"tools {', '.join(names) or 'none'}")
        for skipped in listing.skipped:
            report.record(f"McpTool[{name}/{skipped.name}]", registered=False,
                          kind="on-property", reason=f"{key} lists it, but {skipped.reason}")
