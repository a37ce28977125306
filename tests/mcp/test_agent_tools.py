"""MCP tools in agents: the DSL names them ``<server>.<tool>``, the server's schema is the
tool's, and a failing tool is the model's to react to."""

from __future__ import annotations

from bloge import AgentDslCompiler, LlmChatOperator, OperatorRegistry, agent_operator
from bloge.llm.testing import ScriptedProvider, tool_call_response
from bloge.mcp import McpServers

DSL = """
agent helper {
  model = "gpt-4o"
  tool search : docs.search { input { query = tool_args.query } }
  tool whole : docs.search {}
  tool fail : docs.fail {}
}
"""


def registry(docs: McpServers, provider: ScriptedProvider) -> OperatorRegistry:
    return OperatorRegistry({**docs.operators(), "llmChat": LlmChatOperator(provider)})


def test_a_property_passed_through_keeps_the_servers_schema(docs: McpServers) -> None:
    agent = AgentDslCompiler(registry(docs, ScriptedProvider())).compile(DSL)

    assert agent.tool("search").tool_definition.parameters == {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "What to look for"}},
        "required": ["query"],
    }


def test_a_tool_without_input_takes_the_whole_schema_and_description(docs: McpServers) -> None:
    agent = AgentDslCompiler(registry(docs, ScriptedProvider())).compile(DSL)
    definition = agent.tool("whole").tool_definition

    assert definition.parameters["required"] == ["query"]
    assert definition.parameters["properties"]["limit"] == {"type": "integer", "minimum": 1}
    assert definition.description == "Search the docs for a query"


async def test_an_agent_calls_an_mcp_tool_and_answers_from_its_result(docs: McpServers) -> None:
    provider = ScriptedProvider(tool_call_response("search", '{"query": "reset"}'), "Done.")
    operators = registry(docs, provider)
    agent = AgentDslCompiler(operators).compile(DSL)

    output = await agent_operator("helper", agent, operators).aexecute("reset?")

    assert output.content == "Done."
    assert output.tool_results["call_1"]["summary"] == "About reset."


async def test_a_tool_error_goes_back_to_the_model_and_the_run_goes_on(
        docs: McpServers) -> None:
    provider = ScriptedProvider(tool_call_response("fail"), "Sorry, the docs are down.")
    operators = registry(docs, provider)
    agent = AgentDslCompiler(operators).compile(DSL)

    output = await agent_operator("helper", agent, operators).aexecute("reset?")

    assert output.content == "Sorry, the docs are down."
    told = [m.content for m in provider.requests[1].messages if m.role == "tool"]
    assert len(told) == 1
    assert "MCP server 'docs': tool 'fail' failed: the index is offline" in told[0]
