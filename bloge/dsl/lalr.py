"""lark's LALR parser for ``bloge.lark``, and the tree it builds turned into our nodes.

lark builds one LALR parser for the grammar, once per process, from the tables it cached in the
user's cache folder when there is one (see :func:`_cache_file`), and the transformer below turns
lark's tree into the nodes of :mod:`bloge.dsl.syntax` as it parses. Parse failures become
:class:`DslSyntaxError` saying what was expected, at ``file:line:column``. Texts past the limits
of :mod:`bloge.dsl.limits` (nesting, literal sizes) are located ``DslSyntaxError``s too, and so
is any other failure while the tree is built. :mod:`bloge.dsl.parser` is the public side.
"""

from __future__ import annotations

import functools
import re
import sys
import threading
from importlib import resources
from typing import Any

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedInput, VisitError

from bloge.core.errors import DslSyntaxError
from bloge.dsl import limits
from bloge.dsl import syntax as s
from bloge.dsl.cache import cache_folder
from bloge.dsl.source import SourceText
from bloge.dsl.syntax_errors import syntax_error

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\", "$": "$", "0": "\0"}
_INTERPOLATION = re.compile(r"\$\{([^}]*)\}")
_BUILD_LOCK = threading.Lock()


def parse(source: SourceText, start: str) -> Any:
    """The syntax tree of ``source`` from the grammar's rule ``start``."""
    parser = _parser(start)
    try:
        tree = parser.parse(source.text)
    except UnexpectedInput as exc:
        raise syntax_error(source, exc, parser) from None
    deep = _too_deep(tree)
    if deep is not None:
        raise source.error(DslSyntaxError, limits.NESTING_MESSAGE, deep)
    try:
        return _TO_SYNTAX.transform(tree)
    except VisitError as exc:
        problem = _cause(exc)
        if isinstance(problem, _LiteralError):
            raise source.error(DslSyntaxError, problem.message, problem.span) from None
        # Any other failure of a tree callback still becomes a located DSL error.
        where = _meta_span(exc.obj) or s.Span(1, 1, 1, 2)
        raise source.error(DslSyntaxError, f"cannot read this {exc.rule}: {problem}",
                           where) from problem


def _cause(exc: VisitError) -> Exception:
    """What a tree callback raised (an interpolation's own parse nests one VisitError more)."""
    problem = exc.orig_exc
    while isinstance(problem, VisitError):
        problem = problem.orig_exc
    return problem


def _too_deep(tree: Tree[Token]) -> s.Span | None:
    """Where ``tree`` nests past the limit (``None`` if it does not)."""
    found = limits.too_deep(tree)
    if found is None:
        return None
    node, parent = found
    return _meta_span(node) or _meta_span(parent) or s.Span(1, 1, 1, 2)


def _meta_span(node: object) -> s.Span | None:
    meta = node.meta if isinstance(node, Tree) else None
    if meta is None or meta.empty:
        return _token_span(node) if isinstance(node, Token) else None
    return _span(meta)


@functools.cache
def _grammar() -> str:
    return resources.files("bloge.dsl").joinpath("bloge.lark").read_text(encoding="utf-8")


def _parser(start: str) -> Lark:
    with _BUILD_LOCK:
        return _build_parser(start)


@functools.cache
def _build_parser(start: str) -> Lark:
    return Lark(
        _grammar(),
        start=start,
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=False,
        cache=_cache_file(start) or False,
    )


def _cache_file(start: str) -> str | None:
    """Where lark keeps the parser's tables between processes (building them costs ~0.2 s,
    loading them ~0.02 s: every ``bloge`` command starts faster), in :func:`cache_folder`.
    lark checks a SHA-256 of the grammar, its options, its own and Python's version inside the
    file, and rebuilds it when they differ."""
    folder = cache_folder()
    if folder is None:
        return None
    return str(folder / f"dsl-{start}-py{sys.version_info[0]}{sys.version_info[1]}.lark")


# ---------------------------------------------------------------------------- tree building


def _span(meta: Any) -> s.Span:
    return s.Span(meta.line, meta.column, meta.end_line, meta.end_column)


