"""A DSL tool that asks a remote A2A agent, against the protocol SDK's own server on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("a2a", reason="A2A needs the extra: pip install 'bloge[a2a]'")

from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes.agent_card_routes import create_agent_card_routes
from a2a.server.routes.jsonrpc_routes import create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2 as pb
from starlette.applications import Starlette
from starlette.responses import JSONResponse

from bloge import AgentDslCompiler, LlmChatOperator, OperatorRegistry, agent_operator
from bloge.a2a import A2aAgentTool, RemoteAgentError
from bloge.core import tracecontext
from bloge.core.context import OperatorContext
from bloge.core.tracecontext import TraceParent
from bloge.llm import ScriptedProvider
from bloge.llm.testing import tool_call_response
from tests.server.live_server import LiveServer

KEY = "sk-remote-secret"
#: JSON-RPC answers that are not A2A's, by the header value that asks for them.
ANSWERS = {
    "no-task": {"jsonrpc": "2.0", "id": 1, "result": {"neither": "task nor message"}},
    "huge": {"jsonrpc": "2.0", "id": 1, "result": {"message": {
        "role": "ROLE_AGENT", "messageId": "m1", "parts": [{"text": "a" * 2_000_000}]}}},
}


class Pricing(AgentExecutor):
    """The SDK's kind of agent: quotes a price for what it is asked, and remembers the
    headers it was sent."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.failing = False

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        text = context.get_user_input()
        self.asked.append(text)
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if self.failing:
            await updater.failed(pb.Message(role=pb.ROLE_AGENT, message_id="m1",
                                            parts=[pb.Part(text="no price list today")]))
            return
        await updater.add_artifact([pb.Part(text=f"{text}: 42 EUR")], name="quote")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def sdk_app(executor: Pricing, url: str) -> Starlette:
    card = pb.AgentCard(
        name="pricing", description="Quotes prices", version="1.0",
        supported_interfaces=[pb.AgentInterface(url=url, protocol_binding="JSONRPC",
                                                protocol_version="1.0")],
        capabilities=pb.AgentCapabilities(streaming=False),
        default_input_modes=["text/plain"], default_output_modes=["text/plain"],
        skills=[pb.AgentSkill(id="quote", name="quote", description="Quote a price",
                              tags=["price"])])
    handler = DefaultRequestHandler(executor, InMemoryTaskStore(), card)
    return Starlette(routes=[*create_agent_card_routes(card),
                             *create_jsonrpc_routes(handler, "/")])


@pytest.fixture
def remote() -> Iterator[tuple[Pricing, str, list[dict[str, str]]]]:
    executor = Pricing()
    headers: list[dict[str, str]] = []
    holder: dict[str, Starlette] = {}

    async def app(scope: dict[str, object], receive: Any, send: Any) -> None:
        """The SDK's app, made once the server's port (in its card) is known."""
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        sent = {k.decode().lower(): v.decode()
                for k, v in scope["headers"]}  # type: ignore[attr-defined]  # ASGI headers
        headers.append(sent)
        if sent.get("x-fail-with") == "503":
            await JSONResponse({"error": "busy"}, status_code=503)(scope, receive, send)
            return
        if scope["method"] == "POST" and sent.get("x-answer") in ANSWERS:
            await JSONResponse(ANSWERS[sent["x-answer"]])(scope, receive, send)
            return
        await holder["app"](scope, receive, send)

    with LiveServer(app) as server:
        holder["app"] = sdk_app(executor, server.url("/"))
        yield executor, server.url(), headers


async def test_the_tool_asks_the_remote_agent_and_answers_with_its_artifact(
        remote: tuple[Pricing, str, list[dict[str, str]]]) -> None:
    executor, url, headers = remote
    tool = A2aAgentTool(url, api_key=KEY, headers={"X-Tenant": "acme"})
    answer = await tool.execute({"message": "two widgets"}, OperatorContext.root())
    assert answer == "two widgets: 42 EUR"
    assert executor.asked == ["two widgets"]
    assert headers[-1]["authorization"] == f"Bearer {KEY}"
    assert headers[-1]["x-tenant"] == "acme"


