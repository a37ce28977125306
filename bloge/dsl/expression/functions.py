"""The expression language's standard library, and what any function of it is.

A :class:`Function` is a plain Python callable with its arity and a line of documentation;
:data:`STANDARD_LIBRARY` is what every expression sees. DSL extensions contribute more
(the agent extension's ``tool_call(name)``) through
:class:`~bloge.dsl.extensions.ExpressionFunctionProvider`. Arity is checked when an expression
is compiled; type errors raise :class:`FunctionError`, which the evaluator reports as an
``ExpressionError`` at the call's position. Functions work on data only (strings, numbers,
lists, maps, records) and never call a method or read an attribute of the values they are
given, so that no function is a way around the data-only paths of :mod:`bloge.core.fields`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from types import MappingProxyType
from typing import Any

from bloge.core.context import OperatorContext
from bloge.dsl.expression.values import is_number, to_text, type_name


class FunctionError(Exception):
    """A function was called with values it cannot work on; the message says why."""


@dataclass(frozen=True, slots=True)
class Function:
    """A function expressions can call, under the name a library (name → function) gives it.

    ``call`` takes between ``min_args`` and ``max_args`` arguments (``None``: no upper limit),
    which every call is checked against when the expression is compiled. It receives the
    arguments' values — after the evaluation scope (the mapping given to
    ``Expression.evaluate``) when ``reads_scope`` is true, so that a function can answer a
    question about the evaluation, as ``tool_call(name)`` reads ``tool_calls``. It raises
    :class:`FunctionError` for values it cannot work on. ``doc`` is one line for people:
    what the function returns.
    """

    call: Callable[..., Any]
    min_args: int
    max_args: int | None
    _: KW_ONLY
    doc: str = ""
    reads_scope: bool = False

    def arity_text(self) -> str:
        """The arity as an error message says it: ``1 argument``, ``1 to 2 arguments``."""
        if self.max_args == self.min_args:
            return f"{self.min_args} argument{'s' if self.min_args != 1 else ''}"
        if self.max_args is None:
            return f"at least {self.min_args} arguments"
        return f"{self.min_args} to {self.max_args} arguments"


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise FunctionError(f"{name}() needs a string, got {type_name(value)}")
    return value


def _number(name: str, value: Any) -> int | float:
    if not is_number(value):
        raise FunctionError(f"{name}() needs a number, got {type_name(value)}")
    return value  # type: ignore[no-any-return]  # checked by is_number


def _len(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, (str, Sequence, Mapping)):
        return len(value)
    raise FunctionError(f"len() needs a string, list or map, got {type_name(value)}")


def _lower(value: Any) -> str | None:
    return None if value is None else _text("lower", value).lower()


def _upper(value: Any) -> str | None:
    return None if value is None else _text("upper", value).upper()


def _trim(value: Any) -> str | None:
    return None if value is None else _text("trim", value).strip()


def _contains(haystack: Any, needle: Any) -> bool:
    if haystack is None:
        return False
    if isinstance(haystack, str):
        return _text("contains", needle) in haystack
    if isinstance(haystack, Mapping):
        return needle in haystack
    if isinstance(haystack, Sequence):
        return needle in haystack
    raise FunctionError(f"contains() needs a string, list or map, got {type_name(haystack)}")


def _starts_with(value: Any, prefix: Any) -> bool:
    return value is not None and _text("startsWith", value).startswith(_text("startsWith", prefix))


def _ends_with(value: Any, suffix: Any) -> bool:
    return value is not None and _text("endsWith", value).endswith(_text("endsWith", suffix))


@functools.lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise FunctionError(f"invalid regular expression {pattern!r}: {exc}") from None


def _matches(value: Any, pattern: Any) -> bool:
    if value is None:
        return False
    return _regex(_text("matches", pattern)).search(_text("matches", value)) is not None


def _replace(value: Any, old: Any, new: Any) -> str | None:
    if value is None:
        return None
    return _text("replace", value).replace(_text("replace", old), _text("replace", new))


def _split(value: Any, separator: Any) -> list[str]:
    if value is None:
        return []
    separator = _text("split", separator)
    if not separator:
        raise FunctionError("split() needs a non-empty separator")
    return _text("split", value).split(separator)


def _join(values: Any, separator: Any = ",") -> str:
    if values is None:
        return ""
    if not isinstance(values, Sequence) or isinstance(values, str):
        raise FunctionError(f"join() needs a list, got {type_name(values)}")
    return _text("join", separator).join(to_text(v) for v in values)


def _keys(value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, Mapping):
        raise FunctionError(f"keys() needs a map, got {type_name(value)}")
    return list(value.keys())


def _values(value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, Mapping):
        raise FunctionError(f"values() needs a map, got {type_name(value)}")
    if isinstance(value, OperatorContext):
        # A context is read by name (ctx.user); listing it whole would dump every value in it.
        raise FunctionError("values() cannot list a context; read its values by name: ctx.<name>")
    return list(value.values())


def _is_empty(value: Any) -> bool:
    return value is None or _len(value) == 0


def _string(value: Any) -> str:
    return to_text(value)


def _to_number(value: Any) -> int | float | None:
    if value is None or is_number(value):
        return value  # type: ignore[no-any-return]  # None or a checked number
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            try:
                return float(value)
            except ValueError:
                raise FunctionError(f"number() cannot read {value!r} as a number") from None
    raise FunctionError(f"number() needs a string or number, got {type_name(value)}")


def _to_int(value: Any) -> int | None:
    number = _to_number(value)
    if number is None:
        return None
    try:
        return int(number)
    except (OverflowError, ValueError):
        raise FunctionError(f"int() cannot convert {number!r}") from None


def _abs(value: Any) -> int | float:
    return abs(_number("abs", value))


def _min(*values: Any) -> Any:
    items = _spread("min", values)
    return min(items) if items else None


def _max(*values: Any) -> Any:
    items = _spread("max", values)
    return max(items) if items else None


def _spread(name: str, values: tuple[Any, ...]) -> list[int | float]:
    if len(values) == 1 and isinstance(values[0], Sequence) and not isinstance(values[0], str):
        values = tuple(values[0])
    return [_number(name, v) for v in values]


def _round(value: Any, digits: Any = 0) -> int | float:
    number = _number("round", value)
    places = _number("round", digits)
    if not isinstance(places, int):
        raise FunctionError("round() needs a whole number of digits")
    try:
        return round(number) if places == 0 else round(number, places)
    except OverflowError:
        raise FunctionError(f"round() cannot round {number!r}") from None


def _coalesce(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


STANDARD_LIBRARY: Mapping[str, Function] = MappingProxyType({
    "len": Function(_len, 1, 1, doc="the length of a string, list or map (0 for null)"),
    "lower": Function(_lower, 1, 1, doc="the string in lower case"),
    "upper": Function(_upper, 1, 1, doc="the string in upper case"),
    "trim": Function(_trim, 1, 1, doc="the string without leading and trailing whitespace"),
    "contains": Function(_contains, 2, 2,
                         doc="whether a string holds a text, a list an item, a map a key"),
    "startsWith": Function(_starts_with, 2, 2, doc="whether the string starts with the prefix"),
    "endsWith": Function(_ends_with, 2, 2, doc="whether the string ends with the suffix"),
    "matches": Function(_matches, 2, 2,
                        doc="whether the regular expression matches somewhere in the string"),
    "replace": Function(_replace, 3, 3, doc="the string with every old text replaced by new"),
    "split": Function(_split, 2, 2, doc="the parts of the string between separators"),
    "join": Function(_join, 1, 2, doc="the items as text, joined by the separator (',')"),
    "keys": Function(_keys, 1, 1, doc="the keys of a map"),
    "values": Function(_values, 1, 1, doc="the values of a map"),
    "isEmpty": Function(_is_empty, 1, 1, doc="whether the value is null or has length 0"),
    "string": Function(_string, 1, 1, doc='the value as text, as "${value}" shows it'),
    "number": Function(_to_number, 1, 1, doc="a string read as a whole or decimal number"),
    "int": Function(_to_int, 1, 1, doc="a number or string as a whole number, truncated"),
    "abs": Function(_abs, 1, 1, doc="the number without its sign"),
    "min": Function(_min, 1, None, doc="the least of the numbers (or of one list of them)"),
    "max": Function(_max, 1, None, doc="the greatest of the numbers (or of one list of them)"),
    "round": Function(_round, 1, 2, doc="the number rounded to the digits after the point (0)"),
    "coalesce": Function(_coalesce, 1, None, doc="the first argument that is not null"),
})
