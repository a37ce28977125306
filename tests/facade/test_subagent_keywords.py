"""A sub-agent tool's ``thread`` and ``context``, as ``as_tool`` and the DSL check them: each
is ``"fresh"`` or ``"parent"``; a bad value is a usage error, or in the DSL a compile error
located where it is written; neither is a keyword of an operator's tool. (What each does:
``test_subagent_thread.py``, ``test_subagent_context.py``.)"""

from __future__ import annotations

import pytest

from bloge import Agent, AgentDslCompiler, BlogeUsageError, CompileError
from bloge.llm import ScriptedProvider


@pytest.mark.parametrize(("keyword", "bad"), [("thread", "caller"), ("context", "thread")])
def test_an_unknown_value_is_a_usage_error_naming_it(keyword: str, bad: str) -> None:
    researcher = Agent(ScriptedProvider("x"), name="researcher")
    with pytest.raises(BlogeUsageError, match=f"{keyword} must be one of 'fresh', 'parent', "
                                              f"got '{bad}'"):
        researcher.as_tool(**{keyword: bad})


@pytest.mark.parametrize(("keyword", "bad", "column"), [("thread", "caller", 14),
                                                         ("context", "thread", 15)])
def test_a_bad_value_in_a_dsl_agent_tool_is_a_located_compile_error(
        keyword: str, bad: str, column: int) -> None:
    with pytest.raises(CompileError) as error:
        AgentDslCompiler().compile_all(
            'agent triage { model = "m"\n'
            '  tool research : agent researcher {\n'
            f'    {keyword} = "{bad}" }} }}', filename="triage.bloge")
    assert (error.value.line, error.value.column) == (3, column)
    assert f"{keyword} must be one of 'fresh', 'parent'" in str(error.value)
    assert f"'{bad}'" in str(error.value)


@pytest.mark.parametrize("keyword", ["thread", "context"])
def test_an_operator_tool_takes_neither(keyword: str) -> None:
    with pytest.raises(CompileError, match=f"unknown keyword '{keyword}' in tool 'clock'"):
        AgentDslCompiler().compile_all(
            f'agent triage {{ model = "m"\n  tool clock : external {{ {keyword} = "parent" }} }}')
