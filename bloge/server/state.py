"""What every endpoint reaches through ``request.app.state.bloge``."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from bloge.server.agents import ServedAgents
from bloge.server.config import ServerConfig
from bloge.server.metrics import Metrics
from bloge.server.tasks import RunTasks
from bloge.store import Store


@dataclass(frozen=True, slots=True)
class ServerState:
    agents: ServedAgents
    store: Store
    config: ServerConfig
    tasks: RunTasks
    metrics: Metrics


def state_of(request: Request) -> ServerState:
    found: ServerState = request.app.state.bloge
    return found
