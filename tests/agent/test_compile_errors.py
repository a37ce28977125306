"""Every compile-time mistake is reported at file:line:column with the line and a caret."""

from __future__ import annotations

from pathlib import Path

import pytest

from bloge import (
    AgentDslCompiler,
    BlogeUsageError,
    CompileError,
    DslError,
    DslSyntaxError,
    OperatorRegistry,
)


def first_error(source: str, registry: OperatorRegistry | None = None) -> DslError:
    with pytest.raises(DslError) as caught:
        AgentDslCompiler(registry).compile(source, filename="agents.bloge")
    return caught.value


def agent(body: str) -> str:
    return f'agent support {{\n  model = "gpt-4o"\n{body}\n}}'


@pytest.mark.parametrize(
    ("source", "position", "message"),
    [
        ("agent support {\n  max_turns = 3\n}", "1:7", "agent 'support' has no model"),
        (agent("  max_turn = 3"), "3:3",
         "unknown keyword 'max_turn' in agent 'support'; did you mean 'max_turns'?"),
        (agent('  model = "again"'), "3:3", "duplicate keyword 'model' (first at line 2, column 3)"),
        (agent("  tool a : Op {}\n  tool a : Other {}"), "4:8", "duplicate tool name 'a'"),
        (agent("  tool final_result : Op {}\n  output { status: string }"), "3:8",
         "tool name 'final_result' is reserved for the final-answer tool"),
        (agent('  max_turns = "6"'), "3:15", "max_turns must be a whole number, got the string '6'"),
        (agent("  streaming = 1"), "3:15", "streaming must be true or false, got the number 1"),
        (agent("  max_turns = 0"), "3:15", "max_turns must be at least 1, got 0"),
        (agent("  max_tool_concurrency = 0"), "3:26", "max_tool_concurrency must be at least 1, got 0"),
        (agent("  temperature = 2.5"), "3:17", "temperature must be between 0 and 2, got 2.5"),
        (agent("  temperature = -0.1"), "3:17", "temperature must be between 0 and 2, got -0.1"),
        (agent("  memory = sliding_window(0)"), "3:27", "sliding_window(n) needs n >= 1, got 0"),
        (agent("  memory = token_budget(0)"), "3:25", "token_budget(n) needs n >= 1, got 0"),
        (agent("  memory = summary(0)"), "3:20", "summary(n) needs n >= 1, got 0"),
        (agent("  memory = sliding(3)"), "3:12",
         "unknown memory strategy sliding(); did you mean sliding_window()?"),
        (agent("  memory = full"), "3:12", "memory strategies are calls: write full(…)"),
        (agent("  streaming_buffer_capacity = 0"), "3:31",
         "streaming_buffer_capacity must be at least 1, got 0"),
        (agent('  exit_condition = tool_args.reason == "x"'), "3:20",
         "tool_args is only in scope inside a tool's input { … } block"),
        (agent("  description = tool_args.x"), "3:3", "unknown keyword 'description'"),
        (agent('  exit_condition = finishReason == "stop"'), "3:20",
         "unknown variable 'finishReason' in exit_condition; did you mean 'finish_reason'?"),
        (agent('  tool t : Op { descripton = "d" }'), "3:17",
         "unknown keyword 'descripton' in tool 't'; did you mean 'description'?"),
        (agent("  tool t : Op { input { a = tool_args.a\n a = tool_args.b } }"), "4:2",
         "duplicate keyword 'a'"),
        (agent("  tool t { }"), "3:3", "a tool needs a name and an operator"),
        (agent("  tool t : Op { input = 3 }"), "3:17",
         "'input' in tool 't' is a block: write input { <name> = <expression> … }"),
        (agent("  tool t : Op { description { } }"), "3:17",
         "'description' in tool 't' is a keyword: write description = <value>"),
        (agent("  tool = 3"), "3:3",
         "'tool' in agent 'support' is a block: write tool <name> : <Operator> { … }"),
        (agent("  model_name = gpt"), "3:3", "unknown keyword 'model_name'"),
        ("agent support {\n  model = gpt4o\n}", "2:11", 'model must be a constant; did you mean the string "gpt4o"?'),
        # Python's habits.
        (agent("  max_turns: 5"), "3:3", "max_turns takes its value after '=': write max_turns = 5"),
        (agent("  streaming = False"), "3:15",
         "streaming must be a constant; False is not one (the DSL writes false, in lower case)"),
        (agent("  finish_when = 1"), "3:3",
         "unknown keyword 'finish_when' in agent 'support' (known: model, system_prompt, "),
        # The DSL reads it as claude - 3 - 5 - sonnet.
        ("agent support {\n  model = claude-3-5-sonnet\n}", "2:11",
         'model must be a constant; did you mean the string "claude-3-5-sonnet"?'),
        (agent("  max_turns = 1 / 0"), "3:15", "division by zero"),
        ('stream agent s {\n  model = "m"\n  streaming = false\n}', "3:3",
         "'stream agent' declares a streaming agent"),
        ('agnet support {\n  model = "m"\n}', "1:1", "unknown block 'agnet'; did you mean 'agent'?"),
        ("graph g { }", "1:1", "no agent block found"),
        (agent("") + "\n" + agent(""), "5:7",
         "agent 'support' is declared twice in this file (first at line 1, column 7)"),
        (agent("") + '\nstream agent support {\n  model = "m"\n}', "5:14",
         "agent 'support' is declared twice in this file (first at line 1, column 7)"),
        (agent("  tool t : Op { input { city = tool_arg.city } }"), "3:32",
         "unknown variable 'tool_arg' in input binding 'city'; did you mean 'tool_args'?"),
        (agent("  tool t : Op { input { who = cxt.user } }"), "3:31",
         "unknown variable 'cxt' in input binding 'who'; did you mean 'ctx'?"),
        (agent('  tool t : Op { input { q = "${lower(query)}" } }'), "3:38",
         ("unknown variable 'query' in input binding 'q'; an input binding reads the model's "
          "arguments as tool_args.<name> and the context as ctx.<name>: did you mean "
          "tool_args.query or ctx.query?")),
        (agent("  tool t : Op { input { r = finish_reason } }"), "3:29",
         "unknown variable 'finish_reason' in input binding 'r'"),
        (agent("  tool_timeout = " + "9" * 400), "3:18", "tool_timeout must be at most 8.64e+13 s"),
        (agent("  tool t : Op { timeout = -" + "9" * 400 + " }"), "3:27",
         "timeout must be positive, got -(a number of over 19 digits) s"),
    ],
)
def test_compile_errors_are_located(source: str, position: str, message: str) -> None:
    error = first_error(source)
    assert isinstance(error, CompileError)
    assert str(error).startswith(f"agents.bloge:{position}: ")
    assert message in str(error).splitlines()[0]


