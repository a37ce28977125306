from __future__ import annotations

import asyncio
import threading

import pytest

from bloge import Operator, OperatorContext, OperatorRegistry, UnknownOperatorError
from bloge.core import BlogeUsageError, OperatorMetadata, operator_metadata


class Upper:
    def execute(self, input: str, ctx: OperatorContext) -> str:
        return input.upper()


class AsyncEcho:
    async def execute(self, input: object, ctx: OperatorContext) -> object:
        return input


def test_builder_registers_operators_by_name() -> None:
    registry = OperatorRegistry.builder().register("upper", Upper()).register("echo", AsyncEcho()).build()
    assert "upper" in registry
    assert registry.names() == ("upper", "echo")
    assert isinstance(registry.get("upper"), Upper)


def test_get_of_unknown_name_suggests_the_closest_registered_name() -> None:
    registry = OperatorRegistry({"KBSearchOperator": Upper()})
    with pytest.raises(UnknownOperatorError) as caught:
        registry.get("KBSearchOperatr")
    assert caught.value.suggestions == ["KBSearchOperator"]
    assert "did you mean 'KBSearchOperator'?" in str(caught.value)


def test_registering_a_name_twice_needs_replace() -> None:
    registry = OperatorRegistry({"op": Upper()})
    with pytest.raises(BlogeUsageError, match="already registered"):
        registry.register("op", AsyncEcho())
    registry.register("op", AsyncEcho(), replace=True)
    assert isinstance(registry.get("op"), AsyncEcho)


def test_an_object_that_is_no_operator_is_rejected_at_registration() -> None:
    with pytest.raises(TypeError, match="execute"):
        OperatorRegistry({"bad": 42})


async def test_sync_async_and_plain_function_operators_are_all_invocable() -> None:
    registry = OperatorRegistry({
        "upper": Upper(),
        "echo": AsyncEcho(),
        "one_arg": lambda input: f"got {input}",
        "two_args": lambda input, ctx: ctx["who"],
    })
    ctx = OperatorContext.root({"who": "ctx"})
    assert await registry.bound("upper").invoke("a", ctx) == "A"
    assert await registry.bound("echo").invoke({"k": 1}, ctx) == {"k": 1}
    assert await registry.bound("one_arg").invoke("x", ctx) == "got x"
    assert await registry.bound("two_args").invoke("x", ctx) == "ctx"


async def test_sync_operators_run_outside_the_event_loop_thread() -> None:
    loop_thread = threading.get_ident()
    registry = OperatorRegistry({"where": lambda input: threading.get_ident()})
    ran_on = await registry.bound("where").invoke(None, OperatorContext.root())
    assert ran_on != loop_thread


def test_the_input_annotation_of_an_operator_is_known() -> None:
    assert OperatorRegistry({"u": Upper()}).bound("u").input_type is str


def test_metadata_comes_from_the_attribute_or_else_the_docstring() -> None:
    class Documented:
        """Looks things up.

        More detail that is not the hint.
        """

        def execute(self, input: object, ctx: OperatorContext) -> object:
            return input

    class Declared(Documented):
        metadata = OperatorMetadata(prompt_hint="hint", usage_example="ex", constraints_description="c")

    assert operator_metadata(Documented()).prompt_hint == "Looks things up."
    assert operator_metadata(Declared()).describe() == "hint\nExample: ex\nConstraints: c"


def test_an_undocumented_operator_class_has_no_hint_not_the_protocols_docstring() -> None:
    # Found by a user's project: a subclass of Operator without a docstring was described
    # to the model as "The operator protocol. ``execute`` may be a coroutine function."
    class Weather(Operator):
        def execute(self, input: object, ctx: OperatorContext) -> object:
            return input

    class Plain:
        def execute(self, input: object, ctx: OperatorContext) -> object:
            return input

    class Base(Operator):
        """Fetches forecasts."""

    class Derived(Base):
        def execute(self, input: object, ctx: OperatorContext) -> object:
            return input

    assert operator_metadata(Weather()).prompt_hint == ""
    assert operator_metadata(Plain()).prompt_hint == ""
    assert operator_metadata(Derived()).prompt_hint == "Fetches forecasts."


def test_bound_invoke_is_awaitable_from_asyncio_run() -> None:
    registry = OperatorRegistry({"upper": Upper()})
    assert asyncio.run(registry.bound("upper").invoke("x", OperatorContext.root())) == "X"
