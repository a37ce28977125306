"""The SQLite ticket store behind the support agent's ticket and escalation tools."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest

from examples.support.tickets import Priority, TicketStore

NOON = datetime(2024, 6, 12, 12, 0, tzinfo=UTC)


def test_nothing_is_written_before_the_first_call(tmp_path: Path) -> None:
    TicketStore(tmp_path / "var" / "tickets.db")
    assert not (tmp_path / "var").exists()


def test_the_first_call_creates_the_folder_and_tables(tmp_path: Path) -> None:
    store = TicketStore(tmp_path / "var" / "tickets.db")
    assert store.count_open_tickets() == 0
    assert (tmp_path / "var" / "tickets.db").is_file()


def test_ticket_ids_start_at_1001_and_increase(tmp_path: Path) -> None:
    store = TicketStore(tmp_path / "tickets.db")
    ids = [store.create_ticket("t", "d", Priority.LOW).ticket_id for _ in range(3)]
    assert ids == ["TCK-1001", "TCK-1002", "TCK-1003"]


def test_ticket_numbers_continue_in_a_new_store_on_the_same_file(tmp_path: Path) -> None:
    TicketStore(tmp_path / "tickets.db").create_ticket("t", "d", Priority.LOW)
    assert TicketStore(tmp_path / "tickets.db").create_ticket("t", "d", Priority.LOW).ticket_id == "TCK-1002"


def test_a_ticket_is_open_and_keeps_its_fields(tmp_path: Path) -> None:
    ticket = TicketStore(tmp_path / "t.db", clock=lambda: NOON).create_ticket("Title", "Body", Priority.HIGH)
    assert (ticket.title, ticket.description, ticket.priority, ticket.status, ticket.created_at) == (
        "Title", "Body", Priority.HIGH, "open", NOON)


def test_concurrent_threads_get_unique_ticket_ids(tmp_path: Path) -> None:
    store = TicketStore(tmp_path / "tickets.db")
    with ThreadPoolExecutor(max_workers=8) as pool:
        ids = list(pool.map(lambda n: store.create_ticket(f"t{n}", "d", Priority.NORMAL).ticket_id, range(40)))
    assert sorted(ids) == [f"TCK-{1001 + n}" for n in range(40)]
    assert store.count_open_tickets() == 40


def test_concurrent_stores_on_one_file_get_unique_ticket_ids(tmp_path: Path) -> None:
    path = tmp_path / "tickets.db"
    with ThreadPoolExecutor(max_workers=8) as pool:
        ids = list(pool.map(lambda n: TicketStore(path).create_ticket("t", "d", Priority.LOW).ticket_id, range(24)))
    assert len(set(ids)) == 24


def test_escalations_are_recorded_oldest_first(tmp_path: Path) -> None:
    store = TicketStore(tmp_path / "t.db", clock=lambda: NOON)
    store.record_escalation("human-support", "first", 5)
    store.record_escalation("human-support", "second", 6)
    assert [(e.number, e.reason, e.eta_minutes, e.created_at) for e in store.escalations()] == [
        (1, "first", 5, NOON), (2, "second", 6, NOON)]


@pytest.mark.parametrize("text", ["high", "HIGH", " High "])
def test_priorities_parse_in_any_case(text: str) -> None:
    assert Priority.parse(text) is Priority.HIGH


def test_an_unknown_priority_lists_the_valid_ones_and_a_suggestion() -> None:
    with pytest.raises(ValueError, match=r"unknown priority 'urgnt'; did you mean 'urgent'\? \(use one of: low, normal, high, urgent\)"):
        Priority.parse("urgnt")
