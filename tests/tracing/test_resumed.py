"""A run killed (SIGKILL) and resumed in another process is one trace: the spans the first
process sent, then the resumed run's, under one run span, none twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from bloge.store import RunStatus
from bloge.tracing import RunTracing
from tests.processes import said_until
from tests.server.live_server import LiveServer
from tests.tracing.killed_child import shop
from tests.tracing.receiver import Receiver

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("killed_child.py")
CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c"
CALLER_SPAN = "b7ad6b7169203331"


def killed_in_its_second_tool_call(store_url: str, traces_url: str) -> None:
    with subprocess.Popen(
            [sys.executable, str(CHILD), store_url, traces_url,
             f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)}) as child:
        # Said once the second call runs.
        said_until(child, lambda said: said == ["ready"], "'ready' (and nothing before)")
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)


async def test_a_killed_and_resumed_run_is_one_trace_without_duplicates(
        tmp_path: Path, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    received, server = receiver
    store_url = f"sqlite:///{tmp_path / 'bloge.db'}"
    killed_in_its_second_tool_call(store_url, server.url("/v1/traces"))
    before = received.wait_for(lambda spans: len(spans) == 3)
    assert sorted(span.name for span in before) == ["chat gpt-4o", "chat gpt-4o",
                                                    "execute_tool lookup"]

    agent, store = shop(store_url, tracing, hang=False)
    store.clock = lambda: time.time() + 3600  # long after the dead worker's lease
    (run,) = await store.list_runs()
    assert run.status is RunStatus.INTERRUPTED
    output = await agent.aresume_run(run.id)
    assert output.content == "Done."
    assert tracing.flush()
    await store.aclose()

    spans = received.wait_for(lambda spans: len(spans) == 6)
    assert not [span_id for span_id, seen in Counter(s.span_id for s in spans).items()
                if seen > 1]
    assert {span.trace_id for span in spans} == {CALLER_TRACE}
    (invoked,) = received.named("invoke_agent shop")
    assert invoked.parent == CALLER_SPAN
    assert invoked.start <= min(span.start for span in spans)
    assert invoked.end >= max(span.end for span in spans)
    assert all(span.parent == invoked.span_id for span in spans if span is not invoked)
    assert Counter(span.name for span in spans) == {
        "invoke_agent shop": 1, "chat gpt-4o": 3, "execute_tool lookup": 1,
        "execute_tool ship": 1}
    (ship,) = received.named("execute_tool ship")
    assert ship.attributes["error.type"] == "tool_error"  # not idempotent: outcome unknown
    assert invoked.attributes["bloge.run.id"] == run.id
    assert sorted(span.attributes["bloge.turn"] for span in received.named("chat gpt-4o")) == \
        [1, 2, 3]
