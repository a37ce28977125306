from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import pytest

from bloge import CompileError, DslSyntaxError, Expression, ExpressionError
from bloge.dsl import STANDARD_LIBRARY, Function
from bloge.llm import LlmMessage


def evaluate(text: str, **scope: Any) -> Any:
    return Expression.compile(text).evaluate(scope)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"plain"', "plain"),
        ("'single'", "single"),
        ("42", 42),
        ("0.25", 0.25),
        ("true", True),
        ("false", False),
        ("null", None),
        ("90s", dt.timedelta(seconds=90)),
        ("[1, 2, 3,]", [1, 2, 3]),
        ('{a: 1 "b c": 2}', {"a": 1, "b c": 2}),
        ('"sum: ${1 + 2}, name: ${user.name}, none: ${missing}"', "sum: 3, name: Ada, none: null"),
        (r'"literal \${user.name}"', "literal ${user.name}"),
    ],
)
def test_literals(text: str, expected: Any) -> None:
    assert evaluate(text, user={"name": "Ada"}) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("doc.a.b", 1),
        ('doc["a"]["b"]', 1),
        ("doc.items[0]", "x"),
        ("doc.items[-1]", "z"),
        ("doc.items[7]", None),
        ("doc.missing.deeper", None),
        ("doc?.a?.b", 1),
        ("nothing?.a", None),
        ("nothing?[1]", None),
        ("doc.items?.name", None),
        ("message.role", "assistant"),
        ("message.content", "hello"),
    ],
)
def test_paths(text: str, expected: Any) -> None:
    scope = {
        "doc": {"a": {"b": 1}, "items": ["x", "y", "z"]},
        "message": LlmMessage.assistant("hello"),
    }
    assert Expression.compile(text).evaluate(scope) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 + 2 * 3 - 4 / 2", 5),
        ("7 % 4", 3),
        ("7 / 2", 3.5),
        ('"a" + 1 + true + null', "a1truenull"),
        ("[1] + [2]", [1, 2]),
        ("-(2 + 3)", -5),
        ("1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 3", True),
        ('"abc" < "abd"', True),
        ("1 == 1.0", True),
        ("1 == true", False),
        ('null == null && "a" != "b"', True),
        ("!0 && !'' && !null && ![]", True),
        ("false || 0 || 'x'", True),
        ("missing ?? 'default'", "default"),
        ("0 ?? 'default'", 0),
        ("2 > 1 ? 'yes' : 'no'", "yes"),
        ('"b" in ["a", "b"]', True),
        ('"k" in {k: 1}', True),
        ('"ell" in "hello"', True),
        ('"x" in null', False),
        ("1s + 500ms > 1s", True),
    ],
)
def test_operators(text: str, expected: Any) -> None:
    assert evaluate(text) == expected


def test_and_or_short_circuit_past_errors() -> None:
    assert evaluate("true || 1 / 0") is True
    assert evaluate("false && 1 / 0") is False
    assert evaluate("'x' ?? 1 / 0") == "x"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("len('abc') + len([1]) + len({a: 1}) + len(null)", 5),
        ("lower('AbC') + upper('d') + trim('  e ')", "abcDe"),
        ("contains('support', 'port') && contains([1, 2], 2) && contains({a: 1}, 'a')", True),
        ("startsWith('gpt-4o', 'gpt') && endsWith('gpt-4o', '4o')", True),
        ("matches('TCK-1007', '^TCK-[0-9]+$')", True),
        ("replace('a-b', '-', '+')", "a+b"),
        ("join(split('a,b', ','), ';')", "a;b"),
        ("keys({a: 1, b: 2})", ["a", "b"]),
        ("values({a: 1})", [1]),
        ("isEmpty('') && isEmpty(null) && !isEmpty([0])", True),
        ("string(12) + string(null)", "12null"),
        ("number('2.5') + int('3')", 5.5),
        ("abs(-3) + min(4, 2) + max([1, 9]) + round(2.567, 1)", 16.6),
        ("coalesce(null, null, 'c')", "c"),
        ("lower(null)", None),
    ],
)
def test_standard_library(text: str, expected: Any) -> None:
    assert evaluate(text) == pytest.approx(expected)


