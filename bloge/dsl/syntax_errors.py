"""Lark's parse failures in words: what was found, what the parser would have accepted."""

from __future__ import annotations

import re
import string

from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from bloge.core.errors import DslSyntaxError
from bloge.core.suggest import did_you_mean
from bloge.dsl import syntax as s
from bloge.dsl.expression.functions import STANDARD_LIBRARY
from bloge.dsl.source import SourceText, unquoted_text

_TERMINAL_NAMES = {
    "NAME": "a name",
    "STRING": "a string",
    "RAW_STRING": 'a """raw string"""',
    "DURATION": "a duration",
    "DECIMAL": "a number",
    "INT": "a number",
    "EQ_OP": "'==' or '!='",
    "REL_OP": "a comparison",
    "ADD_OP": "'+' or '-'",
    "MUL_OP": "'*', '/' or '%'",
    "IN": "'in'",
    "NOT": "'!'",
    "MINUS": "'-'",
    "$END": "the end of the text",
}


def _describe_terminal(name: str, parser: Lark) -> str:
    if name in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[name]
    try:
        pattern = parser.get_terminal(name).pattern
    except KeyError:
        return name
    return f"'{pattern.value}'" if pattern.type == "str" else name.lower()


_EXPRESSION_STARTS = frozenset(
    {"NAME", "STRING", "RAW_STRING", "DURATION", "DECIMAL", "INT", "TRUE", "FALSE", "NULL",
     "LPAR", "LSQB", "LBRACE", "NOT", "MINUS"}
)
#: What may start the type of an output field (``title: string``).
_TYPE_STARTS = frozenset({"NAME", "STRING", "INT", "DECIMAL", "TRUE", "FALSE", "LBRACE"})
_OPERATORS = frozenset(
    {"EQ_OP", "REL_OP", "IN", "ADD_OP", "MUL_OP", "AND", "OR", "COALESCE", "QMARK", "DOT",
     "SAFE_DOT", "LSQB", "SAFE_LSQB"}
)


def _expected(names: set[str] | frozenset[str], parser: Lark) -> str:
    """A readable list of what the parser would have accepted."""
    names = set(names)
    groups: list[str] = []
    if names >= _TYPE_STARTS and not names & (_EXPRESSION_STARTS - _TYPE_STARTS):
        groups.append('a type (string, int, float, bool, list<T>, "literal", { … })')
        names -= _TYPE_STARTS
    if {"NAME", "INT", "STRING"} <= names and len(names & _EXPRESSION_STARTS) >= 5:
        groups.append("an expression")
        names -= _EXPRESSION_STARTS
    operators = names & _OPERATORS
    if len(operators) >= 3:
        groups.append("an operator")
        names -= operators
    described = groups + sorted({_describe_terminal(n, parser) for n in names})
    if len(described) > 6:
        described = [*described[:6], "…"]
    if len(described) <= 1:
        return "".join(described)
    return ", ".join(described[:-1]) + " or " + described[-1]


#: Python's words for the logical operators, and how the DSL writes them.
_WORD_OPERATORS = {"and": "&&", "or": "||", "not": "!"}


def _word_operator(source: SourceText, parser: Lark, line: int,
                   column: int) -> tuple[int, int, str] | None:
    """Where the last ``and``, ``or`` or ``not`` written as an operator up to ``line:column``
    is, on that line or the one before (a parse failure soon after such a word is its doing:
    the word is a name to the DSL, which reads on until something does not fit)."""
    found: tuple[int, int, str] | None = None
    previous = ""
    try:
        for token in parser.lex(source.text):
            at = (token.line or 0, token.column or 0)
            if at > (line, column):
                break
            if token.type == "NAME" and token.value in _WORD_OPERATORS \
                    and previous not in ("DOT", "SAFE_DOT"):
                found = (*at, str(token.value))
            previous = token.type
    except UnexpectedInput:  # text the lexer cannot read: the error says so already
        return None
    return found if found is not None and line - 1 <= found[0] <= line else None


#: What a word like ``gpt-4o`` is made of.
_WORD_CHARS = frozenset(string.ascii_letters + string.digits + "_.-")
#: ``value.method(`` just before a parenthesis.
_METHOD_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)\.([A-Za-z_][A-Za-z0-9_]*)\s*$")


def _unquoted_text(text: str, pos: int) -> tuple[int, str] | None:
    """The word like ``gpt-4o`` that ``pos`` falls inside (after its start), and where it
    starts: text its writer meant as a string."""
    start = end = pos
    while start > 0 and text[start - 1] in _WORD_CHARS:
        start -= 1
    while end < len(text) and text[end] in _WORD_CHARS:
        end += 1
    word = text[start:end]
    return (start, word) if start < pos and unquoted_text(word) else None


def _method_call(text: str, pos: int) -> str | None:
    """What to write instead of ``value.method(`` when the ``(`` at ``pos`` calls one: the
    expressions have functions, which take the value first."""
    found = _METHOD_CALL.search(text, 0, pos)
    if found is None:
        return None
    value, method = found.groups()
    close = did_you_mean(method, STANDARD_LIBRARY, limit=1)
    if close:
        return (f"{value}.{method}(…) calls a method; the expressions have functions, which "
                f"take the value first: write {close[0]}({value}, …)")
    return (f"{value}.{method}(…) calls a method; the expressions have none, only functions "
            f"such as len({value}), lower({value}) and contains({value}, …)")