def _token_span(token: Token) -> s.Span:
    return s.Span(
        token.line or 1, token.column or 1, token.end_line or 1, token.end_column or 1
    )


class _LiteralError(Exception):
    """A literal that cannot be read (bad escape, ``${…}``, too long), found while building."""

    def __init__(self, message: str, span: s.Span) -> None:
        self.message = message
        self.span = span


@v_args(meta=True)
class _ToSyntax(Transformer[Token, Any]):
    """Builds bloge.dsl.syntax nodes bottom-up from lark's tree."""

    # -- statements

    def document(self, meta: Any, children: list[s.Statement]) -> list[s.Statement]:
        return children

    def binding(self, meta: Any, children: list[Any]) -> s.Binding:
        key, value = children
        return s.Binding(str(key), value, _span(meta), _token_span(key))

    def block(self, meta: Any, children: list[Any]) -> s.Block:
        header, *body = children
        words, ref, ref_span, ref_kind = header
        keywords = tuple(str(w) for w in (words[:-1] if len(words) > 1 else words))
        name_token = words[-1] if len(words) > 1 else None
        return s.Block(
            keywords=keywords,
            name=str(name_token) if name_token is not None else None,
            ref=ref,
            body=tuple(body),
            span=_span(meta),
            name_span=_token_span(name_token) if name_token is not None else None,
            ref_span=ref_span,
            ref_kind=ref_kind,
        )

    def header(self, meta: Any, children: list[Any]
               ) -> tuple[list[Token], str | None, Any, str | None]:
        if children and isinstance(children[-1], tuple):
            ref, ref_span = children[-1]
            return children[:-1], ref, ref_span, None
        return children, None, None, None

    def agent_header(self, meta: Any, children: list[Any]
                     ) -> tuple[list[Token], str | None, Any, str | None]:
        words, ref, ref_span, _ = self.header(meta, children)
        return words, ref, ref_span, "agent"
    def remote_header(self, meta: Any, children: list[Any]
                      ) -> tuple[list[Token], str | None, Any, str | None]:
        """``words : kind "<address>"``: ``ref`` is the address, a plain string."""
        *words, kind, address = children
        node = _string_node(address)
        if not isinstance(node, s.Literal):
            raise _LiteralError(f"the address of a {kind} tool is a plain string, without "
                                "${…}", node.span)
        return words, str(node.value), node.span, str(kind)

    def qualified_name(self, meta: Any, children: list[Token]) -> tuple[str, s.Span]:
        return ".".join(str(c) for c in children), _span(meta)

    def edge(self, meta: Any, children: list[Token]) -> s.Edge:
        return s.Edge(tuple(str(c) for c in children), _span(meta))

    # -- types

    def field(self, meta: Any, children: list[Any]) -> s.Field:
        *words, type_expr = children
        return s.Field(tuple(str(w) for w in words), type_expr, _span(meta),
                       _token_span(words[0]))

    def type_expr(self, meta: Any, children: list[Any]) -> s.TypeUnion:
        optional = bool(children) and isinstance(children[-1], Token) and children[-1] == "?"
        options = tuple(c for c in children if not isinstance(c, Token))
        return s.TypeUnion(options, optional, _span(meta))

    def type_name(self, meta: Any, children: list[Any]) -> s.TypeName:
        name, *rest = children
        args = tuple(c for c in rest if isinstance(c, s.TypeUnion))
        return s.TypeName(str(name), args, _span(meta))

    def type_literal(self, meta: Any, children: list[Token]) -> s.TypeLiteral:
        token = children[0]
        if token.type == "STRING":
            node = _string_node(token)
            if not isinstance(node, s.Literal):
                raise _LiteralError("a literal type cannot interpolate ${…}", _span(meta))
            return s.TypeLiteral(node.value, _span(meta))
        if token.type == "INT":
            return s.TypeLiteral(int(token), _span(meta))
        return s.TypeLiteral(float(token), _span(meta))

    def type_true(self, meta: Any, children: list[Token]) -> s.TypeLiteral:
        return s.TypeLiteral(value=True, span=_span(meta))

    def type_false(self, meta: Any, children: list[Token]) -> s.TypeLiteral:
        return s.TypeLiteral(value=False, span=_span(meta))

    def type_object(self, meta: Any, children: list[s.Field]) -> s.TypeObject:
        return s.TypeObject(tuple(c for c in children if isinstance(c, s.Field)), _span(meta))

    # -- expressions

    def ternary(self, meta: Any, children: list[s.Expr]) -> s.Ternary:
        condition, then, otherwise = children
        return s.Ternary(condition, then, otherwise, _span(meta))

    def coalesce(self, meta: Any, children: list[s.Expr]) -> s.Binary:
        return s.Binary("??", children[0], children[1], _span(meta))

    def or_op(self, meta: Any, children: list[s.Expr]) -> s.Binary:
        return s.Binary("||", children[0], children[1], _span(meta))

    def and_op(self, meta: Any, children: list[s.Expr]) -> s.Binary:
        return s.Binary("&&", children[0], children[1], _span(meta))

    def binary(self, meta: Any, children: list[Any]) -> s.Binary:
        left, op, right = children
        return s.Binary(str(op), left, right, _span(meta))

    def unary(self, meta: Any, children: list[Any]) -> s.Unary:
        op, operand = children
        return s.Unary(str(op), operand, _span(meta))

    def member(self, meta: Any, children: list[Any]) -> s.Member:
        return s.Member(children[0], str(children[1]), safe=False, span=_span(meta))

    def safe_member(self, meta: Any, children: list[Any]) -> s.Member:
        return s.Member(children[0], str(children[1]), safe=True, span=_span(meta))

    def index(self, meta: Any, children: list[s.Expr]) -> s.Index:
        return s.Index(children[0], children[1], safe=False, span=_span(meta))

    def safe_index(self, meta: Any, children: list[s.Expr]) -> s.Index:
        return s.Index(children[0], children[1], safe=True, span=_span(meta))

    def call(self, meta: Any, children: list[Any]) -> s.Call:
        name, *args = children
        return s.Call(str(name), tuple(args), _span(meta))

    def var(self, meta: Any, children: list[Token]) -> s.Var:
        return s.Var(str(children[0]), _span(meta))

    def list_expr(self, meta: Any, children: list[s.Expr]) -> s.ListExpr:
        return s.ListExpr(tuple(children), _span(meta))

    def map_expr(self, meta: Any, children: list[tuple[str, s.Expr]]) -> s.MapExpr:
        return s.MapExpr(tuple(children), _span(meta))

    def entry(self, meta: Any, children: list[Any]) -> tuple[str, s.Expr]:
        key, value = children
        if key.type == "STRING":
            text = _unescape(str(key)[1:-1], _token_span(key))
            return text, value
        return str(key), value

    # -- literals

    def string(self, meta: Any, children: list[Token]) -> s.Literal | s.Interpolation:
        return _string_node(children[0])

    def raw_string(self, meta: Any, children: list[Token]) -> s.Literal:
        return s.Literal(str(children[0])[3:-3], _span(meta))

    def duration(self, meta: Any, children: list[Token]) -> s.Literal:
        value = limits.duration(str(children[0]))
        if isinstance(value, str):
            raise _LiteralError(value, _span(meta))
        return s.Literal(value, _span(meta))

    def decimal(self, meta: Any, children: list[Token]) -> s.Literal:
        return s.Literal(float(children[0]), _span(meta))

    def integer(self, meta: Any, children: list[Token]) -> s.Literal:
        problem = limits.integer_problem(children[0])
        if problem:
            raise _LiteralError(problem, _span(meta))
        return s.Literal(int(children[0]), _span(meta))

    def true(self, meta: Any, children: list[Token]) -> s.Literal:
        return s.Literal(True, _span(meta))

    def false(self, meta: Any, children: list[Token]) -> s.Literal:
        return s.Literal(False, _span(meta))

    def null(self, meta: Any, children: list[Token]) -> s.Literal:
        return s.Literal(None, _span(meta))


