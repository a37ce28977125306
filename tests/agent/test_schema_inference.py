from __future__ import annotations

import dataclasses
import enum
from typing import Literal, TypedDict

import pydantic

from bloge import AgentDslCompiler, OperatorContext, OperatorMetadata, OperatorRegistry


def parameters(input_block: str, registry: OperatorRegistry | None = None, ref: str = "Op") -> dict:
    source = f'agent a {{ model = "m"\n tool t : {ref} {{ input {{ {input_block} }} }} }}'
    return dict(AgentDslCompiler(registry).compile(source).tool("t").tool_definition.parameters)


def test_only_tool_args_paths_reach_the_schema() -> None:
    assert parameters("query = tool_args.query\n locale = ctx.user.locale\n limit = 5") == {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    }


def test_nested_paths_make_objects_with_required_fields() -> None:
    assert parameters("city = tool_args.address.city\n zip = tool_args.address.zip\n id = tool_args.id") == {
        "type": "object",
        "properties": {
            "address": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
                "required": ["city", "zip"],
            },
            "id": {"type": "string"},
        },
        "required": ["address", "id"],
    }


def test_an_indexed_path_makes_an_array_of_strings() -> None:
    assert parameters("first = tool_args.items[0]\n last = tool_args.items[-1]") == {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "string"}}},
        "required": ["items"],
    }


def test_a_path_through_an_array_item_makes_an_array_of_objects() -> None:
    schema = parameters('sku = tool_args.lines[0].sku\n qty = tool_args.lines[0]["qty"] ?? 1')
    assert schema["properties"] == {"lines": {"type": "array", "items": {
        "type": "object",
        "properties": {"sku": {"type": "string"}, "qty": {"type": "string"}},
        "required": ["sku"],
    }}}
    assert schema["required"] == ["lines"]


def test_an_array_wins_over_a_plain_path_to_the_same_argument() -> None:
    schema = parameters("all = tool_args.items\n first = tool_args.items[0]")
    assert schema["properties"]["items"] == {"type": "array", "items": {"type": "string"}}


def test_paths_inside_expressions_count_and_a_default_makes_them_optional() -> None:
    schema = parameters('q = lower(tool_args.query)\n n = tool_args.limit ?? 10\n s = "${tool_args.sort}"')
    assert schema["required"] == ["query", "sort"]
    assert set(schema["properties"]) == {"query", "limit", "sort"}


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class SearchInput:
    query: str
    limit: int
    exact: bool
    score: float
    tags: list[str]
    color: Color
    mode: Literal["fast", "deep"] = "fast"


class TypedSearch:
    def execute(self, input: SearchInput, ctx: OperatorContext) -> object:
        return input


def test_typed_operator_inputs_refine_property_types() -> None:
    registry = OperatorRegistry({"Search": TypedSearch()})
    block = "\n ".join(f"{f} = tool_args.{f}" for f in
                      ("query", "limit", "exact", "score", "tags", "color", "mode"))
    schema = parameters(block, registry, ref="Search")
    assert schema["properties"] == {
        "query": {"type": "string"},
        "limit": {"type": "integer"},
        "exact": {"type": "boolean"},
        "score": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "color": {"enum": ["red", "blue"]},
        "mode": {"type": "string", "enum": ["fast", "deep"]},
    }


class TicketInput(TypedDict):
    title: str
    priority: int


class TicketModel(pydantic.BaseModel):
    title: str
    priority: int = 3


def test_a_tool_without_input_block_takes_its_schema_from_the_operator_type() -> None:
    def create_ticket(input: TicketInput) -> object:
        return input

    async def create_model_ticket(input: TicketModel, ctx: OperatorContext) -> object:
        return input

    registry = OperatorRegistry({"Dict": create_ticket, "Model": create_model_ticket})
    source = 'agent a { model = "m" tool d : Dict {} tool m : Model {} }'
    agent = AgentDslCompiler(registry).compile(source)
    assert agent.tool("d").tool_definition.parameters == {
        "type": "object",
        "properties": {"title": {"type": "string"}, "priority": {"type": "integer"}},
        "required": ["title", "priority"],
    }
    assert agent.tool("m").tool_definition.parameters["required"] == ["title"]


def test_an_empty_description_falls_back_to_the_operator_metadata() -> None:
    class Escalate:
        metadata = OperatorMetadata(
            prompt_hint="Hand the conversation to a person.",
            usage_example='{"reason": "refund dispute"}',
            constraints_description="Use only when the customer asks.",
        )

        def execute(self, input: object, ctx: OperatorContext) -> object:
            return input

    registry = OperatorRegistry({"Escalate": Escalate()})
    agent = AgentDslCompiler(registry).compile('agent a { model = "m" tool e : Escalate {} }')
    assert agent.tool("e").tool_definition.description == (
        "Hand the conversation to a person.\n"
        'Example: {"reason": "refund dispute"}\n'
        "Constraints: Use only when the customer asks."
    )


class _Declared:
    """Looks things up."""

    metadata = OperatorMetadata(prompt_hint="Looks things up", input_schema={
        "type": "object",
        "properties": {"q": {"type": "string", "maxLength": 80}, "n": {"type": "integer"}},
        "required": ["q"],
    })

    def execute(self, input: dict, ctx: OperatorContext) -> dict:
        return input


def test_a_declared_input_schema_types_the_properties_passed_through() -> None:
    registry = OperatorRegistry({"Op": _Declared()})

    assert parameters("q = tool_args.q\n n = tool_args.count", registry) == {
        "type": "object",
        "properties": {"q": {"type": "string", "maxLength": 80}, "count": {"type": "integer"}},
        "required": ["q", "count"],
    }


def test_a_declared_input_schema_is_the_whole_schema_of_a_tool_without_input() -> None:
    registry = OperatorRegistry({"Op": _Declared()})
    source = 'agent a { model = "m"\n tool t : Op {} }'

    schema = AgentDslCompiler(registry).compile(source).tool("t").tool_definition.parameters
    assert schema == _Declared.metadata.input_schema
