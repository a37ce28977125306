"""Guards on an agent's input, final answer and tool calls: what trips, what is refused, what
the run keeps, and what every verdict leaves behind — on the scripted test models."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bloge import Agent, AgentDslCompiler, CompileError, GuardrailTrippedError, OperatorRegistry
from bloge.agent import (
    AgentCallbackContext,
    AgentExecutionListener,
    GuardCheck,
    GuardCheckedPayload,
    GuardVerdict,
    MaxLengthGuard,
    MaxTurnsExceededError,
    PiiGuard,
    ToolArgsSchemaGuard,
    ToolDenylistGuard,
    input_guard,
    output_guard,
    tool_call_guard,
)
from bloge.agent.guards import find_pii
from bloge.llm import FunctionProvider, LlmRequest, ScriptedProvider, tool_call_response

REFUND_900 = tool_call_response("refund", '{"amount": 900}', call_id="c1")
refunds: list[int] = []


def refund(amount: int) -> str:
    """Refund an amount."""
    refunds.append(amount)
    return f"refunded {amount}"


class Verdicts(AgentExecutionListener):
    def __init__(self) -> None:
        self.seen: list[GuardCheckedPayload] = []

    def on_agent_guard_checked(self, context: AgentCallbackContext,
                               payload: GuardCheckedPayload) -> None:
        self.seen.append(payload)


@pytest.fixture(autouse=True)
def _no_refunds() -> None:
    refunds.clear()


def test_a_tripped_tool_call_guard_stops_the_run_before_the_tool_runs() -> None:
    agent = Agent(ScriptedProvider(REFUND_900, "done"), [refund], guards=[
        tool_call_guard(name="big_refund",
                        when='tool_name == "refund" && tool_args.amount > 500')])
    with pytest.raises(GuardrailTrippedError) as raised:
        agent.run_output("refund me")
    error = raised.value
    assert refunds == []
    assert (error.guard, error.kind, error.tool_name, error.exit_reason) == (
        "big_refund", "tool_call", "refund", "guardrail")
    assert error.verdict.tripped
    # The checkpoint leaves out the refused round: a resume asks the model again.
    assert not any(m.tool_calls for m in error.checkpoint.conversation)


def test_a_rejecting_tool_call_guard_tells_the_model_and_goes_on() -> None:
    llm = ScriptedProvider(REFUND_900, "I cannot refund that much")
    agent = Agent(llm, [refund], guards=[
        tool_call_guard(name="big_refund", action="reject",
                        when="tool_args.amount > 500")])
    output = agent.run_output("refund me")
    assert refunds == []
    assert output.content == "I cannot refund that much"
    tool_message = llm.requests[1].messages[-1]
    assert tool_message.role == "tool"
    assert tool_message.is_error
    assert "refused by the guard 'big_refund'" in tool_message.content


def test_a_passing_tool_call_runs() -> None:
    llm = ScriptedProvider(tool_call_response("refund", '{"amount": 20}'), "ok")
    agent = Agent(llm, [refund], guards=[tool_call_guard(when="tool_args.amount > 500")])
    assert agent.run("refund me") == "ok"
    assert refunds == [20]


def test_a_rejected_answer_is_asked_again_and_never_kept() -> None:
    llm = ScriptedProvider("write to bob@example.com", "I cannot share contact details")
    agent = Agent(llm, guards=[output_guard(PiiGuard(), name="pii", action="reject")])
    output = agent.run_output("who handles refunds?")
    assert output.content == "I cannot share contact details"
    assert output.turns_used == 2
    assert all("bob@example.com" not in (m.content or "") for m in output.messages)
    repair = llm.requests[1].messages[-1]
    assert repair.role == "user"
    assert "refused by the output guard 'pii'" in repair.content


def test_rejected_answers_count_against_max_turns() -> None:
    llm = ScriptedProvider("x" * 50, "y" * 50)
    agent = Agent(llm, max_turns=2, guards=[
        output_guard(MaxLengthGuard(max_chars=10), action="reject")])
    with pytest.raises(MaxTurnsExceededError):
        agent.run_output("hi")


def test_a_tripped_output_guard_stops_the_run_without_the_answer() -> None:
    agent = Agent(ScriptedProvider("my password=hunter2"), guards=[output_guard(PiiGuard())])
    with pytest.raises(GuardrailTrippedError) as raised:
        agent.run_output("hi")
    assert raised.value.verdict.findings == {"credential": 1}
    assert all("hunter2" not in (m.content or "") for m in raised.value.checkpoint.conversation)
    assert raised.value.checkpoint.turn_count == 0


def test_a_parallel_input_guard_cancels_the_model_call_it_trips() -> None:
    called = asyncio.Event()
    cancelled: list[bool] = []

    async def never(request: LlmRequest) -> str:
        called.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "unreachable"

    async def no_ssn(check: GuardCheck) -> GuardVerdict:
        await called.wait()  # the model call is under way when the guard decides
        return GuardVerdict.trip("an SSN", ssn=1) if "ssn" in check.text else \
            GuardVerdict.passed()

    agent = Agent(FunctionProvider(never), guards=[input_guard(no_ssn, parallel=True)])
    with pytest.raises(GuardrailTrippedError) as raised:
        agent.run_output("my ssn is 078-05-1120")
    assert cancelled == [True]
    assert raised.value.kind == "input"


def test_a_parallel_input_guard_that_trips_after_the_answer_drops_it_and_runs_no_tool() -> None:
    agent = Agent(ScriptedProvider(tool_call_response("refund", '{"amount": 5}')), [refund],
                  guards=[input_guard(lambda check: "refund" in check.text, name="slow",
                                      parallel=True)])
    with pytest.raises(GuardrailTrippedError):
        agent.run_output("refund me")
    assert refunds == []


def test_input_guards_see_only_the_new_input() -> None:
    texts: list[str] = []

    def record(check: GuardCheck) -> bool:
        texts.append(check.text)
        return False

    llm = ScriptedProvider(tool_call_response("refund", '{"amount": 5}'), "done")
    Agent(llm, [refund], system_prompt="Be kind.", guards=[input_guard(record)]).run("hello")
    assert texts == ["hello"]  # once per run, not per turn; the prompt is not input


def test_a_tripped_input_guard_leaves_the_input_out_of_the_checkpoint() -> None:
    llm = ScriptedProvider("hello")
    agent = Agent(llm, system_prompt="Be kind.", guards=[input_guard(PiiGuard(), name="pii")])
    with pytest.raises(GuardrailTrippedError) as raised:
        agent.run_output("my card is 4111 1111 1111 1111")
    assert [m.role for m in raised.value.checkpoint.conversation] == ["system"]
    assert llm.requests == []  # neither sent nor kept


def test_an_input_a_parallel_guard_stopped_is_left_out_of_the_checkpoint() -> None:
    agent = Agent(ScriptedProvider("hello"), guards=[
        input_guard(PiiGuard(), name="pii", parallel=True)])
    with pytest.raises(GuardrailTrippedError) as raised:
        agent.run_output("my card is 4111 1111 1111 1111")
    assert raised.value.checkpoint.conversation == ()


TYPED = """
agent g3 {
  model = "fake-model"
  max_turns = 1
  guard input pii : PiiGuard { }
  output { contact: "support" | "sales" }
}
"""


def test_a_resumed_run_checks_no_repair_note_of_bloges_own() -> None:
    llm = ScriptedProvider('{"contact": "bob@example.com"}', '{"contact": "sales"}')
    agent = Agent.from_dsl(TYPED, llm=llm)
    with pytest.raises(MaxTurnsExceededError) as raised:
        agent.run_output("who should I contact?")
    assert "bob@example.com" in (raised.value.checkpoint.conversation[-1].content or "")
    agent.operator.retune(max_turns=3)
    assert agent.resume(raised.value.checkpoint).output_data == {"contact": "sales"}


def test_a_resumed_run_checks_no_refusal_note_of_bloges_own() -> None:
    llm = ScriptedProvider("the key is sk-proj-abcdefghijklmnopqrstuvwxyz123456", "no key")
    agent = Agent(llm, max_turns=1, guards=[
        input_guard(PiiGuard(), name="pii"),
        output_guard(PiiGuard(kinds=["credential", "api_key"]), name="secrets",
                     action="reject")])
    with pytest.raises(MaxTurnsExceededError) as raised:
        agent.run_output("what is the key?")
    assert "refused by the output guard 'secrets'" in (
        raised.value.checkpoint.conversation[-1].content or "")
    agent.operator.retune(max_turns=3)
    assert agent.resume(raised.value.checkpoint).content == "no key"


def test_a_resumed_run_checks_only_the_input_it_is_given() -> None:
    texts: list[str] = []

    def record(check: GuardCheck) -> bool:
        texts.append(check.text)
        return False

    agent = Agent(ScriptedProvider("a", "b"), guards=[input_guard(record)])
    output = agent.run_output("first")
    agent.resume(output.checkpoint, input="second")
    assert texts == ["first", "second"]


def test_a_guard_that_raises_trips_unless_it_fails_open() -> None:
    def broken(check: GuardCheck) -> bool:
        raise RuntimeError("the classifier is down")

    closed = Agent(ScriptedProvider("hi"), guards=[output_guard(broken)])
    with pytest.raises(GuardrailTrippedError, match=r"\(RuntimeError: the classifier is "
                       r"down\) and guards fail closed"):
        closed.run("hi")
    verdicts = Verdicts()
    opened = Agent(ScriptedProvider("hi"), guards=[output_guard(broken, on_error="pass")],
                   listeners=[verdicts])
    assert opened.run("hi") == "hi"
    assert [(v.verdict, v.error_type) for v in verdicts.seen] == [("pass", "RuntimeError")]


def test_a_failing_guard_says_what_it_raised_with_credentials_masked() -> None:
    def broken(check: GuardCheck) -> bool:
        raise RuntimeError(f"classifier at https://u:hunter2@example.com/ {'x' * 1000}")

    verdicts = Verdicts()
    agent = Agent(ScriptedProvider("hi"), listeners=[verdicts], guards=[
        output_guard(broken, name="broken")])
    with pytest.raises(GuardrailTrippedError) as raised:
        agent.run("hi")
    reason = raised.value.verdict.reason
    assert reason.startswith("the guard failed (RuntimeError: classifier at https://")
    assert "hunter2" not in reason
    assert len(reason) < 400
    assert verdicts.seen[0].reason == reason


def test_a_guard_that_returns_no_verdict_says_what_it_returned() -> None:
    agent = Agent(ScriptedProvider("hi"), guards=[output_guard(lambda check: "yes")])
    with pytest.raises(GuardrailTrippedError, match=r"it returned 'yes' \(str\)"):
        agent.run("hi")


def test_a_guard_that_fails_open_says_what_it_raised() -> None:
    def broken(check: GuardCheck) -> bool:
        raise RuntimeError("the classifier is down")

    verdicts = Verdicts()
    agent = Agent(ScriptedProvider("hi"), listeners=[verdicts], guards=[
        output_guard(broken, on_error="pass")])
    assert agent.run("hi") == "hi"
    assert "RuntimeError: the classifier is down" in verdicts.seen[0].reason


def test_every_verdict_is_a_callback() -> None:
    verdicts = Verdicts()
    llm = ScriptedProvider(REFUND_900, tool_call_response("refund", '{"amount": 5}',
                                                          call_id="c2"), "done")
    Agent(llm, [refund], listeners=[verdicts], guards=[
        input_guard(MaxLengthGuard(max_chars=100), name="length"),
        tool_call_guard(name="cap", action="reject", when="tool_args.amount > 500"),
        output_guard(PiiGuard(), name="pii"),
    ]).run("refund me")
    assert [(v.guard, v.kind, v.verdict, v.tool_call_id) for v in verdicts.seen] == [
        ("length", "input", "pass", None), ("cap", "tool_call", "reject", "c1"),
        ("cap", "tool_call", "pass", "c2"), ("pii", "output", "pass", None)]


# -- built-ins


@pytest.mark.parametrize(("text", "kind"), [
    ("mail alice@example.org now", "email"),
    ("card 4111 1111 1111 1111", "credit_card"),
    ("IBAN GB82 WEST 1234 5698 7654 32", "iban"),
    ("ssn 078-05-1120", "ssn"),
    ("call +44 20 7946 0958", "phone"),
    ("key sk-proj-abcdefghijklmnopqrstuvwxyz012345", "api_key"),
    ("Authorization: Bearer abc.def.ghi", "credential"),
    ("-----BEGIN RSA PRIVATE KEY-----", "private_key"),
])
def test_the_pii_guard_finds(text: str, kind: str) -> None:
    assert kind in find_pii(text)


def test_the_pii_guard_leaves_ordinary_numbers_alone() -> None:
    assert find_pii("order 1234567890123 shipped on 2026-12-05, total 1,299.00") == {}


def test_the_schema_guard_checks_what_the_tool_schema_does_not() -> None:
    schema = {"type": "object", "properties": {"amount": {"type": "integer", "maximum": 100}}}
    llm = ScriptedProvider(REFUND_900, "done")
    agent = Agent(llm, [refund], guards=[
        tool_call_guard(ToolArgsSchemaGuard(schema=schema), name="policy", action="reject")])
    assert agent.run("refund") == "done"
    assert refunds == []
    assert "900 is greater than the maximum of 100" in llm.requests[1].messages[-1].content


def test_the_denylist_guard_refuses_tools_by_name_and_prefix() -> None:
    deny = ToolDenylistGuard(tools=["admin_*", "refund"])
    agent = Agent(ScriptedProvider(REFUND_900), [refund], guards=[tool_call_guard(deny)])
    with pytest.raises(GuardrailTrippedError, match="tool 'refund' may not be called"):
        agent.run("refund")


# -- the DSL

DSL = """
agent support {
  model = "gpt-4o"
  tool refund : refund { }
  guard input pii : PiiGuard { parallel = true  kinds = ["email", "ssn"] }
  guard output length : MaxLengthGuard { max_chars = 2000  action = "reject" }
  guard tool_call big_refund { when = tool_name == "refund" && tool_args.amount > 500 }
}
"""


def test_dsl_guards_compile_and_run() -> None:
    registry = OperatorRegistry().register("refund", refund)
    definition = AgentDslCompiler(registry).compile(DSL)
    assert [(g.name, g.kind, g.action, g.parallel) for g in definition.guards] == [
        ("pii", "input", "trip", True), ("length", "output", "reject", False),
        ("big_refund", "tool_call", "trip", False)]
    agent = Agent.from_dsl(DSL, llm=ScriptedProvider(REFUND_900), tools=[refund])
    with pytest.raises(GuardrailTrippedError, match="big_refund"):
        agent.run("refund")


@pytest.mark.parametrize(("body", "message", "at"), [
    ("guard outptu pii : PiiGuard { }", "did you mean 'output'?", "guard"),
    ('guard output x : MaxLengthGuard { max_chars = "x" }', "setting 'max_chars': must be",
     "max_chars"),
    ('guard tool_call t { when = tool_nam == "a" }', "did you mean 'tool_name'?", "tool_nam"),
    ("guard output x : PiiGuard { parallel = true }", "only input guards run in parallel",
     "true"),
    ('guard input x : PiiGuard { action = "reject" }', "an input guard cannot reject",
     '"reject"'),
    ("guard output q : NoSuchGuard { }", "neither a built-in guard nor in the registry",
     "NoSuchGuard"),
    ("guard output { colour = 1 }", "unknown setting 'colour'", "colour"),
    ("guard input x : MaxLengthGuard { }", "MaxLengthGuard: needs max_chars", "MaxLengthGuard"),
])
def test_dsl_guard_mistakes_are_located(body: str, message: str, at: str) -> None:
    source = f'agent a {{\n  model = "m"\n  {body}\n}}\n'
    with pytest.raises(CompileError) as raised:
        AgentDslCompiler(OperatorRegistry()).compile(source, filename="a.bloge")
    text = str(raised.value)
    assert message in text
    assert f"a.bloge:3:{body.index(at) + 3}:" in text


def test_guards_reach_python_attributes_never() -> None:
    seen: list[Any] = []

    def record(check: GuardCheck) -> bool:
        seen.append(check.tool_args)
        return False

    llm = ScriptedProvider(tool_call_response("refund", '{"amount": 5, "__class__": 1}'), "ok")
    agent = Agent(llm, [refund], guards=[
        tool_call_guard(when='tool_args.__class__ == 1 && tool_name == "refund"',
                        action="reject"),
        tool_call_guard(record, name="record")])
    assert agent.run("refund") == "ok"
    assert refunds == []  # the expression read the model's key, not a Python attribute
