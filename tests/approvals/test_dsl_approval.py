"""The DSL's ``requires_approval`` and ``tool x : external { … }``."""

from __future__ import annotations

from typing import Any

import pytest

from bloge import Agent
from bloge.core.errors import DslError
from bloge.dsl.expression import Expression
from bloge.llm import ScriptedProvider

SOURCE = """
agent payer {
  model = "m"
  tool pay : pay {
    description = "Pay"
    input { amount = tool_args.amount }
    requires_approval = tool_args.amount > 100
  }
  tool wipe : pay { requires_approval = true }
  tool ask_user : external {
    description = "Ask the user"
    parameters { question = "string"  choices = "array?" }
  }
}
"""


def pay(input: dict[str, Any]) -> str:
    return "paid"


def test_a_tool_s_approval_rule_and_an_external_tool_compile(tmp_path: Any) -> None:
    path = tmp_path / "payer.bloge"
    path.write_text(SOURCE)
    agent = Agent.from_dsl(path, llm=ScriptedProvider("hi"), tools=[pay])
    definition = agent.operator.agent_def
    assert isinstance(definition.tool("pay").requires_approval, Expression)
    assert definition.tool("wipe").requires_approval is True
    external = definition.tool("ask_user")
    assert external.external
    assert external.tool_definition.parameters == {
        "type": "object", "properties": {"question": {"type": "string"},
                                         "choices": {"type": "array"}},
        "required": ["question"]}


def test_an_unknown_variable_in_the_rule_is_a_located_error(tmp_path: Any) -> None:
    path = tmp_path / "bad.bloge"
    path.write_text('agent a {\n  model = "m"\n  tool pay : pay { requires_approval = amount > 1 }\n}\n')
    with pytest.raises(DslError, match=r"bad.bloge:3:.*unknown variable 'amount'"):
        Agent.from_dsl(path, llm=ScriptedProvider("hi"), tools=[pay])


@pytest.mark.parametrize(("setting", "line"), [("requires_approval = true", "requires_approval"),
                                               ("input { q = tool_args.q }", "input"),
                                               ("timeout = 5", "timeout")])
def test_an_operator_s_setting_on_an_external_tool_is_a_located_error(
        tmp_path: Any, setting: str, line: str) -> None:
    path = tmp_path / "ext.bloge"
    path.write_text(f'agent a {{\n  model = "m"\n  tool ext : external {{\n    {setting}\n'
                    "  }\n}\n")
    with pytest.raises(DslError, match=rf"ext.bloge:4:5: tool 'ext' is external, so {line} "
                                       "does not apply: "):
        Agent.from_dsl(path, llm=ScriptedProvider("hi"))
