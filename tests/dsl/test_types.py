"""The type syntax of output fields: parsed into syntax nodes that keep their positions, and
beside the rest of the grammar without changing it."""

from __future__ import annotations

import pytest

from bloge import DslSyntaxError
from bloge.dsl import syntax as s
from bloge.dsl.parser import parse_document

SOURCE = """output {
  title: string
  priority: "low" | "high", tags: list<string>?
  address: { zip: int? }
}"""


def fields() -> tuple[s.Statement, ...]:
    block = parse_document(SOURCE).statements[0]
    assert isinstance(block, s.Block)
    return block.body


def test_a_field_keeps_its_name_type_and_position() -> None:
    title = fields()[0]
    assert isinstance(title, s.Field)
    assert title.names == ("title",)
    assert title.name_span == s.Span(2, 3, 2, 8)
    assert title.type == s.TypeUnion((s.TypeName("string", (), s.Span(2, 10, 2, 16)),),
                                     optional=False, span=s.Span(2, 10, 2, 16))


def test_literal_unions_lists_optionals_and_objects_parse() -> None:
    _, priority, tags, address = fields()
    assert isinstance(priority, s.Field)
    assert [o.value for o in priority.type.options] == ["low", "high"]  # type: ignore[union-attr]  # literals here
    assert isinstance(tags, s.Field)
    assert tags.type.optional
    (listed,) = tags.type.options
    assert isinstance(listed, s.TypeName)
    assert listed.name == "list"
    assert listed.args[0].options[0] == s.TypeName("string", (), s.Span(3, 40, 3, 46))
    assert isinstance(address, s.Field)
    (nested,) = address.type.options
    assert isinstance(nested, s.TypeObject)
    assert nested.fields[0].names == ("zip",)


def test_blocks_with_references_still_parse_as_before() -> None:
    block = parse_document("tool lookup : Search.Op { q = 1 }").statements[0]
    assert isinstance(block, s.Block)
    assert (block.keywords, block.name, block.ref) == (("tool",), "lookup", "Search.Op")


def test_a_field_without_a_type_is_a_located_syntax_error() -> None:
    with pytest.raises(DslSyntaxError, match=r"<string>:1:17: unexpected .}.; expected a type "):
        parse_document("output { title: }")