async def test_a_dsl_agent_uses_the_remote_agent_as_a_tool(
        remote: tuple[Pricing, str, list[dict[str, str]]]) -> None:
    _, url, _ = remote
    registry = OperatorRegistry()
    [definition] = AgentDslCompiler(registry).compile_all(f"""
agent shop {{
  model = "m"
  tool quote : a2a "{url}" {{ description = "Ask the pricing agent for a quote" }}
}}""")
    tool = definition.tools[0]
    assert tool.remote is not None
    registry.register(tool.operator_ref, A2aAgentTool(tool.remote.url))
    provider = ScriptedProvider(tool_call_response("quote", '{"message": "a bike"}'), "Done.")
    registry.register("llmChat", LlmChatOperator(provider))
    output = await agent_operator("shop", definition, registry).aexecute("price of a bike?")
    assert output.messages[2].content == "a bike: 42 EUR"


async def test_a_failed_remote_task_is_an_error_naming_the_agent(
        remote: tuple[Pricing, str, list[dict[str, str]]]) -> None:
    executor, url, _ = remote
    executor.failing = True
    tool = A2aAgentTool(url)
    with pytest.raises(RemoteAgentError, match=rf"A2A agent at {url}.* failed: no price list"):
        await tool.execute("x", OperatorContext.root())


async def test_an_http_error_names_the_agent_and_the_status_and_not_the_key(
        remote: tuple[Pricing, str, list[dict[str, str]]]) -> None:
    _, url, headers = remote
    tool = A2aAgentTool(url, api_key=KEY, headers={"X-Fail-With": "503"})
    with pytest.raises(RemoteAgentError) as caught:
        await tool.execute("x", OperatorContext.root())
    assert caught.value.status == 503
    assert url in str(caught.value)
    assert KEY not in str(caught.value)
    assert KEY not in repr(tool)
    assert len(headers) == 1  # not idempotent: asked once


async def test_an_idempotent_call_is_tried_again_after_a_passing_failure(
        remote: tuple[Pricing, str, list[dict[str, str]]]) -> None:
    _, url, headers = remote
    tool = A2aAgentTool(url, idempotent=True, max_attempts=3, backoff=0.0,
                        headers={"X-Fail-With": "503"})
    with pytest.raises(RemoteAgentError, match="HTTP 503"):
        await tool.execute("x", OperatorContext.root())
    assert len(headers) == 3


async def test_a_call_past_its_timeout_names_the_agent() -> None:
    started = asyncio.Event()

    async def silent(scope: dict[str, object], receive: object, send: object) -> None:
        if scope["type"] == "http":
            started.set()
            await asyncio.Event().wait()

    with LiveServer(silent, timeout_graceful_shutdown=0.1) as server:
        tool = A2aAgentTool(server.url("/agents/x"), timeout=0.5)
        with pytest.raises(RemoteAgentError, match=r"did not answer within 0.5 s"):
            await tool.execute("x", OperatorContext.root())
    assert started.is_set()


async def test_a_card_naming_another_host_is_refused(
        remote: tuple[Pricing, str, list[dict[str, str]]]) -> None:
    _, url, _ = remote
    tool = A2aAgentTool(url.replace("127.0.0.1", "localhost"), api_key=KEY)
    with pytest.raises(RemoteAgentError, match="names no endpoint on"):
        await tool.execute("x", OperatorContext.root())


async def test_an_answer_that_is_not_a2a_is_an_error_naming_the_agent(
        remote: tuple[Pricing, str, list[dict[str, str]]]) -> None:
    _, url, _ = remote
    tool = A2aAgentTool(url, headers={"X-Answer": "no-task"})
    with pytest.raises(RemoteAgentError, match=(
            rf"the A2A agent at {url} answered something that is not an A2A answer: ")):
        await tool.execute("x", OperatorContext.root())


async def test_an_answer_larger_than_the_cap_is_refused_as_it_arrives(
        remote: tuple[Pricing, str, list[dict[str, str]]]) -> None:
    _, url, _ = remote
    tool = A2aAgentTool(url, headers={"X-Answer": "huge"}, max_answer_bytes=100_000)
    with pytest.raises(RemoteAgentError, match=(
            rf"the A2A agent at {url} answered more than 100000 bytes \(max_answer_bytes\)")):
        await tool.execute("x", OperatorContext.root())


async def test_a_call_made_in_a_traced_run_carries_its_trace_context(
        remote: tuple[Pricing, str, list[dict[str, str]]]) -> None:
    _, url, headers = remote
    context = TraceParent(0x1234, 0x5678, 1, "vendor=x")
    token = tracecontext.outgoing.set(context)
    try:
        await A2aAgentTool(url).execute("x", OperatorContext.root())
    finally:
        tracecontext.outgoing.reset(token)
    assert {(sent["traceparent"], sent["tracestate"]) for sent in headers} == {
        (context.header, "vendor=x")}
