"""Expressions reach data only: mapping keys, list items, dataclass and pydantic fields —
never methods, properties, dunders, module globals or the insides of other objects, whoever
writes the path (a DSL author, or a model through ``ctx[tool_args.key]``)."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import pydantic
import pytest

from bloge import DslSyntaxError, Expression, ExpressionError, OperatorContext
from bloge.agent.functions import agent_functions

SECRET = "sk-live-0123456789"


class _Tripwire:
    """Counts every read of its property and every call of its ``__str__``."""

    touched = 0

    def greet(self) -> str:
        return "hello"

    @property
    def token(self) -> str:
        _Tripwire.touched += 1
        return SECRET

    def __str__(self) -> str:
        _Tripwire.touched += 1
        return SECRET

    def startswith(self, prefix: str) -> bool:
        _Tripwire.touched += 1
        return True


@dataclasses.dataclass
class _User:
    name: str
    tripwire: Any = None

    def greet(self) -> str:
        return "hello"

    @property
    def token(self) -> str:
        _Tripwire.touched += 1
        return SECRET


class _Account(pydantic.BaseModel):
    owner: str

    @property
    def token(self) -> str:
        _Tripwire.touched += 1
        return SECRET

    @pydantic.computed_field
    @property
    def balance(self) -> int:
        _Tripwire.touched += 1
        return 100


@pytest.fixture(autouse=True)
def _reset_tripwire() -> None:
    _Tripwire.touched = 0


@pytest.fixture
def ctx() -> OperatorContext:
    return OperatorContext.root({
        "user": _User("ada", _Tripwire()),
        "account": _Account(owner="ada"),
        "object": _Tripwire(),
        "os": os,
        "api_key": SECRET,
        "tags": ["a", "b"],
    })


def evaluate(text: str, ctx: OperatorContext, **tool_args: Any) -> Any:
    return Expression.compile(text).evaluate({"ctx": ctx, "tool_args": tool_args})


@pytest.mark.parametrize("path", [
    "user.greet.__globals__",
    "user.greet.__globals__.os.environ.HOME",
    "user.__class__.__mro__",
    "user.__dataclass_fields__",
    "user.token",
    "account.token",
    "account.balance",
    "account.__dict__",
    "object.token",
    "os.environ",
    "os.path",
])
def test_a_path_the_model_chooses_reaches_no_attribute(path: str, ctx: OperatorContext) -> None:
    assert evaluate("ctx[tool_args.key]", ctx, key=path) is None
    assert _Tripwire.touched == 0


@pytest.mark.parametrize("text", [
    "ctx.user.greet",
    "ctx.user.token",
    "ctx.user.__class__",
    "ctx.user.__class__.__mro__",
    "ctx.user['__class__']",
    "ctx.account.token",
    "ctx.account.balance",
    "ctx.account['__dict__']",
])
def test_members_of_records_are_their_fields_only(text: str, ctx: OperatorContext) -> None:
    assert evaluate(text, ctx) is None
    assert _Tripwire.touched == 0


@pytest.mark.parametrize("text", [
    "ctx.object.token",
    "ctx.object.greet",
    "ctx.object['token']",
    "ctx.os.environ",
    "ctx.user.tripwire.token",
    "ctx.tags.__class__",
])
def test_objects_that_are_not_data_have_no_members(text: str, ctx: OperatorContext) -> None:
    with pytest.raises(ExpressionError, match=r"cannot (read|index)"):
        evaluate(text, ctx)
    assert _Tripwire.touched == 0


def test_data_is_reachable_by_member_index_and_dotted_key(ctx: OperatorContext) -> None:
    assert evaluate("ctx.user.name", ctx) == "ada"
    assert evaluate("ctx.account.owner", ctx) == "ada"
    assert evaluate("ctx.tags[1]", ctx) == "b"
    assert evaluate('ctx["user.name"]', ctx) == "ada"
    assert evaluate("ctx[tool_args.key]", ctx, key="tags.0") == "a"


def test_methods_cannot_be_called() -> None:
    with pytest.raises(DslSyntaxError):
        Expression.compile('name.startswith("a")')
    with pytest.raises(DslSyntaxError):
        Expression.compile("ctx.user.greet()")


def test_string_functions_take_strings_not_objects_with_the_same_methods(
    ctx: OperatorContext,
) -> None:
    with pytest.raises(ExpressionError, match="startsWith\\(\\) needs a string"):
        evaluate('startsWith(ctx.object, "a")', ctx)
    assert _Tripwire.touched == 0


def test_tool_call_reads_the_name_field_of_records_only(ctx: OperatorContext) -> None:
    class Call:
        @property
        def name(self) -> str:
            _Tripwire.touched += 1
            return "search"

    expression = Expression.compile('tool_call("search")', functions=agent_functions())
    assert expression.evaluate({"tool_calls": [Call()]}) is False
    assert _Tripwire.touched == 0


def test_a_context_interpolates_as_a_placeholder(ctx: OperatorContext) -> None:
    assert evaluate('"${ctx}"', ctx) == "<OperatorContext>"
    assert evaluate("string(ctx)", ctx) == "<OperatorContext>"
    assert evaluate('"${[ctx]}"', ctx) == '["<OperatorContext>"]'
    assert SECRET not in evaluate("string({c: ctx})", ctx)


def test_objects_that_are_not_data_interpolate_as_their_type_name(ctx: OperatorContext) -> None:
    assert evaluate('"${ctx.object}"', ctx) == "<_Tripwire>"
    assert evaluate('"${ctx.os}"', ctx) == "<module>"
    assert evaluate('ctx.object + "!"', ctx) == "<_Tripwire>!"
    assert _Tripwire.touched == 0


def test_records_interpolate_as_json_of_their_fields(ctx: OperatorContext) -> None:
    assert evaluate('"${ctx.user}"', ctx) == '{"name":"ada","tripwire":"<_Tripwire>"}'
    assert evaluate('"${ctx.account}"', ctx) == '{"owner":"ada"}'
    assert _Tripwire.touched == 0


def test_the_values_of_a_context_cannot_be_listed_whole(ctx: OperatorContext) -> None:
    with pytest.raises(ExpressionError, match="values\\(\\) cannot list a context"):
        evaluate("values(ctx)", ctx)
    assert "api_key" in evaluate("keys(ctx)", ctx)


def test_deeply_nested_data_is_an_expression_error_when_shown() -> None:
    deep: list[Any] = []
    for _ in range(5000):
        deep = [deep]
    expression = Expression.compile('"${x}"')
    with pytest.raises(ExpressionError, match="nested deeper than"):
        expression.evaluate({"x": deep})


def test_a_cycle_is_an_expression_error_when_shown() -> None:
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    with pytest.raises(ExpressionError):
        Expression.compile("string(x)").evaluate({"x": cycle})