def _hint(source: SourceText, exc: UnexpectedInput, parser: Lark, line: int,
          column: int) -> tuple[str, s.Span] | None:
    """The message for a failure a common slip explains, and where the slip is: Python's
    ``and``, ``or``, ``not``; unquoted text such as ``gpt-4o``; a method call."""
    if isinstance(exc, UnexpectedToken | UnexpectedEOF) and (
            operator := _word_operator(source, parser, line, column)) is not None:
        at_line, at_column, name = operator
        message = (f"{name!r} is not an operator: write {_WORD_OPERATORS[name]} "
                   "(and, or, not are &&, ||, !)")
        return message, s.Span(at_line, at_column, at_line, at_column + len(name))
    if isinstance(exc, UnexpectedToken):
        pos = exc.token.start_pos
    elif isinstance(exc, UnexpectedCharacters):
        pos = getattr(exc, "pos_in_stream", None)  # lark types it None; it is the offset
    else:
        return None
    if not isinstance(pos, int):
        return None
    if isinstance(exc, UnexpectedToken) and exc.token.type == "LPAR" and (
            instead := _method_call(source.text, pos)) is not None:
        return instead, s.Span(line, column, line, column + 1)
    unquoted = _unquoted_text(source.text, pos)
    if unquoted is None:
        return None
    start, word = unquoted
    column -= pos - start
    message = (f"{word!r} is not a name, a number or an expression: write text in quotes "
               f'("{word}")')
    return message, s.Span(line, column, line, column + len(word))


def syntax_error(source: SourceText, exc: UnexpectedInput, parser: Lark) -> DslSyntaxError:
    """``exc`` as a located ``DslSyntaxError`` saying what was expected."""
    line = exc.line if isinstance(exc.line, int) and exc.line > 0 else 1
    column = exc.column if isinstance(exc.column, int) and exc.column > 0 else 1
    hinted = _hint(source, exc, parser, line, column)
    if hinted is not None:
        return source.error(DslSyntaxError, *hinted)
    match exc:
        case UnexpectedToken(token=token, expected=expected):
            if exc.interactive_parser is not None:
                accepted: set[str] = exc.interactive_parser.accepts()  # type: ignore[no-untyped-call]  # lark leaves it unannotated
                expected = accepted or expected
            found = "end of the text" if token.type == "$END" else f"{str(token)!r}"
            if token.type == "$END":
                line, column = _end_position(source)
            message = _unexpected(found, _expected(expected, parser))
            if token.type == "EQUAL" and "EQ_OP" in expected:
                message += " (to compare, write ==)"
            width = len(str(token)) if token.type != "$END" else 1
        case UnexpectedCharacters(char=char, allowed=allowed):
            message = f"unexpected character {char!r}"
            width = 1
            at = getattr(exc, "pos_in_stream", None)  # lark types it None; it is the offset
            word = _number_word(source.text, at) if isinstance(at, int) else None
            if isinstance(at, int) and word is not None:
                start, text = word
                column -= at - start
                message = (f"{text!r} is not a number or a duration; write a number (3, 2.5, "
                           "1.5e3) or a duration (90s, 30m, 1h)")
                width = len(text)
            elif char == '"':
                message = "unterminated string"
            elif char == "#":
                message = "'#' does not start a comment: write // … (or /* … */)"
            elif not char.isascii() and char.isalnum():  # ä, é, 日: a name of other letters
                message += ("; a name is ASCII letters, digits and _ (other text goes in a "
                            "string)")
            elif allowed:
                message += f"; expected {_expected(allowed, parser)}"
        case UnexpectedEOF(expected=expected):
            line, column = _end_position(source)
            message = _unexpected("end of the text", _expected(set(expected), parser))
            width = 1
        case _:
            message, width = "syntax error", 1
    span = s.Span(line, column, line, column + width)
    return source.error(DslSyntaxError, message, span)


def _unexpected(found: str, expected: str) -> str:
    # lark knows of nothing expected at some failures (after a whole expression, say).
    return f"unexpected {found}; expected {expected}" if expected else f"unexpected {found}"


def _number_word(text: str, pos: int) -> tuple[int, str] | None:
    """The number-like word the lexer stopped in at ``pos`` (``1e3``, ``1h30m``, ``0.5x``),
    with where it starts, or ``None`` when ``pos`` is not in one."""
    if not 0 <= pos < len(text) or not text[pos].isdigit():
        return None
    start = pos
    while start > 0 and (text[start - 1].isdigit() or text[start - 1] == "."):
        start -= 1
    if not text[start].isdigit() or (start > 0 and (text[start - 1].isalpha()
                                                    or text[start - 1] == "_")):
        return None
    found = _NUMBER_WORD.match(text, start)
    return (start, found.group()) if found else None


_NUMBER_WORD = re.compile(r"[0-9][0-9A-Za-z_.]*")


def _end_position(source: SourceText) -> tuple[int, int]:
    lines = source.text.splitlines() or [""]
    return len(lines), len(lines[-1]) + 1
