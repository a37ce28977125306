"""Compile a syntax tree into a tree of small closures, then evaluate by calling the root.

Each node becomes one Python function of the scope, built once; evaluation walks that tree
with no parsing, dispatch tables or ``eval``. Type errors raise ``ExpressionError`` naming
the expression and the failing node's ``file:line:column``.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping
from typing import Any

from bloge.core.errors import CompileError, ExpressionError
from bloge.core.fields import MISSING
from bloge.core.suggest import did_you_mean_hint
from bloge.dsl import syntax as s
from bloge.dsl.expression.functions import Function, FunctionError
from bloge.dsl.expression.values import (
    equals,
    is_number,
    read_member,
    to_text,
    truthy,
    type_name,
)
from bloge.dsl.source import SourceText

Evaluator = Callable[[Mapping[str, Any]], Any]


class ClosureCompiler:
    """Turns one expression's syntax tree into an :data:`Evaluator`."""

    def __init__(self, text: str, source: SourceText, functions: Mapping[str, Function]) -> None:
        self._text = text
        self._source = source
        self._functions = functions

    def compile(self, node: s.Expr) -> Evaluator:
        match node:
            case s.Literal(value):
                return lambda scope: value
            case s.Var(name):
                return lambda scope: scope.get(name)
            case s.Interpolation():
                return self._interpolation(node)
            case s.Member():
                return self._member(node)
            case s.Index():
                return self._index(node)
            case s.Unary():
                return self._unary(node)
            case s.Binary():
                return self._binary(node)
            case s.Ternary(condition, then, otherwise):
                test, yes, no = self.compile(condition), self.compile(then), self.compile(otherwise)
                return lambda scope: yes(scope) if truthy(test(scope)) else no(scope)
            case s.Call():
                return self._call(node)
            case s.ListExpr(items):
                parts = [self.compile(i) for i in items]
                return lambda scope: [p(scope) for p in parts]
            case s.MapExpr(entries):
                pairs = [(k, self.compile(v)) for k, v in entries]
                return lambda scope: {k: v(scope) for k, v in pairs}

    def error(self, span: s.Span, message: str) -> ExpressionError:
        return ExpressionError(message, source=self._text, location=self._source.location(span))

    # -- nodes

    def _interpolation(self, node: s.Interpolation) -> Evaluator:
        parts = [p if isinstance(p, str) else self.compile(p) for p in node.parts]

        def interpolate(scope: Mapping[str, Any]) -> str:
            return "".join(p if isinstance(p, str) else to_text(p(scope)) for p in parts)

        return interpolate

    def _member(self, node: s.Member) -> Evaluator:
        target, name, safe, span = self.compile(node.target), node.name, node.safe, node.span

        def member(scope: Mapping[str, Any]) -> Any:
            obj = target(scope)
            if type(obj) is dict:
                return obj.get(name)
            if obj is None:
                return None
            value = read_member(obj, name)
            if value is MISSING:
                if safe:
                    return None
                raise self.error(span, f"cannot read {name!r} of a {type_name(obj)}")
            return value

        return member

    def _index(self, node: s.Index) -> Evaluator:
        target, key_of, safe, span = (
            self.compile(node.target), self.compile(node.index), node.safe, node.span
        )

        def index(scope: Mapping[str, Any]) -> Any:
            obj, key = target(scope), key_of(scope)
            if obj is None or key is None:
                return None
            if isinstance(obj, Mapping):
                if isinstance(key, str):
                    return obj.get(key)
            elif isinstance(obj, (list, tuple, str)) and type(key) is int:
                return obj[key] if -len(obj) <= key < len(obj) else None
            else:
                value = read_member(obj, key) if isinstance(key, str) else MISSING
                if value is not MISSING:
                    return value
            if safe:
                return None
            raise self.error(span, f"cannot index a {type_name(obj)} with a {type_name(key)}")

        return index

    def _unary(self, node: s.Unary) -> Evaluator:
        operand, span = self.compile(node.operand), node.span
        if node.op == "!":
            return lambda scope: not truthy(operand(scope))

        def negate(scope: Mapping[str, Any]) -> Any:
            value = operand(scope)
            if is_number(value) or isinstance(value, dt.timedelta):
                return -value
            raise self.error(span, f"cannot negate a {type_name(value)}")

        return negate

    def _binary(self, node: s.Binary) -> Evaluator:
        left, right = self.compile(node.left), self.compile(node.right)
        match node.op:
            case "&&":
                return lambda scope: truthy(left(scope)) and truthy(right(scope))
            case "||":
                return lambda scope: truthy(left(scope)) or truthy(right(scope))
            case "??":
                def coalesce(scope: Mapping[str, Any]) -> Any:
                    value = left(scope)
                    return right(scope) if value is None else value

                return coalesce
            case "==" | "!=":
                return self._equality(node, left, right)
        operate = _OPERATORS[node.op]
        op, span = node.op, node.span

        def binary(scope: Mapping[str, Any]) -> Any:
            a, b = left(scope), right(scope)
            result = operate(a, b)
            if result is _TYPE_ERROR:
                raise self.error(span, _type_error_text(op, a, b))
            return result

        return binary

    def _equality(self, node: s.Binary, left: Evaluator, right: Evaluator) -> Evaluator:
        negate = node.op == "!="
        constant = _string_constant(node.right) or _string_constant(node.left)
        if constant is not None:
            other = left if _string_constant(node.right) is not None else right
            text = constant
            if negate:
                return lambda scope: other(scope) != text
            return lambda scope: other(scope) == text
        if negate:
            return lambda scope: not equals(left(scope), right(scope))
        return lambda scope: equals(left(scope), right(scope))

    def _call(self, node: s.Call) -> Evaluator:
        function = self.function(node)
        if len(node.args) == 1:
            return self._call_with_one(function, node.args[0], node.span)
        call, reads_scope, span = function.call, function.reads_scope, node.span
        args = [self.compile(a) for a in node.args]

        def invoke(scope: Mapping[str, Any]) -> Any:
            values = [a(scope) for a in args]
            try:
                return call(scope, *values) if reads_scope else call(*values)
            except FunctionError as exc:
                raise self.error(span, str(exc)) from None

        return invoke

    def _call_with_one(self, function: Function, argument: s.Expr, span: s.Span) -> Evaluator:
        # Most calls take one argument, often a literal (tool_call("search")): called directly,
        # without a list of arguments to build and unpack (about 0.1 µs of every such call).
        call, reads_scope = function.call, function.reads_scope
        if isinstance(argument, s.Literal):
            value = argument.value

            def invoke_with_literal(scope: Mapping[str, Any]) -> Any:
                try:
                    return call(scope, value) if reads_scope else call(value)
                except FunctionError as exc:
                    raise self.error(span, str(exc)) from None

            return invoke_with_literal
        evaluate = self.compile(argument)

        def invoke_with_one(scope: Mapping[str, Any]) -> Any:
            try:
                return call(scope, evaluate(scope)) if reads_scope else call(evaluate(scope))
            except FunctionError as exc:
                raise self.error(span, str(exc)) from None

        return invoke_with_one

    def function(self, node: s.Call) -> Function:
        """The library function ``node`` calls, checked for arity (a ``CompileError`` if not)."""
        function = self._functions.get(node.function)
        if function is None:
            hint = did_you_mean_hint(node.function, self._functions, shown="{}()")
            raise self._source.error(
                CompileError, f"unknown function {node.function}(){hint}", node.span,
                width=len(node.function),
            )
        count = len(node.args)
        if count < function.min_args or (function.max_args is not None
                                         and count > function.max_args):
            raise self._source.error(
                CompileError,
                f"{node.function}() takes {function.arity_text()}, got {count}",
                node.span,
            )
        return function