def test_a_function_may_read_the_evaluation_scope() -> None:
    functions = {
        **STANDARD_LIBRARY,
        "given": Function(lambda scope, *names: all(n in scope for n in names), 0, None,
                          reads_scope=True),
    }
    scope = {"a": 1, "b": None, "name": "b"}
    assert [Expression.compile(text, functions=functions).evaluate(scope) for text in (
        "given()", 'given("a")', "given(name)", 'given("a", name)', 'given("a", "c")',
    )] == [True, True, True, True, False]


def test_the_standard_library_has_no_agent_functions() -> None:
    # tool_call() asks about an agent's turn: the agent extension contributes it.
    with pytest.raises(CompileError, match=r"unknown function tool_call\(\)"):
        Expression.compile('tool_call("escalateToHuman")')


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 < 'a'", "cannot compare a number with a string using '<'"),
        ("null > 1", "cannot compare a null with a number"),
        ("1 / 0", "division by zero"),
        ("5 % 0", "division by zero"),
        ("'a' * 2", "cannot apply '*' to a string and a number"),
        ("-'a'", "cannot negate a string"),
        ("len(3)", "len() needs a string, list or map, got number"),
        ("matches('a', '(')", "invalid regular expression"),
        ("(3).x", "cannot read 'x' of a number"),
        ('[1]["k"]', "cannot index a list with a string"),
        ("1 in 2", "cannot look for a number in a number"),
    ],
)
def test_type_errors_name_the_expression_and_position(text: str, message: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        Expression.compile(f"  {text}", filename="rules.bloge").evaluate({})
    assert message in str(caught.value)
    assert caught.value.location.startswith("rules.bloge:1:")
    assert caught.value.source == f"  {text}"


@pytest.mark.parametrize("text", ["amount > 100", "amount <= 100", "100 < amount"])
def test_a_comparison_with_nan_cannot_decide_and_says_so(text: str) -> None:
    with pytest.raises(ExpressionError, match=r"cannot compare NaN \(not a number\)"):
        evaluate(text, amount=float("nan"))


def test_errors_point_at_the_failing_part() -> None:
    with pytest.raises(ExpressionError) as caught:
        Expression.compile("ok == 1 && count > 'x'").evaluate({"ok": 1, "count": 3})
    assert caught.value.location == "<expression>:1:12"


def test_unknown_functions_and_wrong_arity_fail_at_compile_time() -> None:
    with pytest.raises(CompileError, match=r"unknown function lowr\(\); did you mean lower\(\)\?"):
        Expression.compile("lowr(x)")
    with pytest.raises(CompileError, match=r"contains\(\) takes 2 arguments, got 1"):
        Expression.compile("contains(x)")


def test_syntax_errors_are_dsl_syntax_errors() -> None:
    with pytest.raises(DslSyntaxError, match="expected an expression"):
        Expression.compile("a &&")


def test_compile_once_evaluate_many_with_different_scopes() -> None:
    expression = Expression.compile("turn >= 3")
    assert [expression.evaluate({"turn": n}) for n in (1, 3, 5)] == [False, True, True]


def test_expressions_are_equal_by_source_and_know_their_variables() -> None:
    assert Expression.compile("a.b + c") == Expression.compile("a.b + c")
    assert Expression.compile("a.b + len(c)").variables == {"a", "c"}


def test_private_attributes_of_objects_are_not_reachable() -> None:
    @dataclasses.dataclass
    class Record:
        visible: int

    with pytest.raises(ExpressionError, match="cannot read '__class__'"):
        Expression.compile("r.__class__").evaluate({"r": object()})
    assert Expression.compile("r.visible").evaluate({"r": Record(3)}) == 3
    assert Expression.compile("r.hidden").evaluate({"r": Record(3)}) is None
