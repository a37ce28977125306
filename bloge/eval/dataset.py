"""Datasets: cases with an input, tool fixtures, a reference answer and the checks they
expect, read from YAML or JSONL with every problem located (``file:line: key: problem``).

```yaml
agent: customerSupport            # the agent the cases run (bloge eval run --agent overrides)
tools: replay                     # replay | real (default: replay where a case has fixtures)
judge: {model: gpt-4o-mini}       # the judge of `judge:` checks (default: the agent's model)
thresholds: {pass-rate: 1.0, score: 0.8}
cases:
  - name: password-reset
    input: How do I reset my password?          # or a list of messages
    # thread: 1dd24250…                         # start after a stored thread's messages
    fixtures:                                   # tool results replayed instead of the tools
      - {tool: searchKnowledgeBase, arguments: {query: reset password}, result: "KB-…"}
    reference: KB-RESET-001 — Reset the password from Settings > Security…
    expect:
      - contains: KB-RESET-001
      - tools: [searchKnowledgeBase]
      - not-called: [escalateToHuman]
      - max-turns: 2
      - judge: The answer tells the user where to reset the password.
```
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from bloge.core.errors import BlogeUsageError
from bloge.core.suggest import did_you_mean_hint
from bloge.eval import checks
from bloge.eval.expect import OPTIONS, READERS
from bloge.eval.matchers import MatcherError
from bloge.eval.source import DatasetError, Key, Located, read_file
from bloge.llm import LlmMessage

ToolMode = Literal["real", "replay"]
TOOL_MODES = ("real", "replay")


@dataclass(frozen=True, slots=True)
class Fixture:
    """A tool's recorded result: replayed for a call of ``tool`` (with ``arguments``, when
    they match; else for its calls in order) instead of running the tool."""

    tool: str
    arguments: Any
    result: Any
    success: bool = True

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {"tool": self.tool, "arguments": self.arguments,
                                 "result": self.result}
        if not self.success:
            found["success"] = False
        return found


@dataclass(frozen=True, slots=True)
class Case:
    """One input the agent answers, and what its run must come to."""

    name: str
    messages: tuple[LlmMessage, ...]
    checks: tuple[checks.Check, ...] = ()
    fixtures: tuple[Fixture, ...] = ()
    reference: str | None = None
    tools: ToolMode | None = None
    """``None``: replay when the case has fixtures, else the real tools."""
    thread: str | None = None
    """A thread of the run store whose messages come before ``messages`` (copied: the
    case runs on a thread of its own)."""
    line: int | None = None

    @property
    def input_text(self) -> str:
        """The last user message, as the results show the case."""
        users = [m.content for m in self.messages if m.role == "user"]
        return users[-1] if users else ""


@dataclass(frozen=True, slots=True)
class Thresholds:
    """What a dataset's results must reach: the share of passed cases, the mean score."""

    pass_rate: float | None = None
    score: float | None = None


@dataclass(frozen=True, slots=True)
class Dataset:
    name: str
    cases: tuple[Case, ...]
    agent: str | None = None
    tools: ToolMode | None = None
    judge_model: str | None = None
    thresholds: Thresholds = field(default_factory=Thresholds)
    source: str = "<dataset>"
    lines: Mapping[Key, int] = field(default_factory=dict, repr=False, compare=False)
    """The line of each key path in the file, for :meth:`error`."""

    def error(self, problem: str, key: Key) -> DatasetError:
        """A problem at ``key`` (``("cases", 2, "thread")``), found after the file was read."""
        return Located(None, self.source, self.lines).error(problem, key)

    def check_tools(self, agent: str, tools: Collection[str]) -> None:
        """Refuse a tool name of a fixture or a check that is none of ``tools`` (those
        ``agent``'s runs may call): the case would pass or fail for the wrong reason."""
        for index, case in enumerate(self.cases):
            for key, name in _tools_named(case):
                if name not in tools:
                    hint = did_you_mean_hint(name, tools)
                    raise self.error(f"unknown tool {name!r}{hint} (the tools of agent "
                                     f"{agent!r}: {', '.join(sorted(tools)) or 'none'})",
                                     ("cases", index, *key))


def _tools_named(case: Case) -> Iterator[tuple[Key, str]]:
    """The tool names of a case's fixtures and checks, with their keys in the case."""
    for index, fixture in enumerate(case.fixtures):
        yield ("fixtures", index, "tool"), fixture.tool
    for index, check in enumerate(case.checks):
        if isinstance(check, checks.ToolsCalled):
            yield from ((("expect", index, "tools", n), call.tool)
                        for n, call in enumerate(check.calls))
        elif isinstance(check, checks.NeverCalled):
            yield from ((("expect", index, "not-called", n), tool)
                        for n, tool in enumerate(check.tools))


def load_dataset(path: str | Path) -> Dataset:
    """The dataset in the YAML or JSONL (``.jsonl``) file at ``path``; a
    :class:`~bloge.eval.source.DatasetError` names the file, line and key of a problem."""
    located = read_file(path)
    return dataset_of(located, name=Path(path).stem)


