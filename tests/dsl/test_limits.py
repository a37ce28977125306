"""Texts past the DSL's limits are located DSL errors, never a RecursionError or lark's own
exceptions: nesting deeper than MAX_NESTING, integer literals too long to read, durations
past datetime.timedelta's range."""

from __future__ import annotations

import tracemalloc

import pytest

from bloge import AgentDslCompiler, DslSyntaxError, Expression
from bloge.dsl.limits import MAX_INTEGER_DIGITS, MAX_NESTING
from bloge.dsl.parser import parse_document

DEEP = 600


def syntax_error(text: str) -> DslSyntaxError:
    with pytest.raises(DslSyntaxError) as caught:
        Expression.compile(text, filename="deep.bloge")
    return caught.value


@pytest.mark.parametrize("text", [
    "!" * DEEP + "x",
    "-" * DEEP + "x",
    "[" * DEEP + "]" * DEEP,
    "{a: " * DEEP + "1" + "}" * DEEP,
    "len(" * DEEP + "x" + ")" * DEEP,
    "x" + ".a" * DEEP,
    "x" + "?.a" * DEEP,
    "x" + "[0]" * DEEP,
    " || ".join(["x"] * DEEP),
    " && ".join(["x"] * DEEP),
    " + ".join(["1"] * DEEP),
    " ?? ".join(["x"] * DEEP),
    "x ? " * DEEP + "1" + " : 2" * DEEP,
    '"${' + "!" * DEEP + 'x}"',
])
def test_deep_nesting_of_any_kind_is_a_located_syntax_error(text: str) -> None:
    error = syntax_error(text)
    assert error.reason == f"nested deeper than {MAX_NESTING} levels"
    assert error.filename == "deep.bloge"
    assert error.line == 1


def test_the_nesting_error_points_where_the_limit_is_crossed() -> None:
    error = syntax_error("!" * DEEP + "x")
    assert (error.line, error.column) == (1, MAX_NESTING + 1)


def test_deeply_nested_blocks_are_a_located_syntax_error() -> None:
    text = "graph g {\n" + "a {\n" * DEEP + "}\n" * DEEP + "}"
    with pytest.raises(DslSyntaxError, match="nested deeper than") as caught:
        parse_document(text, filename="blocks.bloge")
    assert caught.value.filename == "blocks.bloge"
    assert caught.value.line > 1


def test_nesting_within_the_limit_compiles_and_evaluates() -> None:
    depth = MAX_NESTING - 2
    assert Expression.compile("!" * depth + "x").evaluate({"x": True}) is (depth % 2 == 0)
    assert Expression.compile("[" * depth + "]" * depth).evaluate() is not None


def test_parentheses_add_no_nesting() -> None:
    assert Expression.compile("(" * 2000 + "1" + ")" * 2000).evaluate() == 1


def test_an_integer_literal_too_long_to_read_is_a_located_syntax_error() -> None:
    error = syntax_error("1 + " + "9" * (MAX_INTEGER_DIGITS + 1))
    assert error.reason == (f"number literal has {MAX_INTEGER_DIGITS + 1} digits; at most "
                            f"{MAX_INTEGER_DIGITS} are allowed")
    assert (error.line, error.column) == (1, 5)


def test_the_longest_integer_literal_is_read() -> None:
    assert Expression.compile("9" * MAX_INTEGER_DIGITS).evaluate() == int("9" * MAX_INTEGER_DIGITS)


@pytest.mark.parametrize("text", ["99999999999999d", "9" * 30 + "ms", "9" * 5000 + "s"])
def test_a_duration_too_long_is_a_located_syntax_error(text: str) -> None:
    error = syntax_error(f"x ?? {text}")
    assert error.reason.startswith(f"duration {text[:20]}")
    assert "is too long; the longest is 999999999 days" in error.reason
    assert (error.line, error.column) == (1, 6)


def test_a_bad_literal_inside_an_interpolation_is_located_in_the_string() -> None:
    error = syntax_error('"a ${99999999999999d}"')
    assert "duration 99999999999999d is too long" in error.reason
    assert (error.line, error.column) == (1, 6)


def test_an_agent_file_with_a_deep_exit_condition_reports_its_line() -> None:
    source = 'agent a {\n  model = "m"\n  exit_condition = ' + "!" * DEEP + "true\n}"
    with pytest.raises(DslSyntaxError, match="nested deeper than") as caught:
        AgentDslCompiler().compile(source, filename="agent.bloge")
    assert str(caught.value).startswith("agent.bloge:3:")


@pytest.mark.parametrize("literal", [
    '"' + "x" * 1_000_000 + '"',
    "'" + "x" * 1_000_000 + "'",
    '"""' + "line\n" * 200_000 + '"""',
])
def test_a_long_string_literal_is_read_in_memory_near_its_size(literal: str) -> None:
    parse_document('agent a { model = "m" }')  # the parser is built outside the measure
    text = f'agent a {{\n  model = "m"\n  system_prompt = {literal}\n}}\n'
    tracemalloc.start()
    try:
        definition = AgentDslCompiler().compile(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert definition.system_prompt is not None
    assert len(definition.system_prompt) >= 1_000_000
    # Before, the lexer's regex kept a backtracking frame per character: ~240 bytes each.
    assert peak < 30 * len(text)


def test_a_long_block_comment_is_skipped_in_memory_near_its_size() -> None:
    parse_document('agent a { model = "m" }')
    text = "/* " + "c\n" * 500_000 + '*/\nagent a {\n  model = "m"\n}\n'
    tracemalloc.start()
    try:
        AgentDslCompiler().compile(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 30 * len(text)
