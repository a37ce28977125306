"""``bloge_prompt_cache_hit_ratio`` in multiprocess mode (``bloge serve --workers N``): computed
from every worker's token counts, which only a process started with the variable set shows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
from bloge.agent import AgentCallbackContext, LlmCalledPayload
from bloge.server.metrics import Metrics

context = AgentCallbackContext("run", None, None, "support")
for read in (900, 300):
    Metrics().on_agent_llm_called(context, LlmCalledPayload(
        1, "claude-sonnet-4-5", 1000, 5, 10.0, "stop", cache_read_tokens=read))
print(Metrics().render().decode())
"""


def test_the_ratio_adds_up_every_workers_counts(tmp_path: Path) -> None:
    environ = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    shown = subprocess.run([sys.executable, "-c", SCRIPT], env=environ, capture_output=True,
                           text=True, check=True, timeout=60).stdout
    assert 'bloge_prompt_cache_hit_ratio{agent="support"} 0.6' in shown
