"""A recorded run that hands over: the handoff is in its events, the run names the agent it
goes on with, and a resume continues with that agent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bloge import Agent, AgentRunError, ProviderError
from bloge.llm import FunctionProvider, tool_call_response
from bloge.store import RunStatus, Store
from tests.handoffs.agents import billing, refund, triage
from tests.processes import said_until
from tests.store.conftest import ROOT
from tests.store.handoff_child import agents


async def test_a_recorded_handoff_is_an_event_and_names_the_current_agent(store: Store) -> None:
    billing_agent, _ = billing()
    agent, _ = triage(handoffs=[billing_agent], store=store)
    output = await agent.arun_output("I want a refund for A1")
    run = await store.get_run(output.run_id or "")
    assert (run.agent_id, run.agent) == ("triage", "billing")
    assert run.to_dict()["current_agent_id"] == "billing"
    events = await store.run_events(run.id)
    (handoff,) = [e for e in events if e.type == "on_agent_handoff"]
    assert (handoff.body["from_agent"], handoff.body["to_agent"], handoff.body["reason"]) == (
        "triage", "billing", "a refund")


async def test_a_run_without_handoff_goes_on_with_its_own_agent(store: Store) -> None:
    agent, _ = billing(store=store)
    output = await agent.arun_output("hello")
    assert (await store.get_run(output.run_id or "")).agent == "billing"


async def test_a_run_that_failed_after_its_handoff_resumes_with_the_other_agent(
        store: Store) -> None:
    calls: list[int] = []

    def answer(request: object) -> object:
        calls.append(1)
        if len(calls) == 1:
            raise ProviderError("overloaded", status_code=400, provider="scripted")
        if len(calls) == 2:
            return tool_call_response("refund", '{"order_id": "A1"}', call_id="r1")
        return "Refunded A1."

    billing_agent = Agent(FunctionProvider(answer), [refund], name="billing",
                          system_prompt="You are billing.")
    agent, triage_model = triage(handoffs=[billing_agent], store=store)
    try:
        await agent.arun_output("I want a refund for A1")
    except AgentRunError as error:
        run_id = error.run_id
    else:
        raise AssertionError("billing's first model call fails")
    assert run_id is not None
    assert (await store.get_run(run_id)).agent == "billing"
    output = await agent.aresume(run_id)
    assert output.content == "Refunded A1."
    assert len(triage_model.requests) == 1  # triage is not asked again
    assert (await store.get_run(run_id)).agent == "billing"


HANDOFF_CHILD = Path(__file__).with_name("handoff_child.py")


@pytest.fixture
def killed_after_handoff(durable_store_url: str, tmp_path: Path) -> Path:
    """The child (``handoff_child.py``) ran until billing's refund hung, and was killed there
    with SIGKILL."""
    with subprocess.Popen(
            [sys.executable, str(HANDOFF_CHILD), durable_store_url, str(tmp_path)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)}) as child:
        assert child.stderr is not None
        said = said_until(child, bool, '"ready"')  # once billing's refund runs, or it fails
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        assert said == ["ready"], child.stderr.read()
    return tmp_path


async def test_a_run_killed_after_its_handoff_resumes_with_the_other_agent(
        durable_store_url: str, killed_after_handoff: Path) -> None:
    tmp_path = killed_after_handoff
    agent, store, asked = agents(durable_store_url, tmp_path, hang=False)
    store.clock = lambda: time.time() + 3600  # long after the dead worker's lease
    (run,) = await store.list_runs()
    assert run.status is RunStatus.INTERRUPTED
    assert run.agent == "billing"
    output = await agent.aresume(run.id)
    assert not asked  # triage's model is not asked again: the run goes on with billing
    assert output.content.startswith("Billing here: ")
    assert "outcome of tool 'refund' is unknown" in output.content
    assert (tmp_path / "refund.log").read_text() == "A1\n"  # not sent twice
    await store.aclose()
