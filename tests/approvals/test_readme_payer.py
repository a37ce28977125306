"""The README's ``payer`` example works as documented, with an operator that declares no
types: a small transfer runs at once, a large one waits for approval."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from bloge import AgentDslCompiler, LlmChatOperator, OperatorRegistry
from bloge.agent import AgentInput, RunPaused
from bloge.agent.runtime import AgentEngine, RunStart
from bloge.llm import ScriptedProvider
from tests.runtime.helpers import calls

README = Path(__file__).resolve().parents[2] / "README.md"


class Transfer:
    """An operator as an application writes one, its input untyped."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    def execute(self, input, ctx):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN201 -- untyped, as the README's reader writes it
        self.sent.append(input)
        return "sent"


def payer(provider: ScriptedProvider, transfer: Transfer) -> AgentEngine:
    found = re.search(r"```\n(agent payer \{.*?\n\})\n```", README.read_text(), re.DOTALL)
    assert found is not None, "the README's payer example"
    registry = OperatorRegistry({"Transfer": transfer, "llmChat": LlmChatOperator(provider)})
    return AgentEngine("payer", AgentDslCompiler(registry).compile(found[1]), registry)


async def test_a_small_transfer_of_the_readme_s_payer_runs_at_once() -> None:
    provider = ScriptedProvider(calls(("transfer", {"amount": 50, "to": "Ann"})), "done")
    transfer = Transfer()
    output = await payer(provider, transfer).run(RunStart(AgentInput.of("Send 50 to Ann")), None)
    assert output.content == "done"
    assert transfer.sent == [{"amount": 50, "to": "Ann"}]


async def test_a_large_transfer_of_the_readme_s_payer_waits_for_approval() -> None:
    provider = ScriptedProvider(calls(("transfer", {"amount": 500, "to": "Ann"})))
    transfer = Transfer()
    with pytest.raises(RunPaused) as paused:
        await payer(provider, transfer).run(RunStart(AgentInput.of("Send 500 to Ann")), None)
    assert [call.tool for call in paused.value.pending] == ["transfer"]
    assert transfer.sent == []
