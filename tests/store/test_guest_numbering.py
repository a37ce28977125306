"""Guests numbered by the store: messages of sub-agents' runs on their caller's thread that
share no counter with each other (a Temporal caller's child workflows) are numbered as they
are written, under the thread's lock: several guests writing at once, each from its own
connection, never take the same number; a retried append gives the numbers it wrote back;
the holder's own numbering goes on after them; a thread its holder no longer holds takes no
guest's messages. On every backend (and from separate store objects, as separate workers
are, on the durable ones)."""

from __future__ import annotations

import asyncio

import pytest

from bloge.llm import LlmMessage
from bloge.store import Store, StoreError, StoreWriter, ThreadBusyError, open_store, ops
from bloge.store.records import StoredMessage
from bloge.store.sql.script import Query, Script

THREAD = "t-guests"


async def _holder(store: Store) -> StoreWriter:
    """Run ``caller`` holds ``THREAD`` and wrote its two messages (numbered by itself), and
    three guests joined it."""
    writer = StoreWriter(store)
    claim = await writer.start_run(run_id="caller", thread_id=THREAD, agent_id="triage",
                                   input=[LlmMessage.user("Q")], metadata=None, worker="w")
    await writer.write([ops.AppendMessages(THREAD, (
        StoredMessage(THREAD, claim.next_seq, LlmMessage.user("Q"), "caller"),
        StoredMessage(THREAD, claim.next_seq + 1, LlmMessage.assistant("asking"), "caller"),
    ), 0.0)])
    for guest in ("g1", "g2", "g3"):
        await writer.join_run(run_id=guest, thread_id=THREAD, holder="caller",
                              parent_run_id="caller", agent_id="researcher",
                              input=[LlmMessage.user(f"to {guest}")], worker="w")
    return writer


def _said(run_id: str, turn: int) -> list[LlmMessage]:
    return [LlmMessage.user(f"{run_id} asks {turn}"),
            LlmMessage.assistant(f"{run_id} answers {turn}")]


async def _guest(writer: StoreWriter, run_id: str, turns: asyncio.Barrier) -> list[int]:
    """Guest ``run_id`` appends three turns of two messages, as a child workflow does; no
    guest begins a turn before every guest has written the one before (``turns``), so that
    their writes interleave."""
    seqs: list[int] = []
    for turn in range(3):
        seqs.extend(await writer.append_guest_messages(
            run_id=run_id, thread_id=THREAD, holder="caller", first=len(seqs),
            messages=_said(run_id, turn)))
        await turns.wait()
    return seqs


async def test_concurrent_guests_never_take_the_same_number(store: Store) -> None:
    writer = await _holder(store)
    turns = asyncio.Barrier(3)
    numbers = await asyncio.gather(*(_guest(writer, guest, turns)
                                     for guest in ("g1", "g2", "g3")))
    every = sorted(seq for seqs in numbers for seq in seqs)
    assert every == list(range(3, 21))  # one sequence, after the holder's two messages
    log = await store.thread_messages(THREAD)
    for guest, seqs in zip(("g1", "g2", "g3"), numbers, strict=True):
        assert seqs == sorted(seqs)
        mine = [m for m in log if m.run_id == guest]
        assert [m.seq for m in mine] == seqs
        assert [m.message.content for m in mine] == [
            m.content for turn in range(3) for m in _said(guest, turn)]
    # The holder numbers on from where the log ends once its guests are done.
    assert (await store.get_thread(THREAD)).message_count + 1 == 21


async def test_guests_on_separate_connections_never_take_the_same_number(
        durable_store_url: str) -> None:
    first = open_store(durable_store_url)
    workers = [first, open_store(durable_store_url), open_store(durable_store_url)]
    try:
        await _holder(first)
        turns = asyncio.Barrier(3)
        numbers = await asyncio.gather(*(
            _guest(StoreWriter(worker), guest, turns)
            for worker, guest in zip(workers, ("g1", "g2", "g3"), strict=True)))
        assert sorted(seq for seqs in numbers for seq in seqs) == list(range(3, 21))
        log = await first.thread_messages(THREAD)
        assert [m.seq for m in log] == list(range(1, 21))
    finally:
        for worker in workers:
            await worker.aclose()


async def test_a_retried_append_gives_its_numbers_back_without_writing_again(
        store: Store) -> None:
    writer = await _holder(store)
    said = _said("g1", 0)
    assert await writer.append_guest_messages(run_id="g1", thread_id=THREAD, holder="caller",
                                              first=0, messages=said) == (3, 4)
    await writer.append_guest_messages(run_id="g2", thread_id=THREAD, holder="caller",
                                       first=0, messages=_said("g2", 0))
    # The answer was lost: the same append again, then one that wrote half of its batch.
    assert await writer.append_guest_messages(run_id="g1", thread_id=THREAD, holder="caller",
                                              first=0, messages=said) == (3, 4)
    more = [*said, LlmMessage.user("g1 goes on")]
    assert await writer.append_guest_messages(run_id="g1", thread_id=THREAD, holder="caller",
                                              first=0, messages=more) == (3, 4, 7)
    assert await writer.append_guest_messages(run_id="g1", thread_id=THREAD, holder="caller",
                                              first=2, messages=more[2:]) == (7,)
    log = await store.thread_messages(THREAD)
    assert [(m.seq, m.run_id) for m in log[2:]] == [
        (3, "g1"), (4, "g1"), (5, "g2"), (6, "g2"), (7, "g1")]


@pytest.mark.parametrize("holder", ["", "other"])
async def test_a_thread_its_holder_no_longer_holds_takes_no_guest_message(
        store: Store, holder: str) -> None:
    writer = await _holder(store)
    await store.run_script(_release(holder))
    with pytest.raises(ThreadBusyError if holder else StoreError, match=THREAD):
        await writer.append_guest_messages(run_id="g1", thread_id=THREAD, holder="caller",
                                           first=0, messages=_said("g1", 0))
    assert (await store.get_thread(THREAD)).message_count == 2


def _release(holder: str) -> Script[None]:
    """The thread held by ``holder`` (``""``: by no run)."""
    yield Query("UPDATE bloge_threads SET active_run_id = ? WHERE id = ?",
                (holder or None, THREAD))
