"""Bindings: where a knob's value takes effect — settings the running system reads at the
start of each run or turn, changed without a restart.

A :class:`LiveSetting` is a knob's binding to one setting; the things that read the setting
are attached to it (now or later: the server's run limit exists only once the server does)
and each is handed every new value. Nothing is read per turn that was not read before: an
agent's definition, a provider's retry policy and the server's run limit are each one
attribute that the loop, the provider and the server already read, replaced whole.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

from bloge.core.errors import BlogeUsageError
from bloge.llm.providers.retry import RetryPolicy

Target = Callable[[float], None]

#: The agent settings a knob can drive, and whether they take whole numbers.
AGENT_FIELDS = {"max_tool_concurrency": True, "max_turns": True, "temperature": False}
#: The ``bloge.llm.retry`` settings a knob can drive, and whether they take whole numbers.
RETRY_FIELDS = {"max_attempts": True, "initial_backoff": False, "max_backoff": False,
                "multiplier": False}


class LiveSetting:
    """The binding of a knob to ``setting`` (its key as ``bloge config`` shows it): every
    target attached gets each value the knob takes, a target attached later the current one."""

    def __init__(self, setting: str, *, integer: bool = False) -> None:
        self.setting = setting
        self.integer = integer
        self.value: float | None = None
        self._targets: list[Target] = []
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LiveSetting({self.setting!r}, value={self.value!r})"

    def attach(self, target: Target) -> None:
        with self._lock:
            self._targets.append(target)
            value = self.value
        if value is not None:
            target(value)

    def apply(self, value: float) -> None:
        with self._lock:
            self.value = value
            targets = list(self._targets)
        for target in targets:
            target(value)


class Retunable(Protocol):
    def retune(self, **changes: Any) -> None: ...


class AgentsRetunable(Protocol):
    def retune(self, agent_id: str, **changes: Any) -> None: ...


class RetryHolder(Protocol):
    retry: RetryPolicy


def agent_setting(agent_id: str, field: str) -> LiveSetting:
    """A binding to an agent's ``max_tool_concurrency``, ``max_turns`` or ``temperature``."""
    if field not in AGENT_FIELDS:
        raise BlogeUsageError(f"an agent knob binds one of {', '.join(AGENT_FIELDS)}, not "
                              f"{field!r}")
    return LiveSetting(f"bloge.agents.{agent_id}.{field.replace('_', '-')}",
                       integer=AGENT_FIELDS[field])


def retunes(operator: Retunable, field: str) -> Target:
    """A target that retunes one agent operator."""
    return lambda value: operator.retune(**{field: _typed(field, value, AGENT_FIELDS)})


def retunes_served(agents: AgentsRetunable, agent_id: str, field: str) -> Target:
    """A target that retunes an agent a server serves."""
    return lambda value: agents.retune(agent_id, **{field: _typed(field, value, AGENT_FIELDS)})


def retry_setting(field: str) -> LiveSetting:
    """A binding to ``bloge.llm.retry.<field>``."""
    if field not in RETRY_FIELDS:
        raise BlogeUsageError(f"a retry knob binds one of {', '.join(RETRY_FIELDS)}, not "
                              f"{field!r}")
    return LiveSetting(f"bloge.llm.retry.{field.replace('_', '-')}",
                       integer=RETRY_FIELDS[field])


def retries(provider: RetryHolder, field: str) -> Target:
    """A target that changes a provider's retry policy (from its next call on)."""

    def apply(value: float) -> None:
        changes: dict[str, Any] = {field: _typed(field, value, RETRY_FIELDS)}
        provider.retry = replace(provider.retry, **changes)

    return apply


def run_limit_setting() -> LiveSetting:
    """A binding to ``bloge.server.max-concurrent-runs``."""
    return LiveSetting("bloge.server.max-concurrent-runs", integer=True)


class HasLimit(Protocol):
    limit: int


def limits(tasks: HasLimit) -> Target:
    """A target that changes how many runs a server runs at once (runs going on go on)."""

    def apply(value: float) -> None:
        tasks.limit = int(value)

    return apply


def _typed(field: str, value: float, fields: dict[str, bool]) -> float | int:
    return int(value) if fields[field] else float(value)
