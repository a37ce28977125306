"""The limits of a DSL text: how deeply it may nest, how long its literals may be.

Everything that walks a syntax tree — building it, compiling an expression, evaluating one,
inferring a tool schema — recurses, so a text may nest at most :data:`MAX_NESTING` levels.
The parser measures the nesting of lark's tree without recursion before anything walks it,
and reads number and duration literals through the checks below, so that a text past a limit
is a located ``DslSyntaxError`` instead of Python's ``RecursionError``, ``ValueError`` or
``OverflowError``.
"""

from __future__ import annotations

import contextlib
import datetime as dt

from lark import Token, Tree

MAX_NESTING = 100
"""How many levels a text may nest; each block, bracket, operator, call, index or member
step is one level (parentheses are none)."""
MAX_INTEGER_DIGITS = 4300
"""The longest integer literal (Python's own default limit for reading an ``int``)."""
NESTING_MESSAGE = f"nested deeper than {MAX_NESTING} levels"

_DURATION_UNITS = {"ms": "milliseconds", "s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
_DURATION_DIGITS = 20  # past this every unit overflows timedelta: no need to read the number


def too_deep(tree: Tree[Token]) -> tuple[Tree[Token], Tree[Token]] | None:
    """The first node of ``tree`` past :data:`MAX_NESTING` levels and its parent, or ``None``."""
    stack: list[tuple[Tree[Token], int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        for child in node.children:
            if isinstance(child, Tree):
                if depth >= MAX_NESTING:
                    return child, node
                stack.append((child, depth + 1))
    return None


def integer_problem(digits: str) -> str | None:
    """Why the literal ``digits`` cannot be read as an ``int``, or ``None``."""
    if len(digits) > MAX_INTEGER_DIGITS:
        return (f"number literal has {len(digits)} digits; at most {MAX_INTEGER_DIGITS} "
                "are allowed")
    return None


def duration(text: str) -> dt.timedelta | str:
    """The duration literal ``text`` (``30s``, ``100ms``), or why it cannot be one."""
    number = text.rstrip("mshd")
    unit = _DURATION_UNITS[text[len(number):]]
    if len(number) <= _DURATION_DIGITS:
        with contextlib.suppress(OverflowError):
            return dt.timedelta(**{unit: int(number)})
    shown = text if len(text) <= 40 else f"{text[:20]}…{text[-8:]}"
    return f"duration {shown} is too long; the longest is {dt.timedelta.max.days} days"