def _string_constant(node: s.Expr) -> str | None:
    if isinstance(node, s.Literal) and isinstance(node.value, str):
        return node.value
    return None


# ---------------------------------------------------------------------------- operators

_TYPE_ERROR: Any = object()


def _add(a: Any, b: Any) -> Any:
    if is_number(a) and is_number(b):
        return a + b
    if isinstance(a, str) or isinstance(b, str):
        return to_text(a) + to_text(b)
    if isinstance(a, list) and isinstance(b, list):
        return a + b
    if isinstance(a, dt.timedelta) and isinstance(b, dt.timedelta):
        return a + b
    return _TYPE_ERROR


def _subtract(a: Any, b: Any) -> Any:
    if (is_number(a) and is_number(b)) or (
        isinstance(a, dt.timedelta) and isinstance(b, dt.timedelta)
    ):
        return a - b
    return _TYPE_ERROR


def _multiply(a: Any, b: Any) -> Any:
    return a * b if is_number(a) and is_number(b) else _TYPE_ERROR


def _divide(a: Any, b: Any) -> Any:
    if not (is_number(a) and is_number(b)) or b == 0:
        return _TYPE_ERROR
    if isinstance(a, int) and isinstance(b, int) and a % b == 0:
        return a // b
    return a / b


def _modulo(a: Any, b: Any) -> Any:
    if not (is_number(a) and is_number(b)) or b == 0:
        return _TYPE_ERROR
    return a % b


def _ordered(a: Any, b: Any) -> bool:
    # NaN is neither less, equal nor greater than anything: a comparison with it cannot
    # decide, and says so rather than answer false (an approval rule then fails closed).
    return (
        (is_number(a) and is_number(b) and not (_is_nan(a) or _is_nan(b)))
        or (isinstance(a, str) and isinstance(b, str))
        or (isinstance(a, dt.timedelta) and isinstance(b, dt.timedelta))
    )


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _contains(a: Any, b: Any) -> Any:
    if b is None:
        return False
    if isinstance(b, str):
        return a in b if isinstance(a, str) else _TYPE_ERROR
    if isinstance(b, Mapping):
        return a in b if isinstance(a, str) else False
    if isinstance(b, (list, tuple)):
        return any(equals(a, item) for item in b)
    return _TYPE_ERROR


_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+": _add,
    "-": _subtract,
    "*": _multiply,
    "/": _divide,
    "%": _modulo,
    "<": lambda a, b: a < b if _ordered(a, b) else _TYPE_ERROR,
    "<=": lambda a, b: a <= b if _ordered(a, b) else _TYPE_ERROR,
    ">": lambda a, b: a > b if _ordered(a, b) else _TYPE_ERROR,
    ">=": lambda a, b: a >= b if _ordered(a, b) else _TYPE_ERROR,
    "in": _contains,
}


def _type_error_text(op: str, a: Any, b: Any) -> str:
    if op in ("/", "%") and is_number(a) and is_number(b):
        return "division by zero"
    if op == "in":
        return f"cannot look for a {type_name(a)} in a {type_name(b)}"
    if op in ("<", "<=", ">", ">=") and (_is_nan(a) or _is_nan(b)):
        return f"cannot compare NaN (not a number) using {op!r}"
    if op in ("<", "<=", ">", ">="):
        return f"cannot compare a {type_name(a)} with a {type_name(b)} using {op!r}"
    return f"cannot apply {op!r} to a {type_name(a)} and a {type_name(b)}"
