"""ListenerChain: each listener is called for the callbacks it has, and only those."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest

from bloge.agent.listeners import (
    CALLBACKS,
    AgentCallbackContext,
    ListenerChain,
)
from tests.runtime.helpers import agent_with, calls, scripted

CONTEXT = AgentCallbackContext("run-1", None, None, "agent")


class OnlyExits:
    """A listener that is no AgentExecutionListener and has one callback of five."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    def on_agent_loop_exited(self, context: Any, payload: Any) -> None:
        self.reasons.append(payload.exit_reason)


def test_a_listener_with_only_some_callbacks_runs_silently(
    caplog: pytest.LogCaptureFixture,
) -> None:
    only = OnlyExits()
    with caplog.at_level(logging.DEBUG):
        output = agent_with(scripted(calls(("echo", {"text": "a"})), "done"),
                            listeners=[only]).execute("go")
    assert output.content == "done"
    assert only.reasons == ["stop"]
    assert not [r for r in caplog.records if r.name == "bloge.agent.listeners"]


class Counting:
    """A listener of no callbacks that counts how often one is looked up."""

    def __init__(self) -> None:
        self.lookups = 0

    def __getattr__(self, name: str) -> Any:
        self.lookups += 1
        raise AttributeError(name)


def _every_event_thrice(chain: ListenerChain) -> None:
    for callback in CALLBACKS:
        for _ in range(3):
            chain.notify(callback, CONTEXT, None)


def test_a_listeners_callbacks_are_looked_up_once_when_the_chain_is_built() -> None:
    counting = Counting()
    _every_event_thrice(ListenerChain([counting]))
    assert counting.lookups == len(CALLBACKS)


def test_a_runs_own_listeners_callbacks_are_looked_up_once_when_it_joins() -> None:
    counting = Counting()
    _every_event_thrice(ListenerChain([]).then(counting))
    assert counting.lookups == len(CALLBACKS)


def test_the_chain_says_which_callbacks_some_listener_has() -> None:
    assert ListenerChain([OnlyExits()]).wanted == {"on_agent_loop_exited"}
    assert ListenerChain([]).wanted == frozenset()


def test_a_runs_own_listener_comes_last_and_is_called_for_the_callbacks_it_has() -> None:
    heard: list[str] = []

    class Agents:
        def on_agent_loop_exited(self, context: Any, payload: Any) -> None:
            heard.append("agent's")

    class Runs:
        def on_agent_turn_started(self, context: Any, payload: Any) -> None:
            heard.append("run's turn")

        def on_agent_loop_exited(self, context: Any, payload: Any) -> None:
            heard.append("run's exit")

    chain = ListenerChain([Agents()])
    run = chain.then(Runs())
    assert run.wanted == {"on_agent_loop_exited", "on_agent_turn_started"}
    assert chain.wanted == {"on_agent_loop_exited"}
    for callback in CALLBACKS:
        run.notify(callback, CONTEXT, None)
    assert heard == ["run's turn", "agent's", "run's exit"]


def test_a_runs_own_listener_that_raises_is_logged_and_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Raising:
        def on_agent_loop_exited(self, context: Any, payload: Any) -> None:
            raise RuntimeError("boom")

    exits = OnlyExits()
    run = ListenerChain([]).then(Raising()).then(exits)
    run.notify("on_agent_loop_exited", CONTEXT, SimpleNamespace(exit_reason="stop"))
    assert exits.reasons == ["stop"]
    assert "raised in on_agent_loop_exited" in caplog.text


def test_a_runs_own_listener_with_a_callback_of_its_own_is_called_so() -> None:
    heard: list[str] = []
    own = OnlyExits()
    own.on_agent_turn_started = lambda context, payload: heard.append("own")  # type: ignore[attr-defined]  # an attribute of its own
    plain = OnlyExits()
    first, second = ListenerChain([]).then(own), ListenerChain([]).then(plain)
    for chain in (first, second):
        chain.notify("on_agent_turn_started", CONTEXT, None)
        chain.notify("on_agent_loop_exited", CONTEXT, SimpleNamespace(exit_reason="stop"))
    assert heard == ["own"]
    assert own.reasons == plain.reasons == ["stop"]


def test_a_method_patched_on_a_runs_listener_class_is_called_in_the_next_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = ListenerChain([]).then(OnlyExits())
    heard: list[str] = []
    monkeypatch.setattr(OnlyExits, "on_agent_loop_exited",
                        lambda self, context, payload: heard.append("patched"))
    ListenerChain([]).then(OnlyExits()).notify("on_agent_loop_exited", CONTEXT, None)
    before.notify("on_agent_loop_exited", CONTEXT, SimpleNamespace(exit_reason="stop"))
    assert heard == ["patched"]
