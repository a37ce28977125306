"""Error rates from the agents' own callbacks, over a sliding window, fed to the
autopilot's error-rate loop.

:class:`ErrorRates` is a listener: put it among the agents' listeners and it counts every tool
call that failed (``on_agent_tool_completed`` with ``success=False``) and every run that ended
in an error (``on_agent_loop_exited`` with exit reason ``"error"``). It only appends a pair
to a bounded deque per callback; rates are computed when asked.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from bloge.agent import (
    AgentCallbackContext,
    AgentExecutionListener,
    LoopExitedPayload,
    ToolCompletedPayload,
)
from bloge.autopilot.autopilot import Autopilot
from bloge.autopilot.decisions import Decision

Metric = Literal["tool-errors", "run-errors"]


class ErrorRates(AgentExecutionListener):
    """The share of failed tool calls and failed runs over the last ``window`` seconds (at
    most ``max_samples`` of each kept)."""

    def __init__(self, *, window: float = 300.0, max_samples: int = 100_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.window = window
        self.clock = clock
        self._tools: deque[tuple[float, bool]] = deque(maxlen=max_samples)
        self._runs: deque[tuple[float, bool]] = deque(maxlen=max_samples)
        self._lock = threading.Lock()

    def on_agent_tool_completed(self, context: AgentCallbackContext,
                                payload: ToolCompletedPayload) -> None:
        self._tools.append((self.clock(), not payload.success))

    def on_agent_loop_exited(self, context: AgentCallbackContext,
                             payload: LoopExitedPayload) -> None:
        self._runs.append((self.clock(), payload.exit_reason == "error"))

    def rate(self, metric: Metric, *, window: float | None = None) -> tuple[float, int]:
        """(the share of failures, the number of samples) over the last ``window`` seconds;
        (0.0, 0) without samples."""
        samples = self._tools if metric == "tool-errors" else self._runs
        since = self.clock() - (self.window if window is None else window)
        with self._lock:
            while samples and samples[0][0] < since:
                samples.popleft()
            recent = list(samples)
        if not recent:
            return 0.0, 0
        return sum(failed for _, failed in recent) / len(recent), len(recent)


@dataclass(frozen=True, slots=True)
class ErrorRateWatch:
    """Feed ``rates``' ``metric`` for ``knob`` to ``autopilot.observe_error_rate`` on each
    :meth:`tick` (every ``interval`` seconds, as ``bloge serve`` does), once the window
    holds ``min_samples`` samples."""

    autopilot: Autopilot
    rates: ErrorRates
    knob: str
    threshold: float
    metric: Metric = "tool-errors"
    window: float = 300.0
    interval: float = 30.0
    min_samples: int = 10

    async def tick(self) -> Decision | None:
        rate, samples = self.rates.rate(self.metric, window=self.window)
        if samples < self.min_samples:
            return None
        return await self.autopilot.aobserve_error_rate(self.knob, rate, self.threshold)
