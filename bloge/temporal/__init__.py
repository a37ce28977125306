"""Agent runs as Temporal workflows, served by a fleet of workers (``bloge[temporal]``).

One workflow type, :class:`~bloge.temporal.workflow.AgentWorkflow`, runs any compiled agent:
the engine's own loop runs in the workflow, deterministic and replayed, and each model call and
each tool call is an activity (:mod:`bloge.temporal.activities`) that a worker performs, with
the listeners, the journal and the run store. :func:`~bloge.temporal.worker.agent_worker`
builds a worker for some agents; :class:`~bloge.temporal.runner.TemporalRunner` starts runs and
waits for their outputs; :func:`~bloge.temporal.connection.connect` reaches the service.
"""

from __future__ import annotations

try:
    import temporalio  # noqa: F401 -- only to fail here, with the extra to install
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError("bloge.temporal needs temporalio: pip install 'bloge[temporal]'") from exc

from bloge.temporal.connection import Connection, connect
from bloge.temporal.limits import LimitsRefusedError
from bloge.temporal.options import TemporalOptions
from bloge.temporal.runner import RunCancelledError, TemporalRunner
from bloge.temporal.runstore import TemporalRunStore
from bloge.temporal.worker import agent_worker, served_agents
from bloge.temporal.workflow import WORKFLOW, AgentWorkflow

__all__ = [
    "WORKFLOW",
    "AgentWorkflow",
    "Connection",
    "LimitsRefusedError",
    "RunCancelledError",
    "TemporalOptions",
    "TemporalRunStore",
    "TemporalRunner",
    "agent_worker",
    "connect",
    "served_agents",
]
