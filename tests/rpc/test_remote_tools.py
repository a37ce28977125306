"""Agent tools that run in another service: ``rpc:<service>/<method>`` operators, typed by
the service's interface, failing like any tool."""

from __future__ import annotations

import json

from bloge import (
    AgentDslCompiler,
    AgentInput,
    LlmChatOperator,
    OperatorRegistry,
    agent_operator,
    rpc,
)
from bloge.llm import ScriptedProvider, tool_call_response
from tests.rpc.conftest import Link
from tests.rpc.services import Inventory, Shelf

AGENT = """
agent clerk {
  model = "gpt-4o"
  max_turns = 3
  tool reserve : Reserve {
    description = "Reserve items"
    input { sku = tool_args.sku quantity = tool_args.quantity }
  }
}
"""


def clerk(operator: object, provider: ScriptedProvider) -> object:
    registry = (OperatorRegistry.builder().register("Reserve", operator)
                .register("llmChat", LlmChatOperator(provider)).build())
    definition = AgentDslCompiler(registry).compile_all(AGENT)[0]
    return definition, agent_operator("clerk", definition, registry)


async def test_the_interface_types_the_tools_schema() -> None:
    operator = rpc.RemoteOperator(rpc.InProcessTransport(), "inventory", "reserve",
                                  interface=Inventory)
    definition, _ = clerk(operator, ScriptedProvider("ok"))
    schema = definition.tools[0].tool_definition.parameters  # type: ignore[attr-defined]  # an AgentDef
    assert schema["properties"]["quantity"]["type"] == "integer"
    assert schema["properties"]["sku"]["type"] == "string"
    assert operator.metadata.prompt_hint == "Take ``quantity`` of ``sku``: not idempotent."


async def test_a_remote_tool_runs_in_the_service(link: Link) -> None:
    shelf = Shelf()
    transport = await link({"inventory": rpc.serve(shelf, as_=Inventory)})
    operator = rpc.RemoteOperator(transport, "inventory", "reserve", interface=Inventory)
    provider = ScriptedProvider(tool_call_response("reserve", '{"sku": "apple", "quantity": 2}'),
                                "Reserved.")
    _, agent = clerk(operator, provider)
    output = await agent.aexecute(AgentInput.of("two apples"))  # type: ignore[attr-defined]  # an agent operator
    assert output.content == "Reserved."
    assert list(output.tool_results.values()) == [{"sku": "apple", "quantity": 2, "left": 3}]
    assert shelf.counts["apple"] == 3


async def test_a_remote_failure_is_fed_back_to_the_model(link: Link) -> None:
    transport = await link({"inventory": rpc.serve(Shelf(), as_=Inventory)})
    operator = rpc.RemoteOperator(transport, "inventory", "reserve", interface=Inventory)
    provider = ScriptedProvider(tool_call_response("reserve", '{"sku": "pear", "quantity": 9}'),
                                "Sorry.")
    _, agent = clerk(operator, provider)
    output = await agent.aexecute(AgentInput.of("nine pears"))  # type: ignore[attr-defined]  # an agent operator
    assert output.content == "Sorry."
    tool_message = provider.requests[1].messages[-1]
    assert "invalid_argument" in tool_message.content
    assert "only 1 pear left" in tool_message.content


async def test_arguments_that_do_not_fit_never_leave_the_process() -> None:
    shelf = Shelf()
    transport = rpc.InProcessTransport()
    transport.register("inventory", rpc.serve(shelf, as_=Inventory))
    operator = rpc.RemoteOperator(transport, "inventory", "reserve", interface=Inventory)
    provider = ScriptedProvider(
        tool_call_response("reserve", '{"sku": "apple", "quantity": "lots"}'), "Hm.")
    _, agent = clerk(operator, provider)
    await agent.aexecute(AgentInput.of("apples"))  # type: ignore[attr-defined]  # an agent operator
    assert "quantity" in provider.requests[1].messages[-1].content
    assert shelf.reservations == 0


async def test_an_untyped_remote_tool_sends_its_input_as_it_is() -> None:
    seen: list[str] = []

    async def handler(method: str, payload: str) -> str:
        seen.append(f"{method} {payload}")
        return json.dumps({"ok": True})

    transport = rpc.InProcessTransport()
    transport.register("inventory", handler)
    operator = rpc.RemoteOperator(transport, "inventory", "reserve")
    provider = ScriptedProvider(tool_call_response("reserve", '{"sku": "a", "quantity": "1"}'),
                                "Done.")
    _, agent = clerk(operator, provider)
    output = await agent.aexecute(AgentInput.of("a"))  # type: ignore[attr-defined]  # an agent operator
    assert seen == ['reserve {"sku": "a", "quantity": "1"}']
    assert list(output.tool_results.values()) == [{"ok": True}]
