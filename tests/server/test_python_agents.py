"""``create_app(agents=[Agent, …], store=…)``: Python ``Agent`` objects served with no settings
file, by their names, on every endpoint — on a real server on 127.0.0.1, through the official
``openai`` SDK and plain HTTP."""

from __future__ import annotations

import httpx
import pytest

from bloge import Agent, BlogeUsageError
from bloge.agent import Budget, BudgetPolicy
from bloge.llm import LlmResponse, ScriptedProvider, tool_call_response
from bloge.llm.prices import ModelPrice, PriceTable
from bloge.server import create_app
from bloge.store import Store
from tests.server.conftest import V1Client
from tests.server.live_server import LiveServer


def lookup(q: str) -> str:
    """Look a word up."""
    return q.upper()


def serving(store: Store, *agents: Agent, mcp: bool = False) -> LiveServer:
    return LiveServer(create_app(agents=list(agents), store=store, mcp=mcp))


def support(*answers: str | LlmResponse) -> Agent:
    return Agent(ScriptedProvider(*answers), [lookup], name="support", model="gpt-4o")


def test_the_agents_are_models_by_name_through_the_openai_sdk(store: Store,
                                                              v1_client: V1Client) -> None:
    with serving(store, support("Hi."), Agent(ScriptedProvider(), name="other")) as server:
        client = v1_client(server.url())
        assert sorted(model.id for model in client.models.list()) == ["other", "support"]
        completion = client.chat.completions.create(
            model="support", messages=[{"role": "user", "content": "Hello"}])
    assert completion.choices[0].message.content == "Hi."


def test_a_python_tool_runs_in_a_streamed_completion(store: Store, v1_client: V1Client) -> None:
    agent = support(tool_call_response("lookup", '{"q": "kb"}'), "Found KB.")
    with serving(store, agent) as server:
        client = v1_client(server.url())
        stream = client.chat.completions.create(
            model="support", messages=[{"role": "user", "content": "Find kb"}], stream=True)
        text = "".join(chunk.choices[0].delta.content or "" for chunk in stream
                       if chunk.choices)
    assert text == "Found KB."


def test_the_runs_api_records_a_run_of_a_python_agent(store: Store) -> None:
    agent = support(tool_call_response("lookup", '{"q": "kb"}'), "Found KB.")
    with serving(store, agent) as server:
        response = httpx.post(server.url("/agents/support/runs"), json={"input": "Find kb"})
        assert response.status_code == 200, response.text
        body = response.json()
        assert (body["status"], body["content"], body["turns_used"]) == (
            "succeeded", "Found KB.", 2)
        assert httpx.get(server.url(f"/runs/{body['run_id']}")).json()["status"] == "succeeded"


def test_the_first_agent_is_the_default_of_chat_and_the_page(store: Store) -> None:
    with serving(store, support("Hi."), Agent(ScriptedProvider(), name="other")) as server:
        assert httpx.post(server.url("/chat"), content="Hello").text == "Hi."
        listed = httpx.get(server.url("/agents")).json()
        assert listed["default"] == "support"
        assert sorted(agent["id"] for agent in listed["agents"]) == ["other", "support"]
        assert httpx.get(server.url("/")).status_code == 200


async def test_mcp_serves_a_python_agent_as_a_tool(store: Store) -> None:
    pytest.importorskip("mcp", reason="the MCP endpoint needs the extra: pip install 'bloge[mcp]'")
    import httpx2  # noqa: PLC0415 -- with the extra [mcp]
    from mcp import Client  # noqa: PLC0415 -- with the extra [mcp]
    from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415 -- ditto

    with serving(store, support("Hi from MCP."), mcp=True) as server:
        async with httpx2.AsyncClient() as http, \
                Client(streamable_http_client(server.url("/mcp"), http_client=http),
                       cache=None) as client:
            result = await client.call_tool("support", {"message": "hello"})
    assert not result.is_error
    assert [getattr(block, "text", None) for block in result.content] == ["Hi from MCP."]


def test_two_agents_of_one_name_are_a_usage_error(store: Store) -> None:
    with pytest.raises(BlogeUsageError, match="two agents are named 'agent'"):
        create_app(agents=[Agent(ScriptedProvider()), Agent(ScriptedProvider())], store=store)


def test_a_served_agent_keeps_its_budget_policy(store: Store) -> None:
    # A model priced by the agent's own policy alone, and a run default it must keep.
    policy = BudgetPolicy(run=Budget(usd=1.0), prices=PriceTable(
        {"house-model": ModelPrice(1.0, 2.0)}))
    agent = Agent(ScriptedProvider(LlmResponse("Hi.", prompt_tokens=1000,
                                               completion_tokens=500)),
                  name="support", model="house-model", budgets=policy)
    with serving(store, agent) as server:
        response = httpx.post(server.url("/agents/support/runs"), json={"input": "Hello"})
        assert response.status_code == 200, response.text
        assert response.json()["usage"]["cost_usd"] == pytest.approx(0.002)
