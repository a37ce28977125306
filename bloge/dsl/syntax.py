"""The syntax tree of a bloge document. Every node keeps its position in the source."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias


@dataclass(frozen=True, slots=True)
class Span:
    """Where a node sits in its source: 1-based lines and columns, end exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int

    @property
    def width(self) -> int:
        """Columns covered on the first line (at least 1)."""
        if self.end_line != self.line:
            return 1
        return max(1, self.end_column - self.column)

    def shifted(self, line: int, column: int) -> Span:
        """This span, measured from (``line``, ``column``) instead of (1, 1)."""
        first_line_shift = column - 1
        return Span(
            self.line + line - 1,
            self.column + (first_line_shift if self.line == 1 else 0),
            self.end_line + line - 1,
            self.end_column + (first_line_shift if self.end_line == 1 else 0),
        )


# ---------------------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True)
class Literal:
    """A constant: string, int, float, bool, null or duration (``datetime.timedelta``)."""

    value: Any
    span: Span


@dataclass(frozen=True, slots=True)
class Interpolation:
    """A string with ``${…}`` parts: literal text and expressions, in order."""

    parts: tuple[str | Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Var:
    name: str
    span: Span


@dataclass(frozen=True, slots=True)
class Member:
    """``target.name``, or ``target?.name`` when ``safe``."""

    target: Expr
    name: str
    safe: bool
    span: Span


@dataclass(frozen=True, slots=True)
class Index:
    """``target[index]``, or ``target?[index]`` when ``safe``."""

    target: Expr
    index: Expr
    safe: bool
    span: Span


@dataclass(frozen=True, slots=True)
class Unary:
    op: str
    operand: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Binary:
    """Arithmetic, comparison, ``in``, and the short-circuit ``&&``, ``||``, ``??``."""

    op: str
    left: Expr
    right: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Ternary:
    condition: Expr
    then: Expr
    otherwise: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Call:
    function: str
    args: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class ListExpr:
    items: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class MapExpr:
    entries: tuple[tuple[str, Expr], ...]
    span: Span


Expr: TypeAlias = (
    Literal | Interpolation | Var | Member | Index | Unary | Binary | Ternary | Call | ListExpr
    | MapExpr
)


# ---------------------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class Binding:
    """``key = value``."""

    key: str
    value: Expr
    span: Span
    key_span: Span


@dataclass(frozen=True, slots=True)
class Block:
    """``keywords… [name] [: [agent] ref] { body }``.

    With two or more header words the last one is the block's ``name`` and the others are its
    ``keywords`` (``stream agent dataAnalyst`` → keywords ``("stream", "agent")``, name
    ``dataAnalyst``); a single word is a keyword (``input { … }``).
    """

    keywords: tuple[str, ...]
    name: str | None
    ref: str | None
    body: tuple[Statement, ...]
    span: Span
    name_span: Span | None
    ref_span: Span | None
    ref_kind: str | None = None
    """What ``ref`` names when a word comes before it: ``"agent"`` for ``tool research :
    agent researcher { … }`` (another agent), ``"a2a"`` for ``tool quote : a2a "<url>" { … }``
    (a remote agent, ``ref`` its URL), ``None`` for an operator."""

    @property
    def agent(self) -> str | None:
        """The agent a ``: agent <id>`` header names (``ref_span`` is the id's), else ``None``."""
        return self.ref if self.ref_kind == "agent" else None

    @property
    def kind(self) -> str:
        return " ".join(self.keywords)


@dataclass(frozen=True, slots=True)
class Edge:
    """``a -> b -> c``: a chain of node names (graph syntax; parsed, not interpreted here)."""

    nodes: tuple[str, ...]
    span: Span


# ---------------------------------------------------------------------------- types


@dataclass(frozen=True, slots=True)
class TypeName:
    """A named type, with type arguments when written ``list<string>``."""

    name: str
    args: tuple[TypeExpr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class TypeLiteral:
    """A literal type: ``"high"``, ``3``, ``true``; only that value fits."""

    value: str | int | float | bool
    span: Span


@dataclass(frozen=True, slots=True)
class TypeObject:
    """``{ name: type, … }``: an object of these fields."""

    fields: tuple[Field, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class TypeUnion:
    """``a | b | …``, optional (``?``, may be absent) when ``optional``."""

    options: tuple[TypeName | TypeLiteral | TypeObject, ...]
    optional: bool
    span: Span


TypeExpr: TypeAlias = TypeUnion


@dataclass(frozen=True, slots=True)
class Field:
    """``name: type`` (a field of an output schema); ``names`` holds every word before the
    colon, so that a compiler can say where one name was expected."""

    names: tuple[str, ...]
    type: TypeExpr
    span: Span
    name_span: Span


Statement: TypeAlias = Binding | Block | Edge | Field


@dataclass(frozen=True, slots=True)
class Document:
    statements: tuple[Statement, ...]
    filename: str
