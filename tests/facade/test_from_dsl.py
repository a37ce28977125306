"""``Agent.from_dsl``: an ``agent { … }`` definition whose tool blocks run Python tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bloge import Agent, BlogeUsageError, CompileError, Done
from bloge.llm import ScriptedProvider, tool_call_response
from tests.handoffs.agents import billing, transfer

CALCULATOR = """\
agent calculator {
  model = "gpt-4o"
  system_prompt = "Add with the tool."
  max_turns = 3

  tool add : add { }
}
"""


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def adding() -> ScriptedProvider:
    return ScriptedProvider(tool_call_response("add", json.dumps({"a": 2, "b": 3})), "5")


def test_a_tool_block_runs_the_python_tool_of_its_name() -> None:
    model = adding()
    agent = Agent.from_dsl(CALCULATOR, llm=model, tools=[add])
    assert agent.run("2 + 3?") == "5"
    assert model.requests[1].messages[-1].content == "5"
    assert model.requests[0].model == "gpt-4o"
    assert model.requests[0].messages[0].content == "Add with the tool."


def test_a_block_without_description_or_input_shows_the_tools_own() -> None:
    agent = Agent.from_dsl(CALCULATOR, llm=adding(), tools=[add])
    tool = agent.operator.agent_def.tools[0].tool_definition
    assert tool.description == "Add two integers."
    assert tool.parameters["properties"] == {"a": {"type": "integer"}, "b": {"type": "integer"}}


def shout(text: str) -> str:
    """Say it louder."""
    return text.upper()


def test_a_block_with_input_passes_what_it_binds() -> None:
    source = CALCULATOR.replace("tool add : add { }", """tool louder : shout {
    description = "Repeat the words, louder"
    input {
      text = tool_args.words
    }
  }""")
    model = ScriptedProvider(tool_call_response("louder", '{"words": "hello"}'), "done")
    agent = Agent.from_dsl(source, llm=model, tools=[shout])
    assert agent.run("Say hello, loud") == "done"
    assert model.requests[1].messages[-1].content == "HELLO"
    assert agent.operator.agent_def.tools[0].description == "Repeat the words, louder"


def test_a_bloge_file_path_is_read(tmp_path: Path) -> None:
    path = tmp_path / "calculator.bloge"
    path.write_text(CALCULATOR, encoding="utf-8")
    assert Agent.from_dsl(path, llm=adding(), tools=[add]).run("2 + 3?") == "5"
    assert Agent.from_dsl(str(path), llm=adding(), tools=[add]).run("2 + 3?") == "5"


def test_a_block_naming_a_missing_tool_is_a_compile_error_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "calculator.bloge"
    path.write_text(CALCULATOR.replace("add : add", "add : ad"), encoding="utf-8")
    with pytest.raises(CompileError, match=r"calculator\.bloge:6:14: tool 'add' refers to "
                                           r"operator 'ad'.*did you mean 'add'\?"):
        Agent.from_dsl(path, llm=adding(), tools=[add])


def test_a_tool_no_block_names_is_a_usage_error_naming_it() -> None:
    def sub(a: int, b: int) -> int:
        return a - b

    with pytest.raises(BlogeUsageError, match=r"<string>: agent 'calculator' has no tool block "
                                              r"running 'sub'"):
        Agent.from_dsl(CALCULATOR, llm=adding(), tools=[add, sub])


def test_the_dsl_agent_streams_and_runs_with_one_operator() -> None:
    agent = Agent.from_dsl(CALCULATOR, llm=ScriptedProvider("4", "5"), tools=[add])
    assert agent.run("2 + 2?") == "4"
    assert [type(c).__name__ for c in agent.stream("2 + 3?")] == ["Token", "Done"]


TRIAGE = """\
agent triage {
  model = "gpt-4o"
  system_prompt = "You triage."
  max_turns = 6

  handoff billing : agent billing {
    description = "Refunds and invoices."
  }
}
"""


def test_a_handoff_block_hands_over_to_the_agent_of_its_name() -> None:
    billing_agent, billing_model = billing()
    model = ScriptedProvider(transfer())
    agent = Agent.from_dsl(TRIAGE, llm=model, agents=[billing_agent])
    output = agent.run_output("I want a refund for A1")
    assert output.content == "Refunded A1."
    (offered,) = model.requests[0].tools
    assert offered.name == "transfer_to_billing"
    assert "Refunds and invoices." in offered.description
    assert billing_model.requests[0].messages[0].content == "You are billing."
    assert output.checkpoint.agent_id == "billing"


def test_a_handoff_streams_and_runs_twice() -> None:
    billing_agent, _ = billing("Refunded.", "Refunded again.")
    agent = Agent.from_dsl(TRIAGE, llm=ScriptedProvider(transfer(), transfer()),
                           agents=[billing_agent])
    assert agent.run("refund A1") == "Refunded."
    chunks = list(agent.stream("refund A2"))
    assert isinstance(chunks[-1], Done)
    assert chunks[-1].final_output.content == "Refunded again."


def test_a_handoff_to_an_agent_not_given_is_a_compile_error_at_its_name(
        tmp_path: Path) -> None:
    path = tmp_path / "triage.bloge"
    path.write_text(TRIAGE, encoding="utf-8")
    billing_agent, _ = billing()
    with pytest.raises(CompileError, match=r"triage\.bloge:6:\d+: handoff 'billing' of agent "
                                           r"'triage' goes to agent 'billing', which is not "
                                           r"among the agents given to Agent.from_dsl"):
        Agent.from_dsl(path, llm=ScriptedProvider("hi"))
    misspelt = TRIAGE.replace("agent billing {", "agent biling {")
    with pytest.raises(CompileError, match=r"agent 'biling'.*did you mean 'billing'\?"):
        Agent.from_dsl(misspelt, llm=ScriptedProvider("hi"), agents=[billing_agent])


def test_a_dsl_agent_hands_over_to_another_dsl_agent() -> None:
    billing_agent = Agent.from_dsl(CALCULATOR.replace("calculator", "billing"),
                                   llm=adding(), tools=[add])
    agent = Agent.from_dsl(TRIAGE, llm=ScriptedProvider(transfer()), agents=[billing_agent])
    assert agent.run("2 + 3?") == "5"


def test_a_summary_memory_summarizes_with_the_agents_model() -> None:
    # summary(2): turn 2 goes on from a summary of turn 1's question, asked of the agent's
    # model through the agent's chat (before, such an agent only dropped the question).
    model = ScriptedProvider(tool_call_response("add", json.dumps({"a": 2, "b": 3})),
                             "They asked for 2 + 3.", "5")
    source = CALCULATOR.replace("max_turns = 3", "max_turns = 3\n  memory = summary(2)")
    output = Agent.from_dsl(source, llm=model, tools=[add]).run_output("2 + 3?")
    assert output.content == "5"
    summary = model.requests[1]
    assert summary.model == "gpt-4o"
    assert "user: 2 + 3?" in summary.messages[1].content
    assert [m.content for m in model.requests[2].messages[:2]] == [
        "Add with the tool.", "Summary of the earlier conversation:\nThey asked for 2 + 3."]
    assert output.usage.llm_calls == 3
