"""The checks of a case's ``expect:`` list, read from their data: ``READERS`` maps each
check's key to what builds it from its value (and the check's other keys, ``OPTIONS``); a
value that does not fit raises :class:`~bloge.eval.matchers.MatcherError`, which the dataset
reader locates."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from bloge.core.errors import BlogeUsageError
from bloge.eval import checks
from bloge.eval.matchers import MatcherError, compiled, fields_of


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise MatcherError(f"{what} takes text, got {value!r}")
    return value


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise MatcherError(f"{what} takes a number >= 0, got {value!r}")
    return float(value)


def _names(value: Any, what: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
        raise MatcherError(f"{what} takes a tool name or a list of them, got {value!r}")
    return tuple(items)


def _tools(value: Any, spec: Mapping[str, Any]) -> checks.Check:
    order = spec.get("order", "exact")
    if order not in ("exact", "in-order", "any"):
        raise MatcherError(f"order is exact, in-order or any, not {order!r}")
    if not isinstance(value, list):
        raise MatcherError(f"tools takes a list of tool names or {{name, args}}, got {value!r}")
    return checks.ToolsCalled(tuple(_expected_call(item) for item in value),
                              cast(checks.Order, order))


def _expected_call(item: Any) -> checks.ExpectedCall:
    if isinstance(item, str) and item:
        return checks.ExpectedCall(item)
    if isinstance(item, Mapping) and isinstance(item.get("name"), str):
        unknown = set(item) - {"name", "args"}
        if unknown:
            raise MatcherError(f"a tool call is {{name, args}}; unknown {sorted(unknown)}")
        args = item.get("args")
        if args is not None and not isinstance(args, Mapping):
            raise MatcherError(f"args is a mapping of argument matchers, got {args!r}")
        return checks.ExpectedCall(item["name"], None if args is None else fields_of(args))
    raise MatcherError(f"a tool call is a name or {{name, args}}, got {item!r}")


def _schema(value: Any, spec: Mapping[str, Any]) -> checks.Check:
    try:
        import jsonschema  # noqa: PLC0415 -- an optional dependency, loaded when used
    except ImportError:
        raise BlogeUsageError("json-schema checks need the jsonschema package: "
                              "pip install 'bloge[eval]'") from None
    if not isinstance(value, Mapping):
        raise MatcherError("json-schema takes a JSON schema (a mapping)")
    try:
        jsonschema.Draft202012Validator.check_schema(value)
    except jsonschema.SchemaError as exc:
        raise MatcherError(f"not a valid JSON schema: {exc.message}") from None
    return checks.AnswerSchema(value)


def _output(value: Any, spec: Mapping[str, Any]) -> checks.Check:
    if not isinstance(value, Mapping) or not value:
        raise MatcherError("output takes a mapping of field matchers, e.g. {priority: high}")
    return checks.OutputFields(fields_of(value))


def _judge(value: Any, spec: Mapping[str, Any]) -> checks.Check:
    min_score = _number(spec.get("min-score", 0.5), "min-score")
    if min_score > 1:
        raise MatcherError(f"min-score is between 0 and 1, got {min_score:g}")
    model = spec.get("model")
    return checks.JudgeRubric(_text(value, "judge"), min_score,
                              None if model is None else _text(model, "model"))


def _evaluator(value: Any, spec: Mapping[str, Any]) -> checks.Check:
    arguments = spec.get("args", {})
    if not isinstance(arguments, Mapping):
        raise MatcherError(f"args is a mapping, got {arguments!r}")
    return checks.CustomCheck(_text(value, "evaluator"), dict(arguments))


def _at_most(measure: Any) -> Callable[[Any, Mapping[str, Any]], checks.Check]:
    return lambda value, spec: checks.AtMost(measure, _number(value, f"max-{measure}"))


READERS: dict[str, Callable[[Any, Mapping[str, Any]], checks.Check]] = {
    "contains": lambda value, spec: checks.AnswerContains(_text(value, "contains")),
    "regex": lambda value, spec: checks.AnswerMatches(compiled(value)),
    "equals": lambda value, spec: checks.AnswerEquals(_text(value, "equals")),
    "json-schema": _schema,
    "output": _output,
    "tools": _tools,
    "not-called": lambda value, spec: checks.NeverCalled(_names(value, "not-called")),
    "max-turns": _at_most("turns"),
    "max-tokens": _at_most("tokens"),
    "max-usd": _at_most("usd"),
    "max-tool-calls": _at_most("tool-calls"),
    "max-seconds": _at_most("seconds"),
    "exit-reason": lambda value, spec: checks.ExitReason(_text(value, "exit-reason")),
    "judge": _judge,
    "evaluator": _evaluator,
}
#: The options a check takes beside its own key.
OPTIONS = {"tools": ("order",), "judge": ("min-score", "model"), "evaluator": ("args",)}
