"""A resume refused at its start: limits the run cannot keep are refused before the run is
taken back (a paused run waits on, as it was), and a run whose resume fails at its start
all the same keeps the turns and usage its record counted."""

from __future__ import annotations

import pytest

from bloge import Agent, BlogeUsageError
from bloge.agent import RunPaused
from bloge.llm import ScriptedProvider, ToolDefinition
from bloge.store import RunStatus, Store
from tests.runtime.helpers import calls

sent: list[int] = []


def transfer(amount: int) -> str:
    """Send money."""
    sent.append(amount)
    return f"sent {amount}"


transfer.requires_approval = True  # type: ignore[attr-defined]  # the facade reads it


@pytest.fixture(autouse=True)
def _clean() -> None:
    sent.clear()


# Decisions given with the refused resume are not recorded either: the run waits on them.
@pytest.mark.parametrize("decisions", [None, {"a": False}], ids=["alone", "with-decisions"])
async def test_a_usd_limit_on_a_model_without_a_price_leaves_a_paused_run_waiting(
        store: Store, decisions: dict[str, bool] | None) -> None:
    made = Agent(ScriptedProvider(calls(("transfer", {"amount": 500}, "a")), "done"),
                 [transfer], store=store, model="house-model")
    with pytest.raises(RunPaused) as caught:
        await made.arun("pay")
    run_id = caught.value.run_id or ""
    before = await store.get_run(run_id)
    limited = Agent(ScriptedProvider("unused"), [transfer], store=store, model="house-model",
                    budget={"usd": 1})
    with pytest.raises(BlogeUsageError, match="no price for model 'house-model'"):
        await limited.aresume(run_id, decisions=decisions)
    run = await store.get_run(run_id)
    assert (run.status, run.turns, run.usage) == (RunStatus.AWAITING_APPROVAL, 1, before.usage)
    assert [(p.call_id, p.state) for p in run.pending_approvals] == [("a", "waiting")]
    output = await made.aresume(run_id, decisions={"a": True})
    assert output.content == "done"
    assert sent == [500]


async def test_a_resume_that_fails_at_its_start_keeps_the_run_s_counts(store: Store) -> None:
    made = Agent(ScriptedProvider(calls(("lookup", {"q": "x"}, "k")), "ok"), [transfer],
                 store=store)
    with pytest.raises(RunPaused) as caught:
        await made.operator.aexecute("go", tools=[ToolDefinition("lookup")])
    run_id = caught.value.run_id or ""
    before = await store.get_run(run_id)

    def lookup(q: str) -> str:
        """Look it up."""
        return q

    # The run's own tool is now also one of the agent's: refused once the run is taken up.
    clashing = Agent(ScriptedProvider("unused"), [lookup], store=store)
    with pytest.raises(BlogeUsageError, match="the run's tool 'lookup'"):
        await clashing.aresume(run_id, tool_results={"k": "found"})
    run = await store.get_run(run_id)
    assert (run.status, run.exit_reason) == (RunStatus.FAILED, "error")
    assert (run.turns, run.usage) == (1, before.usage)
    assert run.usage.llm_calls == 1

