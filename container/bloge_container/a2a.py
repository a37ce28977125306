"""``bloge.a2a``: bloge serve's A2A endpoint, and the operators of the agents' tools that ask
remote A2A agents (``tool x : a2a "<url>" { … }``), each decision in the conditions report."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from bloge import AgentDef, OperatorRegistry
from bloge_config import BlogeSettings
from bloge_config.models import A2aRemoteSettings
from bloge_container.errors import ConfigurationError
from bloge_container.report import ConditionsReport

_MISSING = "the A2A SDK is not installed: pip install 'bloge[a2a]'"


def a2a_endpoint(settings: BlogeSettings, report: ConditionsReport) -> str | None:
    """on-property and on-class: why ``bloge serve`` serves no A2A, or ``None`` when it does
    (the decision in the report either way)."""
    if not settings.a2a.serve:
        off: str | None = "bloge.a2a.serve is false"
    elif importlib.util.find_spec("a2a") is None:
        off = _MISSING
    else:
        off = None
    report.record("A2aEndpoint[/agents/{id}]", registered=off is None,
                  kind="on-property" if not settings.a2a.serve else "on-class",
                  reason="bloge serve publishes each agent's card at /agents/{id}/.well-known/"
                         "agent-card.json and takes its tasks (runs) at POST /agents/{id}"
                  if off is None else f"the A2A paths answer 404: {off}")
    return off


def register_remote_tools(definition: AgentDef, registry: OperatorRegistry,
                          settings: BlogeSettings, report: ConditionsReport,
                          source: Path) -> None:
    """Register the operator of each of the agent's tools that ask a remote agent, with the
    key and headers of its ``bloge.a2a.remotes`` entry; a :class:`ConfigurationError` naming
    the tool when the extra is missing."""
    remote_tools = [tool for tool in definition.tools if tool.remote is not None]
    if not remote_tools:
        return
    if importlib.util.find_spec("a2a") is None:
        names = ", ".join(tool.name for tool in remote_tools)
        raise ConfigurationError(f"agent {definition.id!r} ({source}) has tools that ask remote "
                                 f"agents over A2A ({names}), and {_MISSING}")
    from bloge.a2a import A2aAgentTool
    from bloge.a2a.remote import DEFAULT_MAX_ANSWER_BYTES

    for tool in remote_tools:
        remote = tool.remote
        assert remote is not None
        name, entry = _entry(remote.url, settings)
        operator = A2aAgentTool(
            remote.url, idempotent=remote.idempotent, timeout=remote.timeout,
            api_key=None if entry is None or entry.api_key is None
            else entry.api_key.get_secret_value(),
            headers={} if entry is None else {key: value.get_secret_value()
                                              for key, value in entry.headers.items()},
            max_attempts=3 if entry is None else entry.max_attempts,
            max_answer_bytes=(DEFAULT_MAX_ANSWER_BYTES if entry is None
                              else int(entry.max_answer_bytes)))
        registry.register(tool.operator_ref, operator, replace=True)
        if entry is None:
            how = "no bloge.a2a.remotes entry matches it: asked without a key"
        else:
            key = "its key" if entry.api_key and entry.api_key.get_secret_value() else "no key"
            how = f"{key} and {len(entry.headers)} headers from bloge.a2a.remotes.{name}"
        tries = (f"idempotent: up to {operator.max_attempts} tries" if remote.idempotent
                 else "not idempotent: asked once")
        report.record(f"RemoteAgent[{definition.id}.{tool.name}]", registered=True,
                      kind="on-class", reason=f"A2A agent at {remote.url} ({how}; {tries}; "
                      f"within {operator.timeout:g} s)")


def _entry(url: str, settings: BlogeSettings) -> tuple[str, A2aRemoteSettings | None]:
    """The ``bloge.a2a.remotes`` entry for ``url``: its own, else the longest prefix ending
    with ``/``."""
    best: tuple[str, A2aRemoteSettings | None] = ("", None)
    found = -1
    for name, entry in settings.a2a.remotes.items():
        target = str(entry.url)
        matches = url.rstrip("/") == target.rstrip("/") or (
            target.endswith("/") and url.startswith(target))
        if matches and len(target) > found:
            best, found = (name, entry), len(target)
    return best
