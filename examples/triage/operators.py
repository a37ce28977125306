"""The billing agent's tools: an order's invoice, and a refund of its last charge.

The invoices are a small fixed book (an example needs no payment provider), so that every
run answers alike. Each operator receives the dict its tool's ``input { … }`` block builds in
``triage.bloge``; a ``ValueError`` is the model's mistake, shown to it.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, TypedDict

from bloge.core import OperatorContext, OperatorMetadata

#: Invoices by order number: amount in cents, and the charges made for it.
INVOICES: dict[str, dict[str, Any]] = {
    "1234": {"amount_cents": 4900, "currency": "EUR", "status": "paid",
             "charges": ["2026-11-02", "2026-11-02"]},
    "1182": {"amount_cents": 12900, "currency": "EUR", "status": "paid",
             "charges": ["2026-10-14"]},
}


class OrderInput(TypedDict):
    """``lookupInvoice``'s arguments."""

    order_id: str


class RefundInput(TypedDict):
    """``issueRefund``'s arguments."""

    order_id: str
    reason: str


class InvoiceLookupOperator:
    """The invoice of an order: ``{orderId, amount, currency, status, charges}``, where
    ``charges`` lists the dates the card was charged (twice: a double charge)."""

    metadata: ClassVar[OperatorMetadata] = OperatorMetadata(
        prompt_hint="Look up an order's invoice: amount, status and every charge made.",
        usage_example='{"order_id": "1234"}',
        constraints_description="order_id is the order's number, digits only.")

    def execute(self, input: OrderInput, ctx: OperatorContext | None = None) -> dict[str, Any]:
        order = order_number(input.get("order_id"))
        invoice = INVOICES[order]
        return {"orderId": order, "amount": invoice["amount_cents"] / 100,
                "currency": invoice["currency"], "status": invoice["status"],
                "charges": list(invoice["charges"])}


class RefundOperator:
    """Refund an order's last charge: ``{refundId, orderId, amount, currency, status}``; an
    order charged once is refused (``ValueError``: there is nothing to refund twice)."""

    metadata: ClassVar[OperatorMetadata] = OperatorMetadata(
        prompt_hint="Refund the duplicate charge of an order.",
        usage_example='{"order_id": "1234", "reason": "charged twice"}',
        constraints_description="Only an order charged more than once is refunded.")

    def execute(self, input: RefundInput, ctx: OperatorContext | None = None) -> dict[str, Any]:
        order = order_number(input.get("order_id"))
        invoice = INVOICES[order]
        if len(invoice["charges"]) < 2:
            raise ValueError(f"order {order} was charged once; there is no duplicate charge "
                             "to refund")
        return {"refundId": f"RF-{order}", "orderId": order,
                "amount": invoice["amount_cents"] / 100, "currency": invoice["currency"],
                "status": "refunded"}


def order_number(value: object) -> str:
    """The order's number in ``value`` ("1234", "order #1234"); ``ValueError`` naming the
    known ones when there is none or it is unknown."""
    found = re.search(r"\d+", str(value or ""))
    if found is None or found.group() not in INVOICES:
        known = ", ".join(sorted(INVOICES))
        raise ValueError(f"no order {value!r}; give the order's number (known: {known})")
    return found.group()