_TO_SYNTAX = _ToSyntax()


def _string_node(token: Token) -> s.Literal | s.Interpolation:
    """A quoted string; double-quoted strings may hold ``${expr}`` (``\\${`` stays literal)."""
    raw = str(token)
    span = _token_span(token)
    body = raw[1:-1]
    if raw[0] == "'" or "${" not in body:
        return s.Literal(_unescape(body, span), span)
    parts: list[str | s.Expr] = []
    position = 0
    for match in _INTERPOLATION.finditer(body):
        start = match.start()
        if _escaped(body, start):
            continue
        if start > position:
            parts.append(_unescape(body[position:start], span))
        parts.append(_interpolated_expression(match, token))
        position = match.end()
    if position < len(body):
        parts.append(_unescape(body[position:], span))
    if all(isinstance(p, str) for p in parts):
        return s.Literal("".join(p for p in parts if isinstance(p, str)), span)
    return s.Interpolation(tuple(parts), span)


def _interpolated_expression(match: re.Match[str], token: Token) -> s.Expr:
    # +1 for the opening quote, +2 for "${": the column where the expression text begins.
    column = (token.column or 1) + 1 + match.start(1)
    line = token.line or 1
    inner = match.group(1)
    if not inner.strip():
        span = s.Span(line, column - 2, line, column + 1)
        raise _LiteralError("empty ${} interpolation", span)
    try:
        tree = _parser("expr").parse(inner)
    except UnexpectedInput as exc:
        where = s.Span(line, column + max(0, (exc.column or 1) - 1), line, column + len(inner))
        raise _LiteralError(f"invalid expression in ${{{inner}}}", where) from None
    deep = _too_deep(tree)
    if deep is not None:
        raise _LiteralError(limits.NESTING_MESSAGE, deep.shifted(line, column))
    try:
        node: s.Expr = _TO_SYNTAX.transform(tree)
    except VisitError as exc:
        problem = _cause(exc)
        if isinstance(problem, _LiteralError):
            raise _LiteralError(problem.message, problem.span.shifted(line, column)) from None
        raise
    return shift_spans(node, line, column)


