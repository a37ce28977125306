"""The autopilot as the container wires it from settings.yaml: knobs bound to the project's
agents, decisions in the run store, taken in by the next process that runs an agent."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from bloge import AgentLoopOperator
from bloge.autopilot import Applied, Proposed
from bloge_container import ConfigurationError, create_container
from bloge_container.application import close_container
from bloge_container.autopilot import tuned
from bloge_container.serving import server_app
from tests.server.live_server import LiveServer


async def _answer() -> str:
    return "ran"


async def test_a_new_process_runs_with_the_values_decided_before(project: Path) -> None:
    first = create_container(project_dir=project)
    pilot = first.autopilot().autopilot
    decided = await pilot.apropose("supportConcurrency", 1, principal="ops")
    assert isinstance(decided, Applied)
    proposed = await pilot.apropose("supportMaxTurns", 10, principal="ops")
    assert isinstance(proposed, Proposed)
    await pilot.aapprove(proposed.proposal_id, principal="alice")
    await close_container(first)

    second = create_container(project_dir=project)
    operator = second.agents()["customerSupport"].operator
    assert operator.agent_def.max_tool_concurrency == 2  # as its DSL says, until tuned
    assert await tuned(second.autopilot(), operator, _answer(), keep_max_turns=False) == "ran"
    assert (operator.agent_def.max_tool_concurrency, operator.agent_def.max_turns) == (1, 10)
    await close_container(second)


async def test_a_turn_cap_given_on_the_command_line_wins(project: Path) -> None:
    container = create_container(project_dir=project)
    definition = container.agents()["customerSupport"].definition
    operator = AgentLoopOperator("cli", replace(definition, max_turns=3),
                                 container.operator_registry())
    await tuned(container.autopilot(), operator, _answer(), keep_max_turns=True)
    assert operator.agent_def.max_turns == 3
    await close_container(container)


def test_a_watch_of_an_undeclared_knob_is_a_configuration_error(project: Path) -> None:
    settings = project / "settings.yaml"
    settings.write_text(settings.read_text().replace(
        "    knobs:\n", "    watch: [{knob: nope, threshold: 0.2}]\n    knobs:\n", 1))
    with pytest.raises(ConfigurationError, match=r"watch\[0\]\.knob is 'nope'"):
        server_app(create_container(project_dir=project))


async def test_a_knob_bound_to_a_setting_its_agent_leaves_out_asks_for_a_value(
        project: Path) -> None:
    settings = project / "settings.yaml"
    settings.write_text(settings.read_text().replace("    knobs:\n", (
        "    knobs:\n      opsConcurrency: {tier: whitelist, min: 1, max: 4, "
        "binding: agents.opsAgent.max-tool-concurrency}\n"), 1))
    container = create_container(project_dir=project)
    with pytest.raises(ConfigurationError) as raised:
        container.autopilot()
    await close_container(container)
    assert str(raised.value) == (
        "bloge.autopilot.knobs.opsConcurrency.value is needed: agent 'opsAgent' declares no "
        "max_tool_concurrency, so agents.opsAgent.max-tool-concurrency has no value for the "
        "knob to start from; give the knob a value, or declare max_tool_concurrency in the "
        "agent")


def test_the_tools_are_registered_while_knobs_are_declared(project: Path) -> None:
    container = create_container(project_dir=project)
    names = container.operator_registry().names()
    assert {"listKnobs", "proposeKnobChange"} <= set(names)


def test_bloge_serve_applies_an_approved_change_to_the_agents_it_serves(project: Path) -> None:
    settings = project / "settings.yaml"
    settings.write_text(settings.read_text().replace("    api-keys: []",
                                                     '    api-keys: ["key-a", "key-b"]'))
    container = create_container(project_dir=project)
    app = server_app(container)
    with LiveServer(app) as server:
        def call(path: str, key: str, body: object = None) -> httpx.Response:
            return httpx.post(server.url(path), json=body, timeout=10,
                              headers={"Authorization": f"Bearer {key}"})

        proposed = call("/autopilot/knobs/supportMaxTurns/proposals", "key-a", {"value": 9})
        assert proposed.json()["status"] == "pending human approval"
        approved = call(f"/autopilot/proposals/{proposed.json()['proposal_id']}/approve",
                        "key-b")
        assert approved.status_code == 200, approved.text
        limit = call("/autopilot/knobs/supportConcurrency/proposals", "key-a", {"value": 1})
        assert limit.json()["decision"] == "applied"
        served = app.app.state.bloge.agents  # type: ignore[attr-defined]  # the guard's app
        assert served.definition("customerSupport").max_turns == 9
        assert served.whole("customerSupport").agent_def.max_tool_concurrency == 1
        answer = httpx.post(server.url("/chat"), content="How do I reset my password?",
                            headers={"Authorization": "Bearer key-a"}, timeout=30)
        assert "KB-RESET-001" in answer.text
