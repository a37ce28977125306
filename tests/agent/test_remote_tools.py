"""``tool <name> : a2a "<url>" { … }``: a tool that asks an agent of another service."""

from __future__ import annotations

import pytest

from bloge import AgentDslCompiler, DslError, OperatorRegistry
from bloge.agent.definition import MESSAGE_PARAMETERS, AgentToolRef, RemoteAgent

URL = "http://127.0.0.1:9000/agents/pricing"


def compiled(tool: str) -> AgentToolRef:
    source = f'agent shop {{\n  model = "m"\n  {tool}\n}}'
    [definition] = AgentDslCompiler(OperatorRegistry()).compile_all(source, filename="a.bloge")
    return definition.tools[0]


def error(tool: str) -> str:
    source = f'agent shop {{\n  model = "m"\n  {tool}\n}}'
    with pytest.raises(DslError) as caught:
        AgentDslCompiler(OperatorRegistry()).compile(source, filename="a.bloge")
    return str(caught.value)


def test_a_remote_tool_names_its_agent_and_takes_a_message() -> None:
    tool = compiled(f'tool quote : a2a "{URL}" {{ description = "Get a quote" '
                    'idempotent = true timeout = 5s }')
    assert tool.remote == RemoteAgent("a2a", URL, idempotent=True, timeout=5.0)
    assert tool.operator_ref == "a2a:shop.quote"
    assert tool.tool_definition.parameters == MESSAGE_PARAMETERS


def test_its_parameters_are_its_own_when_declared() -> None:
    tool = compiled(f'tool quote : a2a "{URL}" {{ parameters {{ item = "string" }} }}')
    assert tool.tool_definition.parameters["required"] == ["item"]


@pytest.mark.parametrize(("tool", "where", "problem"), [
    (f'tool quote : a2b "{URL}" {{ }}', "a.bloge:3:3", "'a2b' is no protocol"),
    ('tool quote : a2a "ftp://x/y" { }', "a.bloge:3:20", "must be an http:// or https:// URL"),
    ('tool quote : a2a "http://u:secret@x/y" { }', "a.bloge:3:20", "holds credentials"),
    ('tool quote : a2a "http://x/${y}" { }', "a.bloge:3:20", "a plain string"),
    (f'tool quote : a2a "{URL}" {{ idempotent = "yes" }}', "a.bloge:3:74", "true or false"),
    ("tool quote : Op { idempotent = true }", "a.bloge:3:21", "unknown keyword 'idempotent'"),
])
def test_a_bad_remote_tool_is_an_error_where_it_is(tool: str, where: str, problem: str) -> None:
    told = error(tool)
    assert where in told
    assert problem in told


@pytest.mark.parametrize(("tool", "shown"), [
    ('tool quote : a2a "http://u:pw-SECRET@x/y" { }', '"http://u:****@x/y"'),
    ('tool quote : a2a "http://x/y?token=pw-SECRET" { }', '"http://x/y?token=****"'),
])
def test_an_address_s_credentials_are_masked_in_its_error(tool: str, shown: str) -> None:
    told = error(tool)
    assert "pw-SECRET" not in told
    _, source, caret = told.splitlines()[-3:]
    assert source.endswith(f"tool quote : a2a {shown} {{ }}")
    assert caret.endswith(f"{' ' * 19}^{'~' * (len(shown) - 1)}")
