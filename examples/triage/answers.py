"""How the billing agent's tool results read as answers of the offline model.

Registered in ``settings.yaml`` (``bloge.llm.offline.answer-formatters``), recognised by the
keys :mod:`examples.triage.operators` returns.
"""

from __future__ import annotations

from collections.abc import Sequence

from bloge import ToolDefinition
from bloge.llm.offline import ToolResult


def format_answer(result: ToolResult, tools: Sequence[ToolDefinition]) -> str | None:
    """The answer for a refund or an invoice; ``None`` for any other result."""
    if result.is_error:
        return None
    match result.value:
        case {"refundId": str(refund), "orderId": order, "amount": amount,
              "currency": currency}:
            return (f"I refunded the duplicate charge of order {order}: {amount:.2f} {currency} "
                    f"(refund {refund}). It reaches your card within 5 business days.")
        case {"orderId": order, "amount": amount, "currency": currency,
              "charges": list(charges)}:
            times = "once" if len(charges) == 1 else f"{len(charges)} times"
            return (f"Order {order} costs {amount:.2f} {currency}; your card was charged "
                    f"{times} ({', '.join(map(str, charges))}).")
    return None
