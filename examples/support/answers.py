"""How the support agent's tool results read as answers of the offline model.

Registered in ``settings.yaml`` (``bloge.llm.offline.answer-formatters``): an article is cited
by its id, a ticket is quoted with its priority, an escalation names its queue and the wait.
The results are recognised by the keys :mod:`examples.support.operators` returns, so that a
DSL may name the tools as it likes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bloge import ToolDefinition
from bloge.llm.offline import ToolResult, abilities, readable_number


def format_answer(result: ToolResult, tools: Sequence[ToolDefinition]) -> str | None:
    """The answer for a knowledge-base article, a ticket or an escalation; ``None`` for any
    other result."""
    if result.is_error:
        return None
    match result.value:
        case {"articleId": _, "summary": str()}:
            return _article(result.value, [t for t in tools if t.name != result.tool_name])
        case {"ticketId": _}:
            return _ticket(result.value)
        case {"queue": _} | {"etaMinutes": _}:
            return _escalation(result.value)
    return None


def _article(value: Mapping[str, Any], others: Sequence[ToolDefinition]) -> str:
    if not value["articleId"]:
        text = "I couldn't find a knowledge-base article that answers this."
        if others:
            text += f" I can also {abilities(others)}: just ask."
        return text
    return f"{value['articleId']} — {value['summary']}"


def _ticket(value: Mapping[str, Any]) -> str:
    ticket = value["ticketId"]
    priority = value.get("priority") or "normal"
    title = str(value.get("title") or "support request").rstrip(".")
    return (f"I created ticket {ticket} (priority {priority}): {title}. The support team will "
            f"follow up; quote {ticket} if you contact us about it.")


def _escalation(value: Mapping[str, Any]) -> str:
    queue = value.get("queue") or "human support"
    text = f"I've handed this conversation to a human agent in the {queue} queue"
    eta = value.get("etaMinutes")
    if isinstance(eta, (int, float)):
        text += (f"; the expected wait is about {readable_number(eta)} "
                 f"minute{'' if eta == 1 else 's'}")
    return text + "."