@pytest.mark.parametrize(("source", "key", "word"), [
    ('agent support {\n  model =\n  tool t : Op { description = "d" }\n}', "model", "tool"),
    (agent("  system_prompt =\n  tool t : Op { }"), "system_prompt", "tool"),
    (agent("  memory =\n  tool t : Op { }"), "memory", "tool"),
    (agent("  exit_condition =\n  tool t : Op { }"), "exit_condition", "tool"),
])
def test_a_key_with_no_value_says_so_at_the_key(source: str, key: str, word: str) -> None:
    error = str(first_error(source))
    line = next(number for number, text in enumerate(source.splitlines(), 1)
                if text.strip() == f"{key} =")
    assert error.startswith(f"agents.bloge:{line}:")
    assert (f"{key} has no value: write {key} = <value> (the next line's {word!r} begins "
            "another statement)") in error.splitlines()[0]
    assert "did you mean the string" not in error


def test_the_error_shows_the_source_line_and_a_caret_under_the_problem() -> None:
    error = first_error(agent("  max_turn = 3"))
    assert str(error).splitlines()[:3] == [
        "agents.bloge:3:3: unknown keyword 'max_turn' in agent 'support'; did you mean 'max_turns'?",
        "    3 |   max_turn = 3",
        "      |   ^~~~~~~~",
    ]


def test_every_problem_of_an_agent_is_reported_at_once() -> None:
    error = first_error("agent a {\n  max_turns = 0\n  temperature = 9\n}")
    lines = [e.reason for e in error.errors]
    assert lines == [
        "max_turns must be at least 1, got 0",
        "temperature must be between 0 and 2, got 9",
        "agent 'a' has no model; add model = \"<model id>\"",
    ]
    assert str(error).count("agents.bloge:") == 3