def _escaped(body: str, index: int) -> bool:
    backslashes = 0
    while index > backslashes and body[index - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _unescape(text: str, span: s.Span) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        code = text[i + 1] if i + 1 < len(text) else ""
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 2
        elif code == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2 : i + 6]):
            out.append(chr(int(text[i + 2 : i + 6], 16)))
            i += 6
        else:
            where = s.Span(span.line, span.column + 1 + i, span.line, span.column + 3 + i)
            raise _LiteralError(f"unknown escape sequence '\\{code}' in string", where)
    return "".join(out)


def shift_spans(node: s.Expr, line: int, column: int) -> s.Expr:
    """``node`` with every span moved as if its text started at ``line``:``column``."""
    match node:
        case s.Literal(value, span):
            return s.Literal(value, span.shifted(line, column))
        case s.Var(name, span):
            return s.Var(name, span.shifted(line, column))
        case s.Interpolation(parts, span):
            moved = tuple(p if isinstance(p, str) else shift_spans(p, line, column) for p in parts)
            return s.Interpolation(moved, span.shifted(line, column))
        case s.Member(target, name, safe, span):
            return s.Member(shift_spans(target, line, column), name, safe,
                            span.shifted(line, column))
        case s.Index(target, index, safe, span):
            return s.Index(shift_spans(target, line, column), shift_spans(index, line, column),
                           safe, span.shifted(line, column))
        case s.Unary(op, operand, span):
            return s.Unary(op, shift_spans(operand, line, column), span.shifted(line, column))
        case s.Binary(op, left, right, span):
            return s.Binary(op, shift_spans(left, line, column), shift_spans(right, line, column),
                            span.shifted(line, column))
        case s.Ternary(condition, then, otherwise, span):
            return s.Ternary(shift_spans(condition, line, column), shift_spans(then, line, column),
                             shift_spans(otherwise, line, column), span.shifted(line, column))
        case s.Call(function, args, span):
            return s.Call(function, tuple(shift_spans(a, line, column) for a in args),
                          span.shifted(line, column))
        case s.ListExpr(items, span):
            return s.ListExpr(tuple(shift_spans(i, line, column) for i in items),
                              span.shifted(line, column))
        case s.MapExpr(entries, span):
            return s.MapExpr(tuple((k, shift_spans(v, line, column)) for k, v in entries),
                             span.shifted(line, column))
