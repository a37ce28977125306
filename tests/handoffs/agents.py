"""A triage agent that hands refunds to a billing agent, on scripted models."""

from __future__ import annotations

import json

from bloge import Agent
from bloge.llm import LlmResponse, ScriptedProvider, tool_call_response


def refund(order_id: str) -> str:
    """Refund an order."""
    return f"refunded {order_id}"


def transfer(reason: str = "a refund", *, call_id: str = "h1") -> LlmResponse:
    return tool_call_response("transfer_to_billing", json.dumps({"reason": reason}),
                              call_id=call_id)


def billing(*answers: object, store: object | None = None) -> tuple[Agent, ScriptedProvider]:
    """The billing agent: refunds order A1, then says so (or ``answers``)."""
    model = ScriptedProvider(*(answers or (
        tool_call_response("refund", '{"order_id": "A1"}', call_id="r1"), "Refunded A1.")))
    agent = Agent(model, [refund], name="billing", system_prompt="You are billing.",
                  handoff_description="Refunds and invoices.", store=store)
    return agent, model


def triage(*answers: object, handoffs: list[Agent], store: object | None = None,
           max_turns: int = 8) -> tuple[Agent, ScriptedProvider]:
    """The triage agent: hands over to billing at once (or ``answers``)."""
    model = ScriptedProvider(*(answers or (transfer(),)))
    agent = Agent(model, name="triage", system_prompt="You triage.", handoffs=handoffs,
                  store=store, max_turns=max_turns)
    return agent, model