def test_an_operator_missing_from_the_registry_is_a_compile_error_with_a_suggestion() -> None:
    registry = OperatorRegistry({"KBSearchOperator": lambda input: input})
    error = first_error(agent("  tool search : KBSearch { input { q = tool_args.q } }"), registry)
    assert str(error).startswith("agents.bloge:3:17: ")
    assert "refers to operator 'KBSearch', which is not in the registry; did you mean 'KBSearchOperator'?" in str(error)


def test_input_bindings_read_tool_args_and_ctx() -> None:
    compiled = AgentDslCompiler().compile(agent(
        '  tool t : Op { input { q = tool_args.q\n locale = ctx.user.locale\n'
        '  tier = ctx["tier"] ?? "basic"\n n = 5 } }'))
    assert set(compiled.tool("t").graph.nodes[0].inputs or {}) == {"q", "locale", "tier", "n"}


def test_every_unknown_variable_of_an_input_block_is_reported() -> None:
    error = first_error(agent("  tool t : Op { input { a = tool_arg.a\n b = x + y } }"))
    assert [e.reason.split(";")[0] for e in error.errors] == [
        "unknown variable 'tool_arg' in input binding 'a'",
        "unknown variable 'x' in input binding 'b'",
        "unknown variable 'y' in input binding 'b'",
    ]


def test_without_a_registry_operators_are_not_checked() -> None:
    compiled = AgentDslCompiler().compile(agent("  tool search : Anything {}"))
    assert compiled.tool("search").operator_ref == "Anything"


def test_syntax_errors_come_through_the_compiler_located() -> None:
    error = first_error('agent support {\n  model "gpt-4o"\n}')
    assert isinstance(error, DslSyntaxError)
    assert str(error).startswith("agents.bloge:2:9: unexpected '\"gpt-4o\"'")


def test_compile_wants_exactly_one_agent() -> None:
    with pytest.raises(CompileError, match=r"expected exactly one agent, found 2 \('a', 'b'\)"):
        AgentDslCompiler().compile('agent a { model = "m" } agent b { model = "m" }')


def test_a_missing_file_is_a_usage_error_naming_the_path(tmp_path: Path) -> None:
    with pytest.raises(BlogeUsageError, match=r"DSL file not found: .*nope\.bloge"):
        AgentDslCompiler().compile_file(tmp_path / "nope.bloge")


def test_a_folder_given_as_a_dsl_file_is_a_usage_error_saying_so(tmp_path: Path) -> None:
    with pytest.raises(BlogeUsageError) as caught:
        AgentDslCompiler().compile_file(tmp_path)
    assert str(caught.value) == f"cannot read DSL file {tmp_path}: Is a directory"


def test_a_file_that_is_not_utf8_is_a_syntax_error_at_the_first_bad_byte(tmp_path: Path) -> None:
    path = tmp_path / "latin1.bloge"
    path.write_bytes(b'agent a {\r\n  model = "m"\r\n  system_prompt = "caf\xe9"\r\n}\r\n')
    with pytest.raises(DslSyntaxError) as caught:
        AgentDslCompiler().compile_file(path)
    assert str(caught.value).startswith(
        f"{path}:3:23: byte 0xe9 is not UTF-8 (invalid continuation byte); save the file as UTF-8")


def test_a_utf8_file_with_a_byte_order_mark_compiles(tmp_path: Path) -> None:
    path = tmp_path / "bom.bloge"
    path.write_bytes(b'\xef\xbb\xbfagent a {\n  model = "m"\n}\n')
    assert AgentDslCompiler().compile_file(path).id == "a"


def test_an_error_on_a_long_line_shows_the_part_around_its_column() -> None:
    prompt = "x" * 100_000
    error = first_error(f'agent a {{\n  model = "m" system_prompt = "{prompt}" max_turns = "six"\n}}')
    head, shown, caret = str(error).splitlines()
    assert head == ("agents.bloge:2:100046: max_turns must be a whole number, "
                    "got the string 'six'")
    assert shown.startswith("    2 | …xxx")
    assert shown.endswith('" max_turns = "six"')
    assert len(shown) < 200
    assert caret.index("^") == shown.index('"six"')
    assert caret.endswith("^~~~~")
