from __future__ import annotations

import datetime as dt
import re
from importlib import resources
from pathlib import Path

import pytest
from lark import Lark

from bloge import DslSyntaxError
from bloge.dsl import parse_document, parse_expression, syntax_errors
from bloge.dsl import syntax as s

GRAMMAR = resources.files("bloge.dsl").joinpath("bloge.lark").read_text(encoding="utf-8")
DECLARED_TERMINALS = set(re.findall(r"^([A-Z][A-Z_]*)(?:\.\d+)?:", GRAMMAR, re.MULTILINE))


def test_both_example_files_parse_byte_for_byte(fixtures: Path) -> None:
    for name in ("agent-customer-support.bloge", "streaming-analysis-agent.bloge"):
        document = parse_document((fixtures / name).read_text(encoding="utf-8"), filename=name)
        (agent,) = document.statements
        assert isinstance(agent, s.Block)
        assert agent.keywords[-1] == "agent"


SURROUNDING = '''
/// A graph with nested blocks; only the agent inside has meaning to the agent extension.
graph orderFlow {
  timeout = 3s; retries = 2, backoff = 100ms   // separators are optional
  window = 5m
  retention = 24h
  ttl = 7d
  labels = ["a", "b",]
  limits = { cpu: 2 memory: "1Gi", "disk-size": 10 }
  template = """raw ${not interpolated}
second line"""
  fetch -> score -> route
  phase intake {
    state waiting : WaitOperator {
      agent helper { model = "m" }
    }
  }
}
'''


def test_the_surrounding_syntax_parses_into_blocks_and_bindings() -> None:
    (graph,) = parse_document(SURROUNDING).statements
    assert isinstance(graph, s.Block)
    assert (graph.keywords, graph.name) == (("graph",), "orderFlow")
    bindings = {b.key: b.value for b in graph.body if isinstance(b, s.Binding)}
    assert bindings["timeout"] == s.Literal(dt.timedelta(seconds=3), bindings["timeout"].span)
    values = {key: node.value for key, node in bindings.items() if isinstance(node, s.Literal)}
    assert values["backoff"] == dt.timedelta(milliseconds=100)
    assert values["window"] == dt.timedelta(minutes=5)
    assert values["retention"] == dt.timedelta(hours=24)
    assert values["ttl"] == dt.timedelta(days=7)
    assert values["template"] == "raw ${not interpolated}\nsecond line"
    labels = bindings["labels"]
    assert isinstance(labels, s.ListExpr)
    assert len(labels.items) == 2
    limits = bindings["limits"]
    assert isinstance(limits, s.MapExpr)
    assert [k for k, _ in limits.entries] == ["cpu", "memory", "disk-size"]
    edges = [st for st in graph.body if isinstance(st, s.Edge)]
    assert edges[0].nodes == ("fetch", "score", "route")


def test_nested_blocks_keep_names_references_and_positions() -> None:
    (graph,) = parse_document(SURROUNDING, filename="flow.bloge").statements
    phase = next(b for b in graph.body if isinstance(b, s.Block))
    state = phase.body[0]
    assert isinstance(state, s.Block)
    assert (state.keywords, state.name, state.ref) == (("state",), "waiting", "WaitOperator")
    agent = state.body[0]
    assert isinstance(agent, s.Block)
    assert (agent.span.line, agent.span.column) == (15, 7)
    assert agent.name_span is not None
    assert agent.name_span.column == 13


def test_every_expression_node_knows_its_line_and_column() -> None:
    (agent,) = parse_document('agent a {\n  exit_condition = x.y == "z"\n}').statements
    assert isinstance(agent, s.Block)
    binding = agent.body[0]
    assert isinstance(binding, s.Binding)
    comparison = binding.value
    assert isinstance(comparison, s.Binary)
    assert (comparison.span.line, comparison.span.column) == (2, 20)
    assert (comparison.right.span.line, comparison.right.span.column) == (2, 27)


def test_interpolation_parts_are_located_inside_their_string() -> None:
    (binding,) = parse_document('greeting = "Hi ${user.name}!"').statements
    assert isinstance(binding, s.Binding)
    value = binding.value
    assert isinstance(value, s.Interpolation)
    text, expr, tail = value.parts
    assert (text, tail) == ("Hi ", "!")
    assert isinstance(expr, s.Member)
    assert (expr.span.line, expr.span.column) == (1, 18)


def test_an_escaped_interpolation_stays_literal_text() -> None:
    (binding,) = parse_document(r'price = "costs \${amount} \"now\""').statements
    assert isinstance(binding, s.Binding)
    assert binding.value == s.Literal('costs ${amount} "now"', binding.value.span)


