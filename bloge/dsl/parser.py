"""Parse DSL text into the syntax tree of :mod:`bloge.dsl.syntax`.

The grammar is ``bloge.lark`` beside this module, parsed by :mod:`bloge.dsl.lalr`. That module
(and lark) is imported on the first parse, not with ``bloge``: running an agent that is already
built parses nothing, and a file an earlier process parsed is read back from the user's cache
(:mod:`bloge.dsl.parsed`).
"""

from __future__ import annotations

from bloge.dsl import syntax as s
from bloge.dsl.parsed import cached_statements, keep_statements
from bloge.dsl.source import SourceText


def parse_document(text: str, *, filename: str = "<string>") -> s.Document:
    """Parse a whole DSL document."""
    statements = cached_statements(text, filename)
    if statements is None:
        from bloge.dsl import lalr

        statements = tuple(lalr.parse(SourceText(text, filename), "document"))
        keep_statements(text, filename, statements)
    return s.Document(statements, filename)


def parse_expression(
    text: str, *, filename: str = "<expression>", line: int = 1, column: int = 1
) -> s.Expr:
    """Parse one expression; spans are reported as if the text began at ``line``:``column``."""
    from bloge.dsl import lalr

    node: s.Expr = lalr.parse(SourceText(text, filename), "expr")
    if (line, column) != (1, 1):
        node = lalr.shift_spans(node, line, column)
    return node
