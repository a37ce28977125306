"""The facade's tools: the chapter's ``Tool`` protocol, and plain typed functions with a real
per-parameter JSON schema."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

import pytest
from pydantic import BaseModel, Field

from bloge import Agent, BlogeUsageError, Tool
from bloge.llm import LlmMessage, ScriptedProvider, tool_call_response


class AddTool:
    """The chapter's tool shape, with no schema."""

    name = "add"
    description = "add two ints"

    def __init__(self) -> None:
        self.received: list[str] = []

    def call(self, args: str) -> str:
        self.received.append(args)
        return "5"


class TypedAddTool(AddTool):
    parameters: ClassVar[Mapping[str, Any]] = {
        "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"]}


class AsyncTool:
    name = "later"
    description = "answers later"

    async def call(self, args: str) -> str:
        return f"later: {args}"


@dataclasses.dataclass
class Address:
    city: str
    zip_code: str


class LineItem(BaseModel):
    sku: str
    quantity: int = 1


def ship(address: Address, items: list[LineItem], express: bool = False) -> str:  # noqa: FBT002 -- a tool's parameters are the model's, by name
    """Ship items to an address.

    The second paragraph is for people, not for the model.
    """
    count = sum(item.quantity for item in items)
    return f"{count} to {address.city}{' (express)' if express else ''}"


def search(query: Annotated[str, Field(description="what to look for")],
           limit: int = 5, sort: Literal["new", "old"] = "new") -> list[str]:
    """Search the archive."""
    return [f"{query}:{limit}:{sort}"]


def last_tool_message(model: ScriptedProvider, request: int = 1) -> LlmMessage:
    return model.requests[request].messages[-1]


def run_tool(tool: object, arguments: str) -> tuple[ScriptedProvider, LlmMessage]:
    name = getattr(tool, "name", None) or getattr(tool, "__name__", "")
    model = ScriptedProvider(tool_call_response(name, arguments), "done")
    Agent(model, [tool]).run("go")
    return model, last_tool_message(model)


def schema_seen(tool: object) -> Mapping[str, Any]:
    model = ScriptedProvider("hi")
    Agent(model, [tool]).run("hello")
    return model.requests[0].tools[0].parameters


# -- the chapter's Tool


def test_a_chapter_tool_satisfies_the_tool_protocol() -> None:
    assert isinstance(AddTool(), Tool)


def test_a_tool_is_called_with_the_json_text_of_the_models_arguments() -> None:
    tool = AddTool()
    _, message = run_tool(tool, '{ "a": 2, "b": 3 }')
    assert tool.received == ['{"a":2,"b":3}']
    assert message.content == "5"


def test_a_tool_without_parameters_is_shown_as_any_object_as_in_the_chapter() -> None:
    assert schema_seen(AddTool()) == {"type": "object"}


def test_a_tools_parameters_are_shown_to_the_model_and_checked_before_the_call() -> None:
    tool = TypedAddTool()
    assert schema_seen(tool) == TypedAddTool.parameters
    _, message = run_tool(tool, '{"a": 2}')
    assert tool.received == []
    assert message.is_error
    assert message.content == "Error: invalid arguments for tool 'add': missing required argument 'b'"


def test_an_async_tool_call_is_awaited() -> None:
    _, message = run_tool(AsyncTool(), '{"x": 1}')
    assert message.content == 'later: {"x":1}'


def test_a_sync_tool_call_runs_on_a_worker_thread() -> None:
    class Where:
        name = "where"
        description = "which thread"

        def call(self, args: str) -> str:
            return threading.current_thread().name

    _, message = run_tool(Where(), "{}")
    assert message.content.startswith("bloge-worker")


def test_a_failing_tool_feeds_its_error_back_to_the_model() -> None:
    class Broken:
        name = "broken"
        description = "always fails"

        def call(self, args: str) -> str:
            raise ValueError("no such account")

    _, message = run_tool(Broken(), "{}")
    assert message.is_error
    assert message.content == "Error: tool 'broken' failed: ValueError: no such account"


def test_tool_parameters_must_be_an_object_schema() -> None:
    class Listy(AddTool):
        parameters: ClassVar[Mapping[str, Any]] = {"type": "array"}

    with pytest.raises(BlogeUsageError, match="parameters must be the JSON schema of an object"):
        Agent(ScriptedProvider(), [Listy()])


# -- plain typed functions


def test_a_function_becomes_a_tool_with_a_schema_from_its_signature() -> None:
    assert schema_seen(ship) == {
        "type": "object",
        "properties": {
            "address": {"$ref": "#/$defs/Address"},
            "items": {"type": "array", "items": {"$ref": "#/$defs/LineItem"}},
            "express": {"type": "boolean", "default": False},
        },
        "required": ["address", "items"],
        "additionalProperties": False,
        "$defs": {
            "Address": {"type": "object", "title": "Address", "required": ["city", "zip_code"],
                        "properties": {"city": {"type": "string"},
                                       "zip_code": {"type": "string"}},
                        "additionalProperties": False},
            "LineItem": {"type": "object", "title": "LineItem", "required": ["sku"],
                         "properties": {"sku": {"type": "string"},
                                        "quantity": {"type": "integer", "default": 1}}},
        },
    }


