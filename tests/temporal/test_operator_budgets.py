"""A new run an operator records on Temporal (``record_run``: ``aexecute``, the runs API,
``/v1``) runs under the operator's run budget, as a local run does: retuned, not the agent's
own. ``counter`` makes two model calls."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bloge import AgentLoopOperator, BlogeUsageError
from bloge.agent import Budget, BudgetExceededError, with_budget_limits
from bloge.store import Store, StoreNotFoundError
from tests.temporal.conftest import StoredAgents

pytestmark = pytest.mark.usefixtures("temporal_server")


def _budgeted(worked: StoredAgents, model_calls: int) -> AgentLoopOperator:
    """``counter``'s operator allowed ``model_calls``, on the workers."""
    definition = with_budget_limits(worked.definitions["counter"],
                                    {"model_calls": model_calls})
    return AgentLoopOperator("counter", definition, worked.registry, store=worked.runs())


async def test_an_operators_run_budget_stops_a_new_run_on_a_worker(
        worked: StoredAgents, store: Store) -> None:
    with pytest.raises(BudgetExceededError) as caught:
        await _budgeted(worked, 1).aexecute("hello", run_id="operator-budget-1")
    assert caught.value.exit_reason == "budget"
    assert (caught.value.limit_name, caught.value.limit) == ("model_calls", 1)
    assert (await store.get_run("operator-budget-1")).exit_reason == "budget"


async def test_an_operators_run_budget_that_allows_the_run_lets_it_answer(
        worked: StoredAgents) -> None:
    output = await _budgeted(worked, 3).aexecute("hello")
    assert output.exit_reason == "stop"
    assert output.usage.llm_calls == 2


async def test_an_operators_thread_budget_is_refused_before_its_run_starts(
        worked: StoredAgents, store: Store) -> None:
    # The workers keep a run's budget only; a thread budget the operator was given (not in
    # the agent's own definition) would be spent past unsaid.
    definition = replace(worked.definitions["counter"], thread_budget=Budget(model_calls=5))
    operator = AgentLoopOperator("counter", definition, worked.registry, store=worked.runs())
    with pytest.raises(BlogeUsageError, match=r"agent 'counter' has a thread budget \(budget "
                                              r"thread \{ … \}\), which runs on Temporal"):
        await operator.aexecute("hello", run_id="operator-thread-budget")
    with pytest.raises(StoreNotFoundError):  # refused before it started
        await store.get_run("operator-thread-budget")
