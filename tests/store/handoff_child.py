"""The program the handoff crash test kills: triage hands over to billing, whose refund call
never ends.

Run as ``python handoff_child.py STORE_URL LOG_DIR``. It prints ``ready`` once the refund is
running (its call is in the ledger), then waits to be killed.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path

from bloge import Agent, open_store
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, ToolCall
from bloge.store import Store


def triage_model(request: LlmRequest) -> LlmResponse:
    return LlmResponse("", "tool_calls", tool_calls=(
        ToolCall("h1", "transfer_to_billing", '{"reason": "a refund"}'),))


def billing_model(request: LlmRequest) -> LlmResponse:
    if not any(m.role == "tool" and m.tool_call_id == "r1" for m in request.messages):
        return LlmResponse("", "tool_calls", tool_calls=(
            ToolCall("r1", "refund", '{"order_id": "A1"}'),))
    return LlmResponse("Billing here: " + request.messages[-1].content)


def agents(store_url: str, logs: Path, *, hang: bool) -> tuple[Agent, Store, list[int]]:
    """The triage agent on ``store_url``, and how often its model was asked."""
    asked: list[int] = []

    def counted(request: LlmRequest) -> LlmResponse:
        asked.append(1)
        return triage_model(request)

    def refund(order_id: str) -> str:
        """Refund an order."""
        with (logs / "refund.log").open("a") as file:
            file.write(order_id + "\n")
        if hang:
            print("ready", flush=True)  # noqa: T201 -- the parent waits for this line
            threading.Event().wait()
        return f"refunded {order_id}"

    store = open_store(store_url)
    billing = Agent(FunctionProvider(billing_model), [refund], name="billing",
                    system_prompt="You are billing.")
    triage = Agent(FunctionProvider(counted), name="triage", system_prompt="You triage.",
                   handoffs=[billing], store=store)
    return triage, store, asked


if __name__ == "__main__":
    agent, _, _ = agents(sys.argv[1], Path(sys.argv[2]), hang=True)
    asyncio.run(agent.arun_output("I want a refund for A1"))
