"""The customer-support agent's tools: knowledge-base search, tickets and escalation.

Each operator receives the dict built by its tool's ``input { … }`` block in
``agent-customer-support.bloge`` and returns a JSON-ready dict whose first keys match the
public example's tools. They are synchronous; the agent runtime runs them in worker threads.
A ``ValueError`` is the model's mistake (a bad argument): the runtime shows it to the model.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, TypedDict

from bloge.core import OperatorContext, OperatorMetadata
from examples.support.knowledge_base import KnowledgeBase
from examples.support.tickets import Priority, TicketStore, iso_utc, utc_now

DEFAULT_TICKET_DB = "var/tickets.db"
HUMAN_SUPPORT_QUEUE = "human-support"
BASE_WAIT_MINUTES = 5
MAX_WAIT_MINUTES = 60


class KBSearchInput(TypedDict):
    """``searchKnowledgeBase``'s arguments."""

    query: str


class CreateTicketInput(TypedDict):
    """``createTicket``'s arguments."""

    title: str
    description: str
    priority: str


class EscalateInput(TypedDict):
    """``escalateToHuman``'s arguments."""

    reason: str


class KBSearchOperator:
    """Find the help-center article that best answers a customer's question (BM25 ranking).

    Output: ``{articleId, summary, query, title, score, related}``. ``articleId`` and
    ``title`` are ``None`` when no article shares a word with the query; ``summary`` then says
    so. ``related`` lists the ids of the next best articles.
    """

    metadata: ClassVar[OperatorMetadata] = OperatorMetadata(
        prompt_hint=(
            "Search the help-center knowledge base with the customer's question and get the "
            "best article's id and one-sentence answer, plus related article ids."
        ),
        usage_example='{"query": "How do I reset my password?"}',
        constraints_description=(
            "query must not be empty. articleId is null when no article matched: then do not "
            "invent an answer; ask for details, create a ticket or escalate."
        ),
    )

    def __init__(
        self, *, knowledge_base: KnowledgeBase | None = None, related_limit: int = 3
    ) -> None:
        # The index is built here, once: every search after that only reads it.
        self.knowledge_base = knowledge_base or KnowledgeBase.bundled()
        self.related_limit = related_limit

    def execute(self, input: KBSearchInput, ctx: OperatorContext | None = None) -> dict[str, Any]:
        query = _text(input.get("query"))
        if not query:
            raise ValueError("query must not be empty: pass the customer's question")
        hits = self.knowledge_base.search(query, limit=1 + self.related_limit)
        if not hits:
            return {
                "articleId": None,
                "summary": (
                    f"No knowledge-base article matched {query!r}. Do not guess an answer: "
                    "ask the customer for details, create a ticket or escalate to a human."
                ),
                "query": query,
                "title": None,
                "score": 0.0,
                "related": [],
            }
        best, *others = hits
        return {
            "articleId": best.article.id,
            "summary": best.article.summary,
            "query": query,
            "title": best.article.title,
            "score": round(best.score, 3),
            "related": [hit.article.id for hit in others],
        }


class CreateTicketOperator:
    """Open a support ticket for follow-up by the support team, stored in SQLite.

    Output: ``{ticketId, status, priority, title, createdAt}``; ids run ``TCK-1001``,
    ``TCK-1002``, … across restarts. An unknown priority raises ``ValueError``.
    """

    metadata: ClassVar[OperatorMetadata] = OperatorMetadata(
        prompt_hint=(
            "Open a support ticket so that the support team follows up later; returns the "
            "ticket id to quote to the customer."
        ),
        usage_example=(
            '{"title": "Refund not received", "description": "Refund for order 1182 requested '
            '12 days ago, nothing received yet.", "priority": "high"}'
        ),
        constraints_description=(
            "priority is one of low, normal, high, urgent (default normal). Describe the "
            "problem in the customer's words; never put passwords or card numbers in a ticket."
        ),
    )

    def __init__(
        self,
        *,
        db_path: str | Path = DEFAULT_TICKET_DB,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.store = TicketStore(db_path, clock=clock)

    def execute(
        self, input: CreateTicketInput, ctx: OperatorContext | None = None
    ) -> dict[str, Any]:
        priority_text = _text(input.get("priority"))
        priority = Priority.parse(priority_text) if priority_text else Priority.NORMAL
        ticket = self.store.create_ticket(
            title=_text(input.get("title")) or "Support request",
            description=_text(input.get("description")),
            priority=priority,
        )
        return {
            "ticketId": ticket.ticket_id,
            "status": ticket.status,
            "priority": ticket.priority.value,
            "title": ticket.title,
            "createdAt": iso_utc(ticket.created_at),
        }


class EscalateOperator:
    """Hand the conversation over to a human support agent.

    Output: ``{queue, etaMinutes, reason}``. Without a database the wait is a flat 5 minutes;
    with ``db_path`` the escalation is recorded and the wait grows by a minute per open
    ticket (the same people answer both), capped at an hour.
    """

    metadata: ClassVar[OperatorMetadata] = OperatorMetadata(
        prompt_hint=(
            "Escalate the conversation to a human support agent when the customer asks for "
            "one or the problem cannot be solved with the knowledge base."
        ),
        usage_example='{"reason": "Customer explicitly requested a human agent"}',
        constraints_description=(
            "Ends the conversation for the assistant. Give a short reason a human can act on; "
            "tell the customer the expected wait (etaMinutes)."
        ),
    )

    def __init__(
        self,
        *,
        db_path: str | Path | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.store = TicketStore(db_path, clock=clock) if db_path is not None else None

    def execute(self, input: EscalateInput, ctx: OperatorContext | None = None) -> dict[str, Any]:
        reason = _text(input.get("reason")) or "Customer requested live assistance"
        eta_minutes = BASE_WAIT_MINUTES
        if self.store is not None:
            open_tickets = self.store.count_open_tickets()
            eta_minutes = min(BASE_WAIT_MINUTES + open_tickets, MAX_WAIT_MINUTES)
            self.store.record_escalation(HUMAN_SUPPORT_QUEUE, reason, eta_minutes)
        return {"queue": HUMAN_SUPPORT_QUEUE, "etaMinutes": eta_minutes, "reason": reason}


def _text(value: object) -> str:
    """A tool argument as trimmed text; a missing (``None``) argument is empty."""
    return "" if value is None else str(value).strip()
