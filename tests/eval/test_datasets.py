"""Dataset files: what they declare, and every mistake named with its file, line and key."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bloge.eval import DatasetError, load_dataset
from bloge.eval.checks import AtMost, ExpectedCall, NeverCalled, OutputFields, ToolsCalled

DATASET = """\
agent: customerSupport
tools: replay
judge: {model: gpt-4o-mini}
thresholds: {pass-rate: 0.9, score: 0.8}
cases:
  - name: reset
    input: How do I reset my password?
    fixtures:
      - {tool: searchKnowledgeBase, arguments: {query: reset}, result: {articleId: KB-1}}
    reference: KB-1
    expect:
      - tools: [searchKnowledgeBase, {name: createTicket, args: {priority: high}}]
        order: in-order
      - not-called: escalateToHuman
      - max-turns: 3
"""


def write(tmp_path: Path, text: str, name: str = "cases.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_yaml_dataset_gives_its_cases_fixtures_checks_and_thresholds(tmp_path: Path) -> None:
    dataset = load_dataset(write(tmp_path, DATASET))
    assert (dataset.name, dataset.agent, dataset.tools, dataset.judge_model) == (
        "cases", "customerSupport", "replay", "gpt-4o-mini")
    assert (dataset.thresholds.pass_rate, dataset.thresholds.score) == (0.9, 0.8)
    (case,) = dataset.cases
    assert case.input_text == "How do I reset my password?"
    assert case.fixtures[0].result == {"articleId": "KB-1"}
    assert case.reference == "KB-1"
    tools, never, turns = case.checks
    assert isinstance(tools, ToolsCalled)
    assert tools.order == "in-order"
    assert tools.calls[0] == ExpectedCall("searchKnowledgeBase")
    assert never == NeverCalled(("escalateToHuman",))
    assert turns == AtMost("turns", 3)
    assert case.line == 6


@pytest.mark.parametrize(("text", "where"), [
    ("cases:\n  - input: hi\n    expect:\n      - contain: x\n",
     "cases.yaml:4: cases[0].expect[0].contain: unknown check 'contain'; did you mean 'contains'?"),
    ("cases:\n  - inptu: hi\n",
     "cases.yaml:2: cases[0].inptu: unknown key 'inptu'; did you mean 'input'?"),
    ("cases:\n  - input: hi\n    expect:\n      - max-turns: many\n",
     "cases.yaml:4: cases[0].expect[0].max-turns: max-turns takes a number >= 0"),
    ("cases:\n  - input: hi\n    fixtures:\n      - {tool: kb}\n",
     "cases.yaml:4: cases[0].fixtures[0]: a fixture needs the tool's 'result'"),
    ("cases: []\n", "cases.yaml:1: cases: a dataset needs a non-empty 'cases' list"),
    ("cases:\n  - input: [\n", "cases.yaml:3: not valid YAML"),
    ("cases:\n  - {name: a, input: x}\n  - {name: a, input: y}\n",
     "cases.yaml:3: cases[1].name: case name 'a' is taken by cases[0]"),
    ("thresholds: {pass-rate: 2}\ncases:\n  - input: x\n",
     "cases.yaml:1: thresholds.pass-rate: pass-rate is a number between 0 and 1"),
    ("cases:\n  - input: hi\n    input: yo\n",
     "cases.yaml:3: cases[0].input: the key appears twice in the same mapping (first at line 2)"),
    ("cases:\n  - input: hi\n    expect:\n      - {contains: a, contains: b}\n",
     "cases.yaml:4: cases[0].expect[0].contains: the key appears twice in the same mapping"),
])
def test_a_mistake_is_named_with_its_line_and_key(tmp_path: Path, text: str, where: str) -> None:
    with pytest.raises(DatasetError) as raised:
        load_dataset(write(tmp_path, text))
    assert str(raised.value).startswith(f"{tmp_path}/{where}")


def test_a_jsonl_dataset_names_the_line_of_a_bad_case(tmp_path: Path) -> None:
    path = write(tmp_path, '{"input": "hi"}\n\n{"input": "yo", "expect": [{"regex": "("}]}\n',
                 "cases.jsonl")
    with pytest.raises(DatasetError, match=r"cases\.jsonl:3: cases\[1\]\.expect\[0\]\.regex: "
                                           r"invalid regex '\('"):
        load_dataset(path)


def test_a_jsonl_line_that_is_not_json_is_named(tmp_path: Path) -> None:
    path = write(tmp_path, '{"input": "hi"}\nnot json\n', "cases.jsonl")
    with pytest.raises(DatasetError, match=r"cases\.jsonl:2: not valid JSON"):
        load_dataset(path)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"nothere\.yaml: cannot read the dataset"):
        load_dataset(tmp_path / "nothere.yaml")


def test_a_json_schema_check_without_jsonschema_names_the_extra(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    path = write(tmp_path, "cases:\n  - input: hi\n    expect:\n      - json-schema: {}\n")
    with pytest.raises(DatasetError, match=r"cases\.yaml:4: cases\[0\]\.expect\[0\]\.json-schema:"
                                           r" json-schema checks need the jsonschema package: "
                                           r"pip install 'bloge\[eval\]'"):
        load_dataset(path)


@pytest.mark.parametrize(("matcher", "meant"), [
    ("{contians: Paris}", "contains"), ("{regexp: '^P'}", "regex"), ("{oneOf: [a, b]}", "one-of")])
def test_a_misspelt_matcher_is_refused_with_the_one_meant(tmp_path: Path, matcher: str,
                                                           meant: str) -> None:
    text = f"cases:\n  - input: hi\n    expect:\n      - tools: [{{name: t, args: {{city: {matcher}}}}}]\n"
    with pytest.raises(DatasetError) as raised:
        load_dataset(write(tmp_path, text))
    name = matcher[1:matcher.index(":")]
    assert str(raised.value).endswith(
        f"cases.yaml:4: cases[0].expect[0].tools: {{{name}: …}} is no matcher; did you mean "
        f"{meant!r}? (to match a field named {name!r}, write {{equals: {{{name}: …}}}})")


def test_a_field_named_like_no_matcher_is_matched_as_a_field(tmp_path: Path) -> None:
    text = ("cases:\n  - input: hi\n    expect:\n"
            "      - output: {message: {content: hi}, place: {equals: {regexp: x}}}\n")
    (case,) = load_dataset(write(tmp_path, text)).cases
    (check,) = case.checks
    assert isinstance(check, OutputFields)
    assert check.fields.matches({"message": {"content": "hi"}, "place": {"regexp": "x"}})
