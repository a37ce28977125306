"""The autopilot's ledger in every backend: the audit chain, proposals, knob values, and the
migration that adds its tables to a version-1 database."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from bloge.autopilot import AuditLedger
from bloge.autopilot.audit import (
    AuditEntry,
    AutopilotCommit,
    CommitRefusedError,
    KnobProposal,
    KnobWrite,
    ProposalDecision,
)
from bloge.store import Store, StoreError, open_store
from bloge.store.sql import schema
from tests.store.conftest import POSTGRES_DSN


def _entry(event: str = "applied", value: float = 2.0) -> AuditEntry:
    return AuditEntry(at=100.0, event=event, knob="concurrency", principal="ops", value=value,
                      previous=1.0)


def _proposal(proposal_id: str = "p1", proposer: str = "ops") -> KnobProposal:
    return KnobProposal(proposal_id, "turns", 20.0, 10.0, proposer, "more room", 100.0, 200.0)


async def test_appended_records_chain_and_verify(store: Store) -> None:
    first = await AuditLedger(store).commit(AutopilotCommit((_entry(),)))
    second = await AuditLedger(store).commit(AutopilotCommit((_entry(value=3.0), _entry())))
    assert [r.seq for r in [*first, *second]] == [1, 2, 3]
    assert second[0].prev_hash == first[0].hash
    assert await AuditLedger(store).records() == [*first, *second]
    verified = await AuditLedger(store).verify()
    assert verified.ok
    assert verified.records == 3


async def test_concurrent_appends_never_fork_the_chain(store: Store) -> None:
    await asyncio.gather(*(AuditLedger(store).commit(AutopilotCommit((_entry(value=i),)))
                           for i in range(20)))
    records = await AuditLedger(store).records()
    assert [r.seq for r in records] == list(range(1, 21))
    assert (await AuditLedger(store).verify()).ok


async def test_approval_by_another_principal_decides_once(store: Store) -> None:
    await AuditLedger(store).commit(AutopilotCommit((_entry("proposed"),), proposal=_proposal()))
    approve = AutopilotCommit((_entry("approved"),), decision=ProposalDecision(
        "p1", "approved", "alice", 150.0), knob=KnobWrite("turns", 20.0, None, None, 150.0))
    await AuditLedger(store).commit(approve)
    with pytest.raises(CommitRefusedError, match="already approved") as again:
        await AuditLedger(store).commit(approve)
    assert again.value.code == "decided"
    assert (await AuditLedger(store).proposal("p1")).decided_by == "alice"
    assert (await AuditLedger(store).knob_values())["turns"][0] == 20.0
    assert len(await AuditLedger(store).records()) == 2


async def test_self_approval_is_refused_and_writes_nothing(store: Store) -> None:
    await AuditLedger(store).commit(AutopilotCommit((_entry("proposed"),), proposal=_proposal()))
    with pytest.raises(CommitRefusedError) as refused:
        await AuditLedger(store).commit(AutopilotCommit(
            (_entry("approved"),), decision=ProposalDecision("p1", "approved", "ops", 150.0)))
    assert refused.value.code == "self_approval"
    assert (await AuditLedger(store).proposal("p1")).status == "pending"
    assert len(await AuditLedger(store).records()) == 1


@pytest.mark.parametrize("requester", ["key:a1_b%", "user:o'neil"])
async def test_a_proposal_an_agent_made_for_a_principal_is_not_approved_by_it(
        store: Store, requester: str) -> None:
    proposal = _proposal(proposer=f"{requester} via agent")
    await AuditLedger(store).commit(AutopilotCommit((_entry("proposed"),), proposal=proposal))
    with pytest.raises(CommitRefusedError) as refused:
        await AuditLedger(store).commit(AutopilotCommit(
            (_entry("approved"),), decision=ProposalDecision("p1", "approved", requester, 150.0)))
    assert refused.value.code == "self_approval"
    assert (await AuditLedger(store).proposal("p1")).status == "pending"
    await AuditLedger(store).commit(AutopilotCommit(
        (_entry("approved"),), decision=ProposalDecision("p1", "approved", "key:a1xb", 150.0)))
    assert (await AuditLedger(store).proposal("p1")).status == "approved"


async def test_an_expired_proposal_cannot_be_approved(store: Store) -> None:
    await AuditLedger(store).commit(AutopilotCommit((), proposal=_proposal()))
    with pytest.raises(CommitRefusedError) as refused:
        await AuditLedger(store).commit(AutopilotCommit(
            (), decision=ProposalDecision("p1", "approved", "alice", 250.0)))
    assert refused.value.code == "expired"


async def test_a_knob_changed_elsewhere_rolls_the_decision_back(store: Store) -> None:
    await AuditLedger(store).commit(AutopilotCommit(
        (), knob=KnobWrite("turns", 12.0, None, None, 90.0), proposal=_proposal()))
    with pytest.raises(CommitRefusedError) as refused:
        await AuditLedger(store).commit(AutopilotCommit(
            (_entry("approved"),), decision=ProposalDecision("p1", "approved", "alice", 150.0),
            knob=KnobWrite("turns", 20.0, 10.0, None, 150.0)))
    assert refused.value.code == "conflict"
    assert (await AuditLedger(store).proposal("p1")).status == "pending"
    assert await AuditLedger(store).records() == []


async def test_pending_proposals_are_listed_by_status(store: Store) -> None:
    await AuditLedger(store).commit(AutopilotCommit((), proposal=_proposal("a")))
    await AuditLedger(store).commit(AutopilotCommit((), proposal=_proposal("b")))
    await AuditLedger(store).commit(AutopilotCommit(
        (), decision=ProposalDecision("a", "rejected", "alice", 120.0)))
    assert [p.id for p in await AuditLedger(store).proposals(status="pending")] == ["b"]
    assert [p.id for p in await AuditLedger(store).proposals()] == ["a", "b"]


async def test_an_edited_record_is_found(durable_store_url: str) -> None:
    store = open_store(durable_store_url)
    await AuditLedger(store).commit(AutopilotCommit((_entry(), _entry(value=5.0), _entry())))
    await _tamper(durable_store_url, "UPDATE bloge_audit SET value = 99 WHERE seq = 2")
    verified = await AuditLedger(store).verify()
    await store.aclose()
    assert verified.problems == ("record #2 was edited (its hash no longer matches)",)


@pytest.mark.parametrize("column", ["value", "at", "previous"])
async def test_a_number_edited_into_text_is_found_as_an_edit(tmp_path: Path, column: str) -> None:
    # SQLite keeps whatever a hand writes into a number column; before, reading the chain
    # failed with a ValueError (a traceback from bloge autopilot audit --verify)
    url = f"sqlite:///{tmp_path / 'bloge.db'}"
    store = open_store(url)
    await AuditLedger(store).commit(AutopilotCommit((_entry(), _entry(value=5.0), _entry())))
    await _tamper(url, f"UPDATE bloge_audit SET {column} = 'lots' WHERE seq = 2")  # noqa: S608 -- the test's own column names
    verified = await AuditLedger(store).verify()
    with pytest.raises(StoreError, match=r"audit record #2 cannot be read.*edited outside"):
        await AuditLedger(store).records()
    await store.aclose()
    assert verified.problems == ("record #2 was edited (a number of it is no longer one)",)


async def test_a_deleted_record_is_found(durable_store_url: str) -> None:
    store = open_store(durable_store_url)
    await AuditLedger(store).commit(AutopilotCommit((_entry(), _entry(value=5.0), _entry())))
    await _tamper(durable_store_url, "DELETE FROM bloge_audit WHERE seq = 2")
    middle = await AuditLedger(store).verify()
    await _tamper(durable_store_url, "DELETE FROM bloge_audit WHERE seq = 3")
    tail = await AuditLedger(store).verify()
    await store.aclose()
    assert "record #2 is missing (the next one is #3)" in middle.problems
    assert tail.problems == (("the chain ends at #1, but #3 was the last record appended: "
                             "records were deleted or rewritten"),)


async def test_a_version_1_database_migrates_to_the_autopilot_tables(
        durable_store_url: str) -> None:
    await _create_version_1(durable_store_url)
    old = open_store(durable_store_url, auto_migrate=False)
    with pytest.raises(StoreError, match=r"version 1.*bloge store migrate"):
        await AuditLedger(old).records()
    assert await old.migrate() == (1, schema.VERSION)
    await AuditLedger(old).commit(AutopilotCommit((_entry(),)))
    assert (await AuditLedger(old).verify()).ok
    await old.aclose()


async def _create_version_1(url: str) -> None:
    statements = [*schema.MIGRATIONS[0],
                  "CREATE TABLE bloge_schema (version BIGINT NOT NULL)",
                  "INSERT INTO bloge_schema (version) VALUES (1)"]
    for statement in statements:
        await _tamper(url, statement)


async def _tamper(url: str, sql: str) -> None:
    """Change the database behind the store's back, as someone with its file would."""
    if url.startswith("sqlite:///"):
        with sqlite3.connect(Path(url.removeprefix("sqlite:///"))) as connection:
            connection.execute(sql)
        return
    import psycopg  # noqa: PLC0415 -- an extra, there when the PostgreSQL fixture is

    search_path = url.split("?schema=", 1)[1]
    async with await psycopg.AsyncConnection.connect(POSTGRES_DSN, autocommit=True) as conn:
        await conn.execute(f'SET search_path TO "{search_path}"')
        await conn.execute(sql)
