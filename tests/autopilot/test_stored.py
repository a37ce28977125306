"""An autopilot whose decisions live in the run store: shared by processes, audited in the
same transaction as their effect."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from bloge.autopilot import (
    Applied,
    ApprovalRefusedError,
    AuditLedger,
    Autopilot,
    Knob,
    KnobTier,
    Proposed,
)
from bloge.core import run_sync
from bloge.store import Store, StoreError, open_store
from tests.autopilot.conftest import FakeClock, RecordingBinding
from tests.store.conftest import (  # noqa: F401 -- fixtures
    durable_store_url,
    postgres_schema,
    psycopg_or_skip,
    store_url,
)


def _autopilot(store: Store, clock: FakeClock, binding: RecordingBinding | None = None,
               ) -> Autopilot:
    autopilot = Autopilot(store=store, clock=clock)
    autopilot.register_knob(Knob("turns", KnobTier.DANGEROUS, 1, 50, 10, binding=binding))
    autopilot.register_knob(Knob("concurrency", KnobTier.WHITELIST, 1, 16, 4))
    return autopilot


@pytest.fixture
async def store(store_url: str) -> AsyncIterator[Store]:  # noqa: F811 -- the fixture above
    opened = open_store(store_url)
    yield opened
    await opened.aclose()


async def test_decisions_are_chained_in_the_store(store: Store, clock: FakeClock) -> None:
    autopilot = _autopilot(store, clock)
    await autopilot.apropose("concurrency", 8)
    await autopilot.apropose("nope", 1)
    stored = await AuditLedger(store).records()
    assert [str(r) for r in stored] == autopilot.audit_log()
    assert (await AuditLedger(store).verify()).ok


async def test_another_process_approves_and_the_first_takes_it_in(store: Store,
                                                                  clock: FakeClock) -> None:
    binding = RecordingBinding(integer=True)
    server = _autopilot(store, clock, binding)
    proposed = await server.apropose("turns", 20, principal="ops-agent")
    assert isinstance(proposed, Proposed)
    operator = _autopilot(store, clock)
    assert [p.id for p in await operator.aproposals()] == [proposed.proposal_id]
    assert await operator.aapprove(proposed.proposal_id, principal="alice") == Applied(
        "turns", 20.0, previous=10.0, proposal_id=proposed.proposal_id)
    await server.arefresh()
    assert server.knob("turns").value == 20
    assert binding.applied[-1] == 20


async def test_two_approvals_racing_apply_once(store: Store, clock: FakeClock) -> None:
    proposed = await _autopilot(store, clock).apropose("turns", 20, principal="ops")
    assert isinstance(proposed, Proposed)
    first, second = _autopilot(store, clock), _autopilot(store, clock)
    await first.arefresh()
    await second.arefresh()
    results = await asyncio.gather(first.aapprove(proposed.proposal_id, principal="alice"),
                                   second.aapprove(proposed.proposal_id, principal="bob"),
                                   return_exceptions=True)
    assert sorted(type(r).__name__ for r in results) == ["Applied", "ApprovalRefusedError"]
    refused = next(r for r in results if isinstance(r, ApprovalRefusedError))
    assert refused.code == "decided"
    assert [r.entry.event for r in await AuditLedger(store).records()] == ["proposed", "approved"]


async def test_a_store_that_is_down_applies_nothing(clock: FakeClock) -> None:
    psycopg_or_skip()
    down = open_store("postgresql://postgres@127.0.0.1:1/test")
    binding = RecordingBinding()
    autopilot = Autopilot(store=down, clock=clock)
    autopilot.register_knob(Knob("c", KnobTier.WHITELIST, 1, 16, 4, binding=binding))
    with pytest.raises(StoreError, match="cannot reach the database"):
        await autopilot.apropose("c", 8)
    assert autopilot.knob("c").value == 4
    assert binding.applied == [4]
    assert autopilot.audit_log() == []
    await down.aclose()


async def test_a_change_made_elsewhere_meanwhile_is_a_conflict(store: Store,
                                                               clock: FakeClock) -> None:
    first, second = _autopilot(store, clock), _autopilot(store, clock)
    refresh = second.arefresh
    await refresh()
    calls = 0

    async def racing() -> None:  # the first decides between the second's refresh and commit
        nonlocal calls
        calls += 1
        await refresh()
        if calls == 1:
            await first.apropose("concurrency", 8)

    second.arefresh = racing  # type: ignore[method-assign]  # the race, made to happen
    decision = await second.apropose("concurrency", 6)
    assert decision.to_dict()["code"] == "conflict"
    assert second.knob("concurrency").value == 8  # taken in from the store after the refusal
    assert (await AuditLedger(store).knob_values())["concurrency"][0] == 8


def test_the_sync_surface_works_with_a_store(durable_store_url: str,  # noqa: F811 -- fixture
                                             clock: FakeClock) -> None:
    store = open_store(durable_store_url)
    autopilot = _autopilot(store, clock)
    assert isinstance(autopilot.propose("concurrency", 8), Applied)
    assert len(autopilot.audit_log()) == 1
    run_sync(store.aclose(), method="aclose")
