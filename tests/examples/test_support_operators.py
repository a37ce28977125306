"""The customer-support agent's operators, as the agent runtime calls them."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bloge import OperatorContext
from bloge.core import bind, operator_metadata
from examples.support.operators import (
    CreateTicketInput,
    CreateTicketOperator,
    EscalateOperator,
    KBSearchInput,
    KBSearchOperator,
)

NOON = datetime(2024, 6, 12, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def kb_search() -> KBSearchOperator:
    return KBSearchOperator()


def test_kb_search_answers_a_password_question_in_the_documented_shape(kb_search: KBSearchOperator) -> None:
    output = kb_search.execute({"query": "How do I reset my password?"}, OperatorContext.root())
    assert list(output) == ["articleId", "summary", "query", "title", "score", "related"]
    assert output["articleId"] == "KB-RESET-001"
    assert output["summary"] == "Reset the password from Settings > Security and confirm the email link."
    assert output["query"] == "How do I reset my password?"
    assert output["title"] == "Resetting your password"
    assert output["score"] > 0
    assert len(output["related"]) == 3
    assert output["related"][0] == "KB-LOGIN-002"
    assert "KB-RESET-001" not in output["related"]


def test_kb_search_answers_a_refund_question_with_the_refund_article(kb_search: KBSearchOperator) -> None:
    output = kb_search.execute({"query": "I would like a refund"})
    assert (output["articleId"], output["summary"]) == (
        "KB-REFUND-014", "Refund requests can be started from Orders > Request refund within 30 days.")


def test_kb_search_says_plainly_when_no_article_matched(kb_search: KBSearchOperator) -> None:
    output = kb_search.execute({"query": "I want a human agent right now."})
    assert output == {
        "articleId": None,
        "summary": "No knowledge-base article matched 'I want a human agent right now.'. Do not guess an answer: ask the customer for details, create a ticket or escalate to a human.",
        "query": "I want a human agent right now.",
        "title": None,
        "score": 0.0,
        "related": [],
    }


# None: a model may send null for a required argument.
@pytest.mark.parametrize("query", ["", "   ", None])
def test_kb_search_rejects_an_empty_query(kb_search: KBSearchOperator, query: str | None) -> None:
    with pytest.raises(ValueError, match="query must not be empty"):
        kb_search.execute({"query": query})


def test_create_ticket_returns_the_documented_shape(tmp_path: Path) -> None:
    operator = CreateTicketOperator(db_path=tmp_path / "tickets.db", clock=lambda: NOON)
    output = operator.execute({"title": "Refund missing", "description": "Order 1182", "priority": "HIGH"})
    assert output == {"ticketId": "TCK-1001", "status": "open", "priority": "high",
                      "title": "Refund missing", "createdAt": "2024-06-12T12:00:00Z"}
    assert list(output) == ["ticketId", "status", "priority", "title", "createdAt"]


def test_create_ticket_defaults_a_missing_title_and_priority(tmp_path: Path) -> None:
    args: CreateTicketInput = {"title": "", "description": "help", "priority": ""}
    output = CreateTicketOperator(db_path=tmp_path / "t.db").execute(args)
    assert (output["title"], output["priority"]) == ("Support request", "normal")


def test_ticket_ids_persist_across_operator_instances(tmp_path: Path) -> None:
    args: CreateTicketInput = {"title": "t", "description": "d", "priority": "low"}
    first = CreateTicketOperator(db_path=tmp_path / "t.db").execute(args)
    second = CreateTicketOperator(db_path=tmp_path / "t.db").execute(args)
    assert (first["ticketId"], second["ticketId"]) == ("TCK-1001", "TCK-1002")


def test_concurrent_ticket_creation_yields_unique_ids(tmp_path: Path) -> None:
    operator = CreateTicketOperator(db_path=tmp_path / "t.db")
    args: CreateTicketInput = {"title": "t", "description": "d", "priority": "normal"}
    with ThreadPoolExecutor(max_workers=6) as pool:
        ids = [out["ticketId"] for out in pool.map(lambda _: operator.execute(args), range(30))]
    assert sorted(ids) == [f"TCK-{n}" for n in range(1001, 1031)]


def test_an_unknown_priority_is_a_value_error_the_model_can_act_on(tmp_path: Path) -> None:
    operator = CreateTicketOperator(db_path=tmp_path / "t.db")
    with pytest.raises(ValueError, match=r"unknown priority 'critical' \(use one of: low, normal, high, urgent\)"):
        operator.execute({"title": "t", "description": "d", "priority": "critical"})
    assert not (tmp_path / "t.db").exists()


def test_escalation_without_a_database_waits_five_minutes() -> None:
    output = EscalateOperator().execute({"reason": "Customer explicitly requested a human agent"})
    assert output == {"queue": "human-support", "etaMinutes": 5,
                      "reason": "Customer explicitly requested a human agent"}
    assert list(output) == ["queue", "etaMinutes", "reason"]


def test_escalation_without_a_reason_gets_the_default_reason() -> None:
    assert EscalateOperator().execute({"reason": ""})["reason"] == "Customer requested live assistance"


def test_escalation_with_a_database_is_recorded_and_waits_longer_behind_open_tickets(tmp_path: Path) -> None:
    db = tmp_path / "support.db"
    tickets = CreateTicketOperator(db_path=db)
    for _ in range(3):
        tickets.execute({"title": "t", "description": "d", "priority": "low"})
    escalate = EscalateOperator(db_path=db, clock=lambda: NOON)
    assert escalate.execute({"reason": "angry customer"})["etaMinutes"] == 8
    assert escalate.store is not None
    [recorded] = escalate.store.escalations()
    assert (recorded.queue, recorded.reason, recorded.eta_minutes) == ("human-support", "angry customer", 8)


@pytest.mark.parametrize("operator_type", [KBSearchOperator, CreateTicketOperator, EscalateOperator])
def test_every_operator_describes_itself_to_the_model(operator_type: type) -> None:
    metadata = operator_metadata(operator_type)
    assert all((metadata.prompt_hint, metadata.usage_example, metadata.constraints_description))


async def test_the_runtime_binds_kb_search_with_its_typed_input(kb_search: KBSearchOperator) -> None:
    bound = bind("KBSearchOperator", kb_search)
    assert bound.input_type is KBSearchInput
    output = await bound.invoke({"query": "refund"}, OperatorContext.root())
    assert output["articleId"] == "KB-REFUND-014"