def dataset_of(located: Located, *, name: str) -> Dataset:
    data = located.data
    if not isinstance(data, Mapping):
        raise located.error("a dataset is a mapping with a 'cases' list", ())
    _known_keys(located, data, ("name", "agent", "tools", "judge", "thresholds", "cases"), ())
    cases = data.get("cases")
    if not isinstance(cases, list) or not cases:
        raise located.error("a dataset needs a non-empty 'cases' list", ("cases",))
    read = [_case(located, item, ("cases", index)) for index, item in enumerate(cases)]
    seen: dict[str, int] = {}
    for index, case in enumerate(read):
        if case.name in seen:
            raise located.error(f"case name {case.name!r} is taken by cases[{seen[case.name]}]",
                                ("cases", index, "name"))
        seen[case.name] = index
    judge = _mapping(located, data.get("judge", {}), ("judge",))
    _known_keys(located, judge, ("model",), ("judge",))
    return Dataset(
        name=str(data.get("name", name)), cases=tuple(read),
        agent=_text_or_none(located, data.get("agent"), ("agent",)),
        tools=_mode(located, data.get("tools"), ("tools",)),
        judge_model=_text_or_none(located, judge.get("model"), ("judge", "model")),
        thresholds=_thresholds(located, data.get("thresholds", {})), source=located.source,
        lines=located.lines)


def _case(located: Located, item: Any, key: Key) -> Case:
    case = _mapping(located, item, key)
    _known_keys(located, case, ("name", "input", "thread", "expect", "fixtures", "reference",
                                "tools"), key)
    if "input" not in case:
        raise located.error("a case needs an 'input': text, or a list of messages", key)
    expect = case.get("expect", [])
    if not isinstance(expect, list):
        raise located.error("'expect' is a list of checks", (*key, "expect"))
    reference = case.get("reference")
    return Case(
        name=str(case.get("name") or f"case-{key[-1]}"),
        messages=_messages(located, case["input"], (*key, "input")),
        checks=tuple(_check(located, spec, (*key, "expect", index))
                     for index, spec in enumerate(expect)),
        fixtures=_fixtures(located, case.get("fixtures", []), (*key, "fixtures")),
        reference=None if reference is None else str(reference),
        tools=_mode(located, case.get("tools"), (*key, "tools")),
        thread=_text_or_none(located, case.get("thread"), (*key, "thread")),
        line=located.line(key))


def _messages(located: Located, value: Any, key: Key) -> tuple[LlmMessage, ...]:
    if isinstance(value, str):
        if not value.strip():
            raise located.error("the input is blank", key)
        return (LlmMessage.user(value),)
    if not isinstance(value, list) or not value:
        raise located.error("an input is text, or a non-empty list of messages "
                            "({role: user, content: …})", key)
    messages = []
    for index, item in enumerate(value):
        if isinstance(item, str):
            messages.append(LlmMessage.user(item))
            continue
        try:
            messages.append(LlmMessage.from_dict(_mapping(located, item, (*key, index))))
        except (KeyError, TypeError, ValueError) as exc:
            raise located.error(f"not a message: {exc}", (*key, index)) from None
    return tuple(messages)


def _fixtures(located: Located, value: Any, key: Key) -> tuple[Fixture, ...]:
    if not isinstance(value, list):
        raise located.error("'fixtures' is a list of {tool, arguments, result}", key)
    found = []
    for index, item in enumerate(value):
        at = (*key, index)
        fixture = _mapping(located, item, at)
        _known_keys(located, fixture, ("tool", "arguments", "result", "success"), at)
        tool = fixture.get("tool")
        if not isinstance(tool, str) or not tool:
            raise located.error("a fixture names its 'tool'", at)
        if "result" not in fixture:
            raise located.error("a fixture needs the tool's 'result'", at)
        found.append(Fixture(tool, fixture.get("arguments"), fixture["result"],
                             bool(fixture.get("success", True))))
    return tuple(found)


def _check(located: Located, spec: Any, key: Key) -> checks.Check:
    if not isinstance(spec, Mapping) or not spec:
        raise located.error("a check is a mapping such as {contains: text}", key)
    kind = next(iter(spec))
    reader = READERS.get(str(kind))
    if reader is None:
        hint = did_you_mean_hint(str(kind), READERS)
        raise located.error(f"unknown check {kind!r}{hint} (checks: "
                            f"{', '.join(READERS)})", (*key, str(kind)))
    allowed = OPTIONS.get(str(kind), ())
    _known_keys(located, spec, (str(kind), *allowed), key)
    try:
        return reader(spec[kind], spec)
    except (MatcherError, BlogeUsageError) as exc:
        raise located.error(str(exc), (*key, str(kind))) from None


def _thresholds(located: Located, value: Any) -> Thresholds:
    data = _mapping(located, value, ("thresholds",))
    _known_keys(located, data, ("pass-rate", "score"), ("thresholds",))
    found: dict[str, float] = {}
    for name in ("pass-rate", "score"):
        if name in data:
            number = data[name]
            if isinstance(number, bool) or not isinstance(number, (int, float)) \
                    or not 0 <= number <= 1:
                raise located.error(f"{name} is a number between 0 and 1, got {number!r}",
                                    ("thresholds", name))
            found[name] = float(number)
    return Thresholds(found.get("pass-rate"), found.get("score"))


def _mode(located: Located, value: Any, key: Key) -> ToolMode | None:
    if value is None:
        return None
    if value not in TOOL_MODES:
        raise located.error(f"tools is 'real' or 'replay', not {value!r}", key)
    return cast(ToolMode, value)


def _mapping(located: Located, value: Any, key: Key) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise located.error(f"expected a mapping, got {type(value).__name__}", key)
    return value


def _text_or_none(located: Located, value: Any, key: Key) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise located.error(f"expected text, got {value!r}", key)
    return value


def _known_keys(located: Located, data: Mapping[str, Any], known: Sequence[str],
                key: Key) -> None:
    for name in data:
        if name not in known:
            hint = did_you_mean_hint(str(name), known)
            raise located.error(f"unknown key {name!r}{hint} (keys: {', '.join(known)})",
                                (*key, str(name)))
