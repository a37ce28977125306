"""A served agent that hands over, on a real server on 127.0.0.1: the served agent stays the
entry one, the run names the agent it went on with, and its stream shows the handoff."""

from __future__ import annotations

import json

import httpx

from bloge import AgentDef, AgentDslCompiler, LlmChatOperator, OperatorRegistry, agent_operator
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, tool_call_response
from bloge.server import ServedAgents, create_app
from bloge.server.agents import AgentOperator
from bloge.store import Store
from tests.handoffs.agents import billing, triage
from tests.server.conftest import V1Client
from tests.server.live_server import LiveServer


def served(store: Store) -> LiveServer:
    billing_agent, _ = billing()
    agent, _ = triage(handoffs=[billing_agent])
    return LiveServer(create_app(agents=[agent], store=store))


def test_v1_answers_with_the_agent_handed_over_to(store: Store, v1_client: V1Client) -> None:
    with served(store) as server:
        client = v1_client(server.url())
        assert [model.id for model in client.models.list()] == ["triage"]
        completion = client.chat.completions.create(
            model="triage", messages=[{"role": "user", "content": "Refund A1"}])
    assert completion.choices[0].message.content == "Refunded A1."


def test_the_run_record_names_its_agent_and_the_one_it_went_on_with(store: Store) -> None:
    with served(store) as server:
        body = httpx.post(server.url("/agents/triage/runs"), json={"input": "Refund A1"}).json()
        assert body["content"] == "Refunded A1."
        run = httpx.get(server.url(f"/runs/{body['run_id']}")).json()
    assert (run["agent_id"], run["current_agent_id"]) == ("triage", "billing")


def test_a_streamed_run_sends_the_handoff_event(store: Store) -> None:
    with served(store) as server:
        response = httpx.post(server.url("/agents/triage/runs"),
                              json={"input": "Refund A1", "stream": True})
    frames = [block for block in response.text.split("\n\n") if "event: " in block]
    kinds = [line.removeprefix("event: ") for block in frames for line in block.split("\n")
             if line.startswith("event: ")]
    assert kinds[0] == "handoff"
    assert kinds[-1] == "done"
    data = next(line.removeprefix("data: ") for line in frames[0].split("\n")
                if line.startswith("data: "))
    assert json.loads(data) == {"from_agent": "triage", "to_agent": "billing",
                                "reason": "a refund", "turn": 1}


HANDING_OVER = """
agent triage {
  model = "gpt-4o"
  system_prompt = "You triage."
  handoff billing : agent billing { description = "Refunds" }
}
agent billing {
  model = "gpt-4o"
  system_prompt = "You are billing."
  max_turns = 2
  tool refund : Refund { description = "Refund an order" input { order_id = tool_args.order_id } }
}
"""


def refunding(request: LlmRequest) -> LlmResponse:
    """Triage hands over; billing refunds twice, then answers."""
    if request.messages[0].content == "You triage.":
        return tool_call_response("transfer_to_billing", "{}", call_id="h1")
    refunds = sum(message.role == "tool" for message in request.messages) - 1
    if refunds < 2:
        return tool_call_response("refund", '{"order_id": "A1"}', call_id=f"r{refunds}")
    return LlmResponse("Refunded A1.")


def served_dsl(store: Store, source: str = HANDING_OVER) -> LiveServer:
    registry = (OperatorRegistry.builder().register("Refund", lambda _: "refunded")
                .register("llmChat", LlmChatOperator(FunctionProvider(refunding))).build())
    definitions = {d.id: d for d in AgentDslCompiler(registry).compile_all(source)}

    def build(definition: AgentDef) -> AgentOperator:
        return agent_operator(definition.id, definition, registry, store=store)

    return LiveServer(create_app(ServedAgents(definitions, build, default="triage"),
                                 store=store))


def test_a_run_out_of_turns_after_its_handoff_resumes_with_the_cap_of_the_request(
        store: Store) -> None:
    with served_dsl(store) as server:
        stopped = httpx.post(server.url("/agents/triage/runs"), json={"input": "Refund A1"})
        assert stopped.json()["exit_reason"] == "max_turns"
        run_id = stopped.json()["id"]
        resumed = httpx.post(server.url(f"/runs/{run_id}/resume"), json={"max_turns": 4})
    assert resumed.json().get("content") == "Refunded A1.", resumed.text


def test_a_run_a_budget_stopped_after_its_handoff_resumes_with_the_limit_of_the_request(
        store: Store) -> None:
    with served_dsl(store, HANDING_OVER.replace("max_turns = 2", "budget { tool_calls = 1 }")
                    ) as server:
        stopped = httpx.post(server.url("/agents/triage/runs"), json={"input": "Refund A1"})
        assert stopped.json()["exit_reason"] == "budget", stopped.text
        run_id = stopped.json()["id"]
        resumed = httpx.post(server.url(f"/runs/{run_id}/resume"),
                             json={"budget": {"tool_calls": 5}})
    assert resumed.json().get("content") == "Refunded A1.", resumed.text
