"""What every endpoint reaches through ``request.app.state.bloge``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from starlette.requests import Request

from bloge.server.agents import ServedAgents
from bloge.server.config import ServerConfig
from bloge.server.metrics import Metrics
from bloge.server.tasks import RunTasks
from bloge.store import Run, Store


class RunCanceller(Protocol):
    """What asks a run to stop: the run store itself (its worker hears the ask), or on
    Temporal a ``bloge.temporal.TemporalRunStore``, which also ends the workflow of a run
    the store cancels at once (a paused one's waits for answers)."""

    async def cancel_run(self, run_id: str, *, owner: str | None = None) -> Run:
        """Ask run ``run_id`` (``owner``'s, when given) to stop: its record now."""
        ...


@runtime_checkable
class LimitsChecker(Protocol):
    """A run canceller that refuses the budget limits its runs cannot keep: on Temporal,
    the ``bloge.temporal.TemporalRunStore`` (a thread's budget, ``time``)."""

    def check_limits(self, budget: Mapping[str, Any]) -> None:
        """Raise a ``BlogeUsageError`` naming a limit of ``budget`` its runs do not keep."""
        ...


@dataclass(frozen=True, slots=True)
class ServerState:
    agents: ServedAgents
    store: Store
    config: ServerConfig
    tasks: RunTasks
    metrics: Metrics
    cancels: RunCanceller


def state_of(request: Request) -> ServerState:
    found: ServerState = request.app.state.bloge
    return found
