"""``/metrics`` tells how long model calls waited for a connection of the provider's pool."""

from __future__ import annotations

from bloge import AgentCallbackContext, LlmCalledPayload
from bloge.server.metrics import Metrics


def test_the_pool_wait_of_each_model_call_is_a_histogram_per_agent() -> None:
    metrics = Metrics()
    context = AgentCallbackContext("run-1", None, None, "helper")
    metrics.on_agent_llm_called(context, LlmCalledPayload(1, "m", 3, 4, 900.0, "stop", 250.0))
    metrics.on_agent_llm_called(context, LlmCalledPayload(2, "m", 3, 4, 500.0, "stop"))
    text = metrics.render().decode()
    assert 'bloge_model_pool_wait_seconds_count{agent="helper"} 2.0' in text
    assert 'bloge_model_pool_wait_seconds_sum{agent="helper"} 0.25' in text
    assert 'bloge_model_pool_wait_seconds_bucket{agent="helper",le="0.005"} 1.0' in text
