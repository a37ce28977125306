"""ListenerChain: each listener is called for the callbacks it has, and only those."""

from __future__ import annotations

import logging
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


def test_a_listeners_callbacks_are_looked_up_once_when_the_chain_is_built() -> None:
    class Counting:
        lookups = 0

        def __getattr__(self, name: str) -> Any:
            Counting.lookups += 1
            raise AttributeError(name)

    chain = ListenerChain([Counting()])
    for callback in CALLBACKS:
        for _ in range(3):
            chain.notify(callback, CONTEXT, None)
    assert Counting.lookups == len(CALLBACKS)


def test_the_chain_says_which_callbacks_some_listener_has() -> None:
    assert ListenerChain([OnlyExits()]).wanted == {"on_agent_loop_exited"}
    assert ListenerChain([]).wanted == frozenset()
