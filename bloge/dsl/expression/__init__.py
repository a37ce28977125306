"""The bloge expression language: compile once, evaluate many times.

>>> Expression.compile('finish_reason == "stop" || contains(content, "DONE")').evaluate(
...     {"finish_reason": "stop"})
True

Literals (``"text ${interpolated}"``, ``\\${`` for a literal ``${``, ints, decimals,
``true``/``false``/``null``, durations such as ``3s``), paths (``a.b``, ``a["k"]``, ``a[0]``,
``a[-1]``, ``a?.b``, ``a?[1]``), operators (``== != < <= > >= && || ! + - * / % ?? in``), the
ternary ``c ? a : b`` and calls of the functions an expression is compiled with:
:data:`STANDARD_LIBRARY` unless told otherwise (DSL extensions add theirs, as the agent adds
``tool_call(name)``). A missing path is ``null``; a type error raises
:class:`~bloge.core.errors.ExpressionError`.

Paths reach data only — map keys, list items, dataclass and pydantic model fields — never
methods, properties, dunders or the attributes of other objects (:mod:`bloge.core.fields`),
and a value that is not data reads as a placeholder in a string: ``"${ctx}"`` is
``"<OperatorContext>"``. There is no way to call a method of a value.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from bloge.core.errors import CompileError, ExpressionError
from bloge.dsl import syntax as s
from bloge.dsl.expression.evaluator import ClosureCompiler, Evaluator
from bloge.dsl.expression.functions import STANDARD_LIBRARY, Function, FunctionError
from bloge.dsl.parser import parse_expression
from bloge.dsl.source import SourceText

_EMPTY: Mapping[str, Any] = {}
_RUNTIME_FAULTS = (TypeError, ValueError, ArithmeticError, LookupError, AttributeError,
                   RecursionError, MemoryError)


class Expression:
    """A compiled expression. Equal when their source text is equal."""

    __slots__ = ("_evaluate", "location", "node", "source")

    def __init__(self, source: str, node: s.Expr, evaluate: Evaluator, location: str) -> None:
        self.source = source
        self.node = node
        self.location = location
        self._evaluate = evaluate

    @classmethod
    def compile(
        cls,
        text: str,
        *,
        filename: str = "<expression>",
        functions: Mapping[str, Function] = STANDARD_LIBRARY,
    ) -> Expression:
        """Parse and compile ``text`` to call ``functions``; ``DslSyntaxError``/``CompileError``
        when it is invalid (an unknown function or a wrong number of arguments included)."""
        node = parse_expression(text, filename=filename)
        return cls.from_node(node, SourceText(text, filename), text, functions=functions)

    @classmethod
    def from_node(
        cls,
        node: s.Expr,
        source: SourceText,
        text: str,
        *,
        functions: Mapping[str, Function] = STANDARD_LIBRARY,
    ) -> Expression:
        """Compile an already parsed node whose text ``text`` sits in ``source``."""
        try:
            evaluate = ClosureCompiler(text, source, functions).compile(node)
        except RecursionError:
            raise source.error(CompileError, "expression is nested too deeply", node.span) from None
        return cls(text, node, evaluate, source.location(node.span))

    def evaluate(self, scope: Mapping[str, Any] | None = None) -> Any:
        """The expression's value in ``scope`` (names not in the scope are ``null``)."""
        try:
            return self._evaluate(_EMPTY if scope is None else scope)
        except ExpressionError:
            raise
        except _RUNTIME_FAULTS as exc:
            raise ExpressionError(
                f"{type(exc).__name__}: {exc}", source=self.source, location=self.location
            ) from exc

    @property
    def variables(self) -> frozenset[str]:
        """The root names the expression reads from its scope."""
        return frozenset(v.name for v in walk(self.node) if isinstance(v, s.Var))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expression) and other.source == self.source

    def __hash__(self) -> int:
        return hash(self.source)

    def __repr__(self) -> str:
        return f"Expression({self.source!r})"

    def __str__(self) -> str:
        return self.source


def walk(node: s.Expr) -> Iterator[s.Expr]:
    """``node`` and every expression below it, parents before children."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        match current:
            case s.Interpolation(parts):
                stack.extend(p for p in parts if not isinstance(p, str))
            case s.Member(target) | s.Unary(_, target):
                stack.append(target)
            case s.Index(target, index):
                stack.extend((target, index))
            case s.Binary(_, left, right):
                stack.extend((left, right))
            case s.Ternary(condition, then, otherwise):
                stack.extend((condition, then, otherwise))
            case s.Call(_, args):
                stack.extend(args)
            case s.ListExpr(items):
                stack.extend(items)
            case s.MapExpr(entries):
                stack.extend(v for _, v in entries)


__all__ = ["STANDARD_LIBRARY", "Expression", "Function", "FunctionError", "walk"]