@pytest.mark.parametrize(
    ("source", "where", "expected"),
    [
        ("agent a {\n  model = \n}", "<string>:3:1:", "expected an expression"),
        ('agent a {\n  model "gpt"\n}', "<string>:2:9:", "expected '->', ':', '=', '{' or a name"),
        ("agent a {\n  model = 1\n", "<string>:2:12:", "unexpected end of the text; expected '}'"),
        ('x = "never closed', "<string>:1:5:", "unterminated string"),
        ("x = [1 2]", "<string>:1:8:", "expected an operator, ',' or ']'"),
        ("x = 1 }", "<string>:1:7:", "unexpected '}'"),
        ('x = "bad \\q escape"', "<string>:1:10:", "unknown escape sequence '\\q'"),
        ('x = "${}"', "<string>:1:6:", "empty ${} interpolation"),
        ('x = "${a +}"', "<string>:1:", "invalid expression in ${a +}"),
        ("a {\n  n = 1e3\n  m = 2\n}", "<string>:2:7:", "'1e3' is not a number or a duration"),
        ("a {\n  t = 1h30m\n}", "<string>:2:7:", "'1h30m' is not a number or a duration"),
        ("x = 0.5x", "<string>:1:5:", "'0.5x' is not a number or a duration"),
        ("agent caf\u00e9 {}", "<string>:1:10:",
         "unexpected character '\u00e9'; a name is ASCII letters, digits and _"),
        ("x = \u65e5\u672c", "<string>:1:5:", "unexpected character '\u65e5'; a name is ASCII"),
        ("x = [1, 12abc]", "<string>:1:9:", "'12abc' is not a number or a duration"),
        # Python's and, or, not: the DSL reads them as names, and fails further on.
        ("agent a {\n  max_turns = 3 and 4\n}", "<string>:2:17:",
         "'and' is not an operator: write && (and, or, not are &&, ||, !)"),
        ("agent a {\n  exit_when = turn > 2 or done\n}", "<string>:2:24:",
         "'or' is not an operator: write ||"),
        ("x = not done", "<string>:1:5:", "'not' is not an operator: write !"),
        # A name after a member is a name: tool_args.not is the argument 'not'.
        ("x = tool_args.not y", "<string>:1:20:", "unexpected end of the text"),
        ('x = "a and b" c', "<string>:1:16:", "unexpected end of the text"),
        # Text without its quotes.
        ("agent a {\n  model = gpt-4o\n}", "<string>:2:11:",
         ("'gpt-4o' is not a name, a number or an expression: write text in quotes "
          '("gpt-4o")')),
        ("x = llama3.1", "<string>:1:5:", "'llama3.1' is not a name, a number or an expression"),
        ("x = 5 # five", "<string>:1:7:", "'#' does not start a comment: write // …"),
        ("agent a {\n  exit_condition = turn = 3\n}", "<string>:2:25:",
         "(to compare, write ==)"),
        # A method call: the expressions have functions.
        ('x = last_message.contains("bye")', "<string>:1:26:",
         ("last_message.contains(…) calls a method; the expressions have functions, which take "
          "the value first: write contains(last_message, …)")),
        ('x = last_message.endswith("bye")', "<string>:1:26:", "write endsWith(last_message, …)"),
        ('x = a.shout("!")', "<string>:1:12:", ("calls a method; the expressions have none, "
                                                "only functions such as len(a), lower(a)")),
    ],
)
def test_syntax_errors_say_where_and_what_was_expected(source: str, where: str, expected: str) -> None:
    with pytest.raises(DslSyntaxError) as caught:
        parse_document(source)
    message = str(caught.value)
    assert message.startswith(where)
    assert expected in message


@pytest.mark.parametrize(("text", "column", "word"), [
    ('tool_name == "refund" and tool_args.amount > 100', 23, "and"),
    ("a or b", 3, "or"),
    ("not a", 1, "not"),
])
def test_an_expression_with_pythons_logical_words_says_how_the_dsl_writes_them(
        text: str, column: int, word: str) -> None:
    with pytest.raises(DslSyntaxError) as caught:
        parse_expression(text, filename="<when>")
    assert str(caught.value).startswith(f"<when>:1:{column}: {word!r} is not an operator")


def test_a_failure_with_nothing_expected_names_what_was_found() -> None:
    with pytest.raises(DslSyntaxError) as caught:
        parse_expression("a b")
    assert str(caught.value).splitlines()[0].endswith("unexpected 'b'")


def test_every_terminal_of_the_grammar_has_the_name_bloge_lark_gives_it() -> None:
    # lark names a terminal it was not given a name for __ANON_<n>, by order of appearance:
    # any edit of the grammar would renumber them under the parser's feet.
    terminals = {t.name for t in Lark(GRAMMAR, start=["document", "expr"], parser="lalr").terminals}
    assert sorted(terminals - DECLARED_TERMINALS) == []


def test_the_words_for_terminals_name_terminals_of_the_grammar() -> None:
    named = (set(syntax_errors._TERMINAL_NAMES) - {"$END"}) | syntax_errors._OPERATORS | (
        syntax_errors._EXPRESSION_STARTS)
    assert sorted(named - DECLARED_TERMINALS) == []


def test_a_syntax_error_shows_the_line_with_a_caret() -> None:
    with pytest.raises(DslSyntaxError) as caught:
        parse_document('agent a {\n  model "gpt"\n}', filename="a.bloge")
    assert str(caught.value).splitlines()[1:] == [
        '    2 |   model "gpt"',
        "      |         ^~~~~",
    ]
    assert (caught.value.filename, caught.value.line, caught.value.column) == ("a.bloge", 2, 9)
