"""Whatever text arrives, the compiler raises only DSL errors and evaluation only
ExpressionError — never a bare Python exception."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bloge import AgentDslCompiler, DslError, Expression, ExpressionError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EXAMPLES = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.bloge"))]
TOKENS = [
    "agent", "stream", "tool", "input", "model", "=", "{", "}", "(", ")", "[", "]", ",", ";",
    ":", ".", "?.", "?[", "??", "?", "&&", "||", "!", "==", "<", "+", "-", "*", "/", "%", "in",
    '"x"', '"${a}"', '"\\${"', '"""raw"""', "3s", "100ms", "0", "1", "-1", "2.5", "true", "null",
    "tool_args", "tool_args.q", "exit_condition", "memory", "sliding_window(0)", "summary(3)",
    "full()", "max_turns", "temperature", "//c\n", "///d\n", "\n", " ", "tool_call(", "len(",
    '"', "'", "\\", "$", "#", "\t", "ü", "x" * 3, "(" * 40, ")" * 40,
]

compiler = AgentDslCompiler()


def compile_only_raises_dsl_errors(source: str) -> None:
    try:
        compiler.compile_all(source, filename="fuzz.bloge")
    except DslError as exc:
        assert str(exc).startswith("fuzz.bloge:")  # noqa: PT017 -- any input may fail; how it fails is the property


@settings(max_examples=300)
@given(st.lists(st.sampled_from(TOKENS), max_size=40).map(" ".join))
def test_random_token_soup_raises_only_dsl_errors(source: str) -> None:
    compile_only_raises_dsl_errors(source)


@settings(max_examples=200)
@given(st.text(max_size=80))
def test_random_text_raises_only_dsl_errors(source: str) -> None:
    compile_only_raises_dsl_errors(source)


@st.composite
def mutated_example(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(EXAMPLES))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        match draw(st.sampled_from(["delete", "insert", "duplicate"])):
            case "delete":
                text = text[:at] + text[at + draw(st.integers(1, 12)):]
            case "insert":
                text = text[:at] + draw(st.sampled_from(TOKENS)) + text[at:]
            case "duplicate":
                text = text[:at] + text[at : at + draw(st.integers(1, 40))] + text[at:]
    return text


@settings(max_examples=300)
@given(mutated_example())
def test_mutated_examples_raise_only_dsl_errors(source: str) -> None:
    compile_only_raises_dsl_errors(source)


LEAVES = st.one_of(
    st.integers(-5, 5).map(str),
    st.sampled_from(["0.5", "true", "false", "null", '"s"', '"${x}"', "1s", "[]", "{}",
                     "[1, 'a']", "{k: 1}", "x", "y", "m", "x.k", "m.k", "m?.k", "l[0]", "l[-9]",
                     "m['k']", "x?[0]"]),
)
FUNCTIONS = ["len", "lower", "upper", "trim", "contains", "startsWith", "endsWith", "matches",
             "replace", "split", "join", "keys", "values", "isEmpty", "string", "number", "int",
             "abs", "min", "max", "round", "coalesce", "tool_call"]
BINARY = ["==", "!=", "<", "<=", ">", ">=", "&&", "||", "+", "-", "*", "/", "%", "??", "in"]


def expressions() -> st.SearchStrategy[str]:
    return st.recursive(
        LEAVES,
        lambda inner: st.one_of(
            st.tuples(inner, st.sampled_from(BINARY), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(st.sampled_from(["!", "-"]), inner).map(lambda t: f"{t[0]}({t[1]})"),
            st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} ? {t[1]} : {t[2]})"),
            st.tuples(st.sampled_from(FUNCTIONS), st.lists(inner, max_size=3)).map(
                lambda t: f"{t[0]}({', '.join(t[1])})"),
            inner.map(lambda e: f"({e}).k"),
            st.tuples(inner, inner).map(lambda t: f"({t[0]})[{t[1]}]"),
        ),
        max_leaves=12,
    )


SCOPES = st.fixed_dictionaries({
    "x": st.one_of(st.none(), st.integers(), st.text(max_size=3), st.booleans(), st.floats()),
    "y": st.one_of(st.none(), st.lists(st.integers(), max_size=3)),
    "m": st.one_of(st.none(), st.dictionaries(st.sampled_from(["k", "j"]), st.integers())),
    "l": st.lists(st.one_of(st.integers(), st.text(max_size=2)), max_size=3),
    "tool_calls": st.lists(st.fixed_dictionaries({"name": st.sampled_from(["s", "t"])}), max_size=2),
})


@settings(max_examples=500)
@given(expressions(), SCOPES)
def test_evaluation_raises_only_expression_errors(text: str, scope: dict[str, Any]) -> None:
    try:
        expression = Expression.compile(text)
    except DslError:
        return
    try:
        expression.evaluate(scope)
    except ExpressionError as exc:
        assert exc.source == text  # noqa: PT017 -- any input may fail; how it fails is the property


# ---------------------------------------------------------------------------- deep nesting

NESTING_FAMILIES: dict[str, Any] = {
    "not": lambda n: "!" * n + "x",
    "minus": lambda n: "-" * n + "x",
    "list": lambda n: "[" * n + "]" * n,
    "map": lambda n: "{a: " * n + "1" + "}" * n,
    "parentheses": lambda n: "(" * n + "x" + ")" * n,
    "or": lambda n: " || ".join(["x"] * (n + 1)),
    "and": lambda n: " && ".join(["x"] * (n + 1)),
    "plus": lambda n: " + ".join(["1"] * (n + 1)),
    "coalesce": lambda n: " ?? ".join(["x"] * (n + 1)),
    "member": lambda n: "x" + ".a" * n,
    "safe member": lambda n: "x" + "?.a" * n,
    "index": lambda n: "x" + "[0]" * n,
    "call": lambda n: "len(" * n + "x" + ")" * n,
    "ternary": lambda n: "x ? " * n + "1" + " : 2" * n,
    "interpolation": lambda n: '"${' + "!" * n + 'x}"',
    "mixed": lambda n: "!-[(len(" * n + "x" + ")])" * n,
}


@settings(max_examples=100)
@given(st.sampled_from(sorted(NESTING_FAMILIES)), st.integers(1, 1500))
def test_deep_nesting_of_every_kind_raises_only_bloge_errors(family: str, depth: int) -> None:
    text = NESTING_FAMILIES[family](depth)
    try:
        expression = Expression.compile(text, filename="deep.bloge")
    except DslError as exc:
        assert str(exc).startswith("deep.bloge:1:")  # noqa: PT017 -- how it fails is the property
        return
    with contextlib.suppress(ExpressionError):
        expression.evaluate({"x": [[1]], "a": 1})


@settings(max_examples=20)
@given(st.integers(1, 1500))
def test_deeply_nested_blocks_raise_only_dsl_errors(depth: int) -> None:
    compile_only_raises_dsl_errors("agent a {\n" + "b {\n" * depth + "}\n" * depth + "}")


@settings(max_examples=60)
@given(st.integers(1, 10_000), st.sampled_from(["", "ms", "s", "m", "h", "d"]))
def test_long_numbers_and_durations_raise_only_dsl_errors(digits: int, unit: str) -> None:
    compile_only_raises_dsl_errors(f'agent a {{ model = "m"\n tool_timeout = {"9" * digits}{unit} }}')


@settings(max_examples=30)
@given(st.integers(1, 5000), st.sampled_from(["list", "map"]))
def test_deep_values_raise_only_expression_errors(depth: int, kind: str) -> None:
    value: Any = 1
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    for text in ('"${x}"', "string(x)", "x == y", "contains(x, y)", "x + y", "len(x)"):
        with contextlib.suppress(ExpressionError):
            Expression.compile(text).evaluate({"x": value, "y": value})
