"""``handoff <name> : agent <agentId> { description = "…" }`` in an agent body."""

from __future__ import annotations

import pytest

from bloge import AgentDslCompiler, CompileError
from bloge.agent.handoffs import HandoffDef, check_targets

TWO = """
agent triage {
  model = "m"
  handoff billing : agent billingAgent { description = "Billing questions." }
}
agent billingAgent { model = "m" }
"""


def test_a_handoff_compiles_into_the_agents_handoffs() -> None:
    triage, billing = AgentDslCompiler().compile_all(TWO)
    assert triage.handoffs == (HandoffDef("billing", "billingAgent", "Billing questions."),)
    assert billing.handoffs == ()
    check_targets([triage, billing], {"triage", "billingAgent"})


def test_a_handoff_to_an_agent_nobody_declares_is_located_with_a_suggestion() -> None:
    source = TWO.replace('agent billingAgent { model = "m" }', "")
    (triage,) = AgentDslCompiler().compile_all(source, filename="triage.bloge")
    with pytest.raises(CompileError) as raised:
        check_targets([triage], {"triage", "billingAgents"})
    error = raised.value
    assert (error.filename, error.line, error.column) == ("triage.bloge", 4, 27)
    assert "goes to agent 'billingAgent', which no DSL file declares" in str(error)
    assert "did you mean 'billingAgents'" in str(error)


def test_a_handoff_to_the_agent_itself_is_a_located_error() -> None:
    source = 'agent triage {\n  model = "m"\n  handoff again : agent triage { }\n}\n'
    with pytest.raises(CompileError) as raised:
        AgentDslCompiler().compile(source, filename="self.bloge")
    assert (raised.value.line, raised.value.column) == (3, 25)
    assert "goes to agent 'triage' itself" in str(raised.value)


@pytest.mark.parametrize(("body", "message", "column"), [
    ("handoff billing { }", "a handoff needs a name and an agent", 3),
    ("handoff billing : Billing { }", "a handoff needs a name and an agent", 21),
    ('handoff billing : agent b { reason = "x" }', "unknown keyword 'reason'", 31),
    ("handoff billing : agent b { tool x : Y { } }", "a handoff holds only its description",
     31),
])
def test_a_malformed_handoff_is_a_located_error(body: str, message: str, column: int) -> None:
    source = f'agent triage {{\n  model = "m"\n  {body}\n}}\n'
    with pytest.raises(CompileError) as raised:
        AgentDslCompiler().compile(source)
    assert message in str(raised.value)
    assert (raised.value.line, raised.value.column) == (3, column)


def test_two_handoffs_of_one_name_are_an_error_at_the_second() -> None:
    source = ('agent triage {\n  model = "m"\n  handoff b : agent x { }\n'
              '  handoff b : agent y { }\n}\n')
    with pytest.raises(CompileError, match="duplicate") as raised:
        AgentDslCompiler().compile(source)
    assert raised.value.line == 4


def test_a_handoff_whose_tool_has_a_tool_s_name_is_an_error_at_the_handoff() -> None:
    source = ('agent triage {\n  model = "m"\n  tool transfer_to_b : agent b { }\n'
              '  handoff b : agent b { }\n}\n')
    with pytest.raises(CompileError) as raised:
        AgentDslCompiler().compile(source, filename="triage.bloge")
    assert (raised.value.filename, raised.value.line, raised.value.column) == (
        "triage.bloge", 4, 11)
    assert ("handoff 'b' is offered as the tool 'transfer_to_b', which is also the name of the "
            "tool at line 3, column 8") in str(raised.value)


def test_agent_stays_a_word_of_headers_and_field_types() -> None:
    source = ('stream agent agent_x {\n  model = "m"\n  output { agent: string }\n}\n')
    (definition,) = AgentDslCompiler().compile_all(source)
    assert definition.id == "agent_x"
