"""Stale limits on Temporal: a resumer that read a paused round in the store before that
round went on sends its limits (``LIMITS_SIGNAL``) again, and they reach the run once it
waits on a later round, whose resumer gave none. That round drops them (``STALE_LIMITS``):
``rekeeper`` (a ``c1`` approval in turn 1 and in turn 2, its answer in turn 3), started
with one turn and given two when turn 1 goes on, stops at them though turn 1's resumer
sent three again; a history made by a worker from before the patch, whose round took them,
replays."""

from __future__ import annotations

import pytest

from bloge import MaxTurnsExceededError, RunPaused
from bloge.store import Store, decide_call
from bloge.temporal.patches import STALE_LIMITS
from tests.temporal.conftest import StoredAgents
from tests.temporal.test_stale_answers import _worker_before
from tests.temporal.test_workflow import _patches, _replayed

pytestmark = pytest.mark.usefixtures("temporal_server")


async def _paused_in_turn_2(agents: StoredAgents, store: Store, run_id: str) -> None:
    """``rekeeper``'s run ``run_id`` started with one turn, given two as its turn 1 went on,
    paused on turn 2's ``c1``, which is approved; then sent turn 1's limits again (three
    turns), as a second resumer of turn 1 sends them."""
    runs = agents.runs()
    runner = await runs.runner()
    await runner.start("rekeeper", "again x", run_id=run_id, max_turns=1)
    with pytest.raises(RunPaused):
        await runs.follow(run_id, None, None)
    await decide_call(store, run_id, "c1", approve=True, principal="bob")
    with pytest.raises(RunPaused):
        await runs.go_on(run_id, max_turns=2)
    assert (await store.get_run(run_id)).turns == 2
    await runner.limit(run_id, max_turns=3, turn=1)
    await decide_call(store, run_id, "c1", approve=True, principal="bob")


async def test_stale_limits_of_an_earlier_turn_do_not_hold_for_a_later_round(
        worked: StoredAgents, store: Store) -> None:
    await _paused_in_turn_2(worked, store, "limits-stale")
    with pytest.raises(MaxTurnsExceededError) as caught:
        await worked.runs().go_on("limits-stale")
    assert caught.value.max_turns == 2
    assert (await store.get_run("limits-stale")).exit_reason == "max_turns"
    history = await worked.client.get_workflow_handle("limits-stale").fetch_history()
    await _replayed(history, worked.client, worked.task_queue, "rekeeper")
    assert STALE_LIMITS in _patches(history)


async def test_a_history_whose_round_took_stale_limits_replays(
        stored_agents: StoredAgents, store: Store) -> None:
    async with _worker_before(stored_agents, STALE_LIMITS):
        await _paused_in_turn_2(stored_agents, store, "limits-took")
        output = await stored_agents.runs().go_on("limits-took")
        history = await stored_agents.client.get_workflow_handle("limits-took").fetch_history()
        await _replayed(history, stored_agents.client, stored_agents.task_queue, "rekeeper")
    assert output.content == "answer: opened again x 0 | opened again x 1"
    assert STALE_LIMITS not in _patches(history)