def test_annotated_descriptions_defaults_and_choices_reach_the_schema() -> None:
    assert schema_seen(search)["properties"] == {
        "query": {"type": "string", "description": "what to look for"},
        "limit": {"type": "integer", "default": 5},
        "sort": {"enum": ["new", "old"], "type": "string", "default": "new"},
    }


def test_a_function_tool_is_described_by_its_docstrings_first_paragraph() -> None:
    model = ScriptedProvider("hi")
    Agent(model, [ship]).run("hello")
    assert (model.requests[0].tools[0].name, model.requests[0].tools[0].description) == (
        "ship", "Ship items to an address.")


def test_a_function_is_called_with_validated_keyword_arguments() -> None:
    _, message = run_tool(ship, '{"address": {"city": "Lyon", "zip_code": "69001"}, '
                                '"items": [{"sku": "A", "quantity": 2}, {"sku": "B"}]}')
    assert message.content == "3 to Lyon"


def test_a_function_tools_defaults_apply_when_the_model_leaves_them_out() -> None:
    _, message = run_tool(search, '{"query": "tea"}')
    assert message.content == '["tea:5:new"]'


def test_arguments_that_fail_validation_are_fed_back_as_a_tool_error() -> None:
    _, message = run_tool(ship, '{"address": {"city": "Lyon"}, "items": [{"quantity": 2}], '
                                '"gift": true}')
    assert message.is_error
    assert message.content == (
        "Error: invalid arguments for tool 'ship': "
        "argument 'address.zip_code': Field required; "
        "argument 'items[0].sku': Field required; "
        "argument 'gift': Extra inputs are not permitted")


def test_an_async_function_tool_is_awaited() -> None:
    async def double(n: int) -> int:
        """Double a number."""
        return 2 * n

    _, message = run_tool(double, '{"n": 21}')
    assert message.content == "42"


def test_a_function_tool_that_raises_feeds_its_error_back() -> None:
    def divide(a: int, b: int) -> float:
        """Divide a by b."""
        return a / b

    _, message = run_tool(divide, '{"a": 1, "b": 0}')
    assert message.content == "Error: tool 'divide' failed: ZeroDivisionError: division by zero"


def test_an_untyped_parameter_takes_any_json_value() -> None:
    def keep(value):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN202 -- the untyped function under test
        """Keep a value."""
        return value

    assert schema_seen(keep)["properties"] == {"value": {}}
    _, message = run_tool(keep, '{"value": [1, "two"]}')
    assert message.content == '[1,"two"]'


# -- mistakes


def test_a_function_with_var_args_is_a_usage_error() -> None:
    def total(*numbers: int) -> int:
        return sum(numbers)

    with pytest.raises(BlogeUsageError, match=r"tool 'total': parameter \*numbers cannot be sent "
                                              "by a model"):
        Agent(ScriptedProvider(), [total])


def test_a_parameter_type_with_no_json_schema_is_a_usage_error() -> None:
    def check(lock: threading.Lock) -> None:
        """Check a lock."""

    with pytest.raises(BlogeUsageError, match="tool 'check': its parameters have no JSON schema"):
        Agent(ScriptedProvider(), [check])


def test_a_lambda_is_a_usage_error_that_asks_for_a_def() -> None:
    with pytest.raises(BlogeUsageError, match="use a def, or a Tool with a name"):
        Agent(ScriptedProvider(), [lambda x: x])


def test_a_tool_name_providers_would_reject_is_a_usage_error() -> None:
    class Spaced(AddTool):
        name = "add numbers"

    with pytest.raises(BlogeUsageError, match="needs a name of 1 to 64 letters, digits, '_' or "
                                              "'-', got 'add numbers'"):
        Agent(ScriptedProvider(), [Spaced()])


def test_two_tools_with_one_name_are_a_usage_error() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    with pytest.raises(BlogeUsageError, match="agent 'agent' has two tools named 'add'"):
        Agent(ScriptedProvider(), [AddTool(), add])


def test_a_tool_named_as_the_final_answer_tool_is_a_usage_error() -> None:
    def final_result(status: str) -> str:
        return status

    with pytest.raises(BlogeUsageError, match="tool name 'final_result' is reserved for the "
                                              "final-answer tool"):
        Agent(ScriptedProvider(), [final_result])


def test_something_that_is_no_tool_is_a_usage_error() -> None:
    with pytest.raises(BlogeUsageError, match="an Agent's tool must be a Tool"):
        Agent(ScriptedProvider(), ["add"])  # type: ignore[list-item]  # the mistake under test


def test_a_single_tool_instead_of_a_list_is_a_usage_error() -> None:
    with pytest.raises(BlogeUsageError, match=r"an Agent's tools are a list: Agent\(llm, \[<function"):
        Agent(ScriptedProvider(), ship)  # type: ignore[arg-type]  # the mistake under test


def test_a_tool_class_instead_of_an_instance_is_a_usage_error() -> None:
    with pytest.raises(BlogeUsageError, match=r"pass AddTool\(\), not the class AddTool"):
        Agent(ScriptedProvider(), [AddTool])
