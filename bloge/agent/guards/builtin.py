"""The guards bloge ships, usable from the DSL by name (``guard output pii : PiiGuard { … }``)
and from Python (``output_guard(PiiGuard())``).

Each takes its settings as keyword arguments, which are the DSL block's bindings; each
checks its settings at once (:meth:`option_problems` names every bad one, so the DSL
compiler reports it at its line). They are async and do no I/O: they run on the loop, with
no worker thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from bloge.agent.guards.model import GuardCheck, GuardVerdict
from bloge.agent.guards.pii import PII_KINDS, find_pii
from bloge.core.context import OperatorContext
from bloge.core.errors import BlogeUsageError


class _BuiltinGuard:
    """Settings checked once, by :meth:`option_problems`."""

    options: ClassVar[tuple[str, ...]] = ()
    required: ClassVar[tuple[str, ...]] = ()

    def __init__(self, **options: Any) -> None:
        problems = self.option_problems(options)
        if problems:
            listing = "; ".join(f"{key}: {problem}" if key else problem
                                for key, problem in problems.items())
            raise BlogeUsageError(f"{type(self).__name__}: {listing}")

    @classmethod
    def option_problems(cls, options: Mapping[str, Any]) -> dict[str, str]:
        """Every bad setting in ``options``, by its name (``""``: one that is missing)."""
        problems = {key: f"unknown setting; {cls.__name__} takes "
                         f"{', '.join(cls.options) or 'none'}"
                    for key in options if key not in cls.options}
        missing = [key for key in cls.required if key not in options]
        if missing:
            problems[""] = f"needs {', '.join(missing)}"
        for key, value in options.items():
            if key in cls.options:
                problem = cls._problem(key, value)
                if problem:
                    problems[key] = problem
        return problems

    @classmethod
    def _problem(cls, key: str, value: Any) -> str | None:
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _texts(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(v, str) and v for v in value)


class PiiGuard(_BuiltinGuard):
    """Trips on personal data or secrets in the text it checks (an answer, an input, a tool
    call's arguments): e-mail addresses, phone, card (Luhn-checked), IBAN (mod-97-checked)
    and US social-security numbers, credentials as the journal's redaction finds them
    (``password=…``, bearer tokens, URL user-info), well-known API key shapes, private keys,
    and any of ``secrets``. ``kinds`` narrows what it looks for (default: all of
    :data:`~bloge.agent.guards.pii.PII_KINDS`). Its verdict counts what it found, by kind."""

    options = ("kinds", "secrets")

    def __init__(self, *, kinds: Sequence[str] = PII_KINDS, secrets: Sequence[str] = ()) -> None:
        super().__init__(kinds=kinds, secrets=secrets)
        self.kinds = tuple(kinds)
        self.secrets = tuple(secrets)

    @classmethod
    def _problem(cls, key: str, value: Any) -> str | None:
        if not _texts(value):
            return "must be a list of strings"
        if key == "kinds":
            unknown = [kind for kind in value if kind not in PII_KINDS]
            if unknown:
                return f"unknown kinds {', '.join(unknown)}; known: {', '.join(PII_KINDS)}"
        return None

    async def execute(self, check: GuardCheck, ctx: OperatorContext) -> GuardVerdict:
        found = find_pii(check.text, self.kinds, self.secrets)
        if not found:
            return GuardVerdict.passed()
        listing = ", ".join(f"{count} {kind.replace('_', ' ')}" for kind, count in found.items())
        return GuardVerdict.trip(f"it holds personal data or secrets ({listing})", **found)


class MaxLengthGuard(_BuiltinGuard):
    """Trips when the text it checks is longer than ``max_chars`` characters (an input, an
    answer, or a tool call's arguments as JSON)."""

    options = ("max_chars",)
    required = ("max_chars",)

    def __init__(self, *, max_chars: int) -> None:
        super().__init__(max_chars=max_chars)
        self.max_chars = max_chars

    @classmethod
    def _problem(cls, key: str, value: Any) -> str | None:
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            return "must be a whole number of characters, at least 1"
        return None

    async def execute(self, check: GuardCheck, ctx: OperatorContext) -> GuardVerdict:
        length = len(check.text)
        if length <= self.max_chars:
            return GuardVerdict.passed()
        return GuardVerdict.trip(f"it is {length} characters long; at most {self.max_chars} "
                                 "are allowed", length=length, max_chars=self.max_chars)


class ToolArgsSchemaGuard(_BuiltinGuard):
    """Trips when a tool call's arguments break ``schema``, a JSON schema (draft 2020-12)
    checked on top of the tool's own (``maximum``, ``pattern``, ``maxLength``…: what a
    business rule needs and a model-facing schema does not say). ``tools`` limits it to those
    tools (default: every tool). Needs the ``jsonschema`` package (extra ``bloge[guards]``)."""

    options = ("schema", "tools")
    required = ("schema",)

    def __init__(self, *, schema: Mapping[str, Any], tools: Sequence[str] = ()) -> None:
        super().__init__(schema=schema, tools=tools)
        self.tools = frozenset(tools)
        self._validator = _validator(schema)

    @classmethod
    def _problem(cls, key: str, value: Any) -> str | None:
        if key == "tools":
            return None if _texts(value) else "must be a list of tool names"
        if not isinstance(value, Mapping):
            return 'must be a JSON schema object, e.g. { type: "object", properties: { … } }'
        try:
            _validator(value)
        except BlogeUsageError as exc:
            return str(exc)
        return None

    async def execute(self, check: GuardCheck, ctx: OperatorContext) -> GuardVerdict:
        if check.kind != "tool_call" or (self.tools and check.tool_name not in self.tools):
            return GuardVerdict.passed()
        arguments = check.tool_args if check.tool_args is not None else {}
        problems = [f"{'/'.join(map(str, error.absolute_path)) or 'arguments'}: {error.message}"
                    for error in self._validator.iter_errors(arguments)]
        if not problems:
            return GuardVerdict.passed()
        return GuardVerdict.trip(f"arguments of {check.tool_name!r} break the policy schema: "
                                 + "; ".join(problems[:5]), problems=len(problems))


def _validator(schema: Mapping[str, Any]) -> Any:
    try:
        import jsonschema  # noqa: PLC0415 -- an optional dependency, loaded when used
    except ImportError:
        raise BlogeUsageError("ToolArgsSchemaGuard needs the jsonschema package: "
                              "pip install 'bloge[guards]'") from None
    validator_class = jsonschema.validators.validator_for(schema, jsonschema.Draft202012Validator)
    try:
        validator_class.check_schema(dict(schema))
    except jsonschema.SchemaError as exc:
        raise BlogeUsageError(f"not a valid JSON schema: {exc.message}") from None
    return validator_class(schema)


class ToolDenylistGuard(_BuiltinGuard):
    """Trips on a call of any of the tools ``tools`` (by name; ``*`` ends a prefix:
    ``"admin_*"``). Combine with ``when`` for calls denied only with some arguments."""

    options = ("tools",)
    required = ("tools",)

    def __init__(self, *, tools: Sequence[str]) -> None:
        super().__init__(tools=tools)
        self.exact = frozenset(t for t in tools if not t.endswith("*"))
        self.prefixes = tuple(t[:-1] for t in tools if t.endswith("*"))

    @classmethod
    def _problem(cls, key: str, value: Any) -> str | None:
        return None if _texts(value) else "must be a list of tool names"

    async def execute(self, check: GuardCheck, ctx: OperatorContext) -> GuardVerdict:
        name = check.tool_name
        if check.kind != "tool_call" or name is None:
            return GuardVerdict.passed()
        if name in self.exact or name.startswith(self.prefixes):
            return GuardVerdict.trip(f"tool {name!r} may not be called")
        return GuardVerdict.passed()


#: The built-in guards by the name the DSL knows them by (a registered operator of the same
#: name takes precedence).
BUILTIN_GUARDS: Mapping[str, type[_BuiltinGuard]] = {
    guard.__name__: guard
    for guard in (PiiGuard, MaxLengthGuard, ToolArgsSchemaGuard, ToolDenylistGuard)
}
