from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import os
from collections.abc import Mapping
from typing import Any

import pytest

from bloge import Graph, JsonCodec, Node, OperatorContext, OperatorRegistry
from bloge.core import BlogeUsageError
from bloge.core.codec import MAX_DEPTH


def test_dotted_lookups_walk_nested_values() -> None:
    ctx = OperatorContext.root({"user": {"locale": "de-DE", "profile": {"tier": "gold"}}})
    assert ctx.get("user.locale") == "de-DE"
    assert ctx.get("user.profile.tier") == "gold"
    assert ctx.get("user.missing.deeper", "fallback") == "fallback"


def test_a_child_sees_its_own_values_first_then_its_parents() -> None:
    root = OperatorContext.root({"a": 1, "b": 2}, graph_name="g")
    child = root.child({"b": 20}, node_id="n1")
    assert (child["a"], child["b"]) == (1, 20)
    assert dict(child) == {"a": 1, "b": 20}
    assert child.execution_id == root.execution_id
    assert (child.graph_name, child.node_id) == ("g", "n1")


class _Add:
    async def execute(self, input: Mapping[str, Any], ctx: OperatorContext) -> int:
        return int(input["a"]) + int(input["b"])


class _Const:
    def __init__(self, value: object) -> None:
        self.value = value

    def evaluate(self, scope: Mapping[str, Any]) -> object:
        return scope["args"][self.value] if isinstance(self.value, str) else self.value


async def test_a_one_node_graph_runs_its_operator_and_hands_back_the_result_node() -> None:
    graph = Graph("tool:add", (Node("add", "adder", {"a": _Const("x"), "b": _Const(2)}),))
    outputs = await graph.run(
        OperatorRegistry({"adder": _Add()}), None, OperatorContext.root(), scope={"args": {"x": 40}}
    )
    assert outputs == {"add": 42}


async def test_nodes_without_bindings_receive_the_previous_output() -> None:
    graph = Graph("chain", (Node("one", "inc"), Node("two", "inc")))
    outputs = await graph.run(OperatorRegistry({"inc": lambda n: n + 1}), 1, OperatorContext.root())
    assert outputs == {"one": 2, "two": 3}


def test_graphs_need_nodes_with_unique_ids() -> None:
    with pytest.raises(BlogeUsageError, match="no nodes"):
        Graph("empty", ())
    with pytest.raises(BlogeUsageError, match="repeats node ids"):
        Graph("dup", (Node("a", "x"), Node("a", "y")))


class _Tier(enum.Enum):
    GOLD = "gold"


@dataclasses.dataclass
class _Ticket:
    id: str
    opened: dt.date
    tier: _Tier


def test_the_default_codec_writes_compact_json_of_records() -> None:
    codec = JsonCodec()
    ticket = _Ticket("TCK-1", dt.date(2026, 1, 2), _Tier.GOLD)
    assert codec.encode({"ticket": ticket, "n": None, "ü": (1, 2)}) == (
        '{"ticket":{"id":"TCK-1","opened":"2026-01-02","tier":"gold"},"n":null,"ü":[1,2]}'
    )
    assert codec.decode('{"a": [1, 2.5]}') == {"a": [1, 2.5]}


def test_the_codec_refuses_values_without_a_json_form() -> None:
    with pytest.raises(TypeError, match="no JSON form"):
        JsonCodec().encode(object())


@pytest.mark.parametrize("text", ['{"a": NaN}', "[Infinity]", b'{"a": -Infinity}'])
def test_the_codec_reads_only_json_nan_and_infinities_are_not(text: str | bytes) -> None:
    with pytest.raises(ValueError, match="is not a JSON number"):
        JsonCodec().decode(text)


def test_the_codec_refuses_to_write_nan_and_lenient_encoding_marks_it() -> None:
    with pytest.raises(ValueError, match="not JSON compliant"):
        JsonCodec().encode(float("nan"))
    assert json.loads(JsonCodec().encode_lenient({"x": [1.5, float("-inf")]})) == {
        "x": [1.5, {"$unserializable": "float", "str": "-inf"}]}


class _Handle:
    def __str__(self) -> str:
        return "handle #7"


def test_lenient_encoding_marks_only_the_parts_without_a_json_form() -> None:
    ticket = _Ticket("TCK-1", dt.date(2026, 1, 2), _Tier.GOLD)
    assert json.loads(JsonCodec().encode_lenient({"ticket": ticket, "handles": [_Handle()]})) == {
        "ticket": {"id": "TCK-1", "opened": "2026-01-02", "tier": "gold"},
        "handles": [{"$unserializable": "_Handle", "str": "handle #7"}],
    }


def test_lenient_encoding_marks_a_cycle_where_it_closes() -> None:
    looped: list[Any] = [1]
    looped.append(looped)
    encoded = json.loads(JsonCodec().encode_lenient(looped))
    assert encoded[0] == 1
    assert encoded[1]["$unserializable"] == "list"


def test_lenient_encoding_writes_keys_json_cannot_take_as_text() -> None:
    assert JsonCodec().encode_lenient({(1, 2): "pair", "x": object}) == (
        '{"(1, 2)":"pair","x":{"$unserializable":"type","str":"<class \'object\'>"}}')


def test_lenient_encoding_cuts_nesting_past_its_depth_with_a_marker() -> None:
    deep: list[Any] = []
    for _ in range(5000):
        deep = [deep]
    encoded = json.loads(JsonCodec().encode_lenient(deep))
    for _ in range(MAX_DEPTH):
        encoded = encoded[0]
    assert encoded["$unserializable"] == "list"


def test_the_marker_text_is_cut_at_200_characters() -> None:
    marker = json.loads(JsonCodec().encode_lenient(_Long()))
    assert len(marker["str"]) == 200
    assert marker["str"].endswith("…")


class _Long:
    def __str__(self) -> str:
        return "x" * 1000


def test_a_child_of_an_empty_context_keeps_its_execution_and_graph() -> None:
    root = OperatorContext.root(execution_id="exec-1", graph_name="flow")
    child = root.child(node_id="n")
    assert (child.execution_id, child.graph_name, child.node_id) == ("exec-1", "flow", "n")


class _Greeter:
    """Not data: a method, a property that counts its reads."""

    reads = 0

    def greet(self) -> str:
        return "hello"

    @property
    def token(self) -> str:
        _Greeter.reads += 1
        return "secret-token"


@dataclasses.dataclass
class _Profile:
    tier: str

    def upgrade(self) -> None:  # a method of a record is not one of its fields
        self.tier = "gold"


def test_a_dotted_lookup_never_reaches_module_globals() -> None:
    ctx = OperatorContext.root({"user": _Greeter()})
    assert ctx.get("user.greet.__globals__.os.environ.HOME", "none") == "none"


def test_a_dotted_lookup_does_not_read_methods_dunders_or_properties() -> None:
    _Greeter.reads = 0
    ctx = OperatorContext.root({"user": _Greeter(), "profile": _Profile("basic"), "os": os})
    for path in ("user.greet", "user.token", "user.__class__", "profile.upgrade",
                 "profile.__class__.__mro__", "profile.__dataclass_fields__", "os.environ",
                 "user.__dict__"):
        assert ctx.get(path, "none") == "none", path
    assert _Greeter.reads == 0


def test_a_dotted_lookup_reads_mapping_keys_record_fields_and_list_items() -> None:
    ctx = OperatorContext.root({"user": {"profile": _Profile("gold"), "tags": ["a", "b"]}})
    assert ctx.get("user.profile.tier") == "gold"
    assert ctx.get("user.tags.0") == "a"
    assert ctx.get("user.tags.-1") == "b"
    assert ctx.get("user.tags.2", "none") == "none"
    assert ctx.get("user.tags." + "9" * 5000, "none") == "none"


def test_the_repr_of_a_context_names_its_keys_never_its_values() -> None:
    # Values no random hex execution id can contain.
    ctx = OperatorContext.root({"api_key": "sk-live-123"}).child({"user": "Ada Lovelace"})
    text = repr(ctx)
    assert "sk-live-123" not in text
    assert "Lovelace" not in text
    assert "api_key" in text
    assert "user" in text


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text either")


def test_a_value_whose_str_fails_is_marked_by_its_type_alone() -> None:
    assert json.loads(JsonCodec().encode_lenient(_Unprintable())) == {
        "$unserializable": "_Unprintable", "str": "<_Unprintable object>"}
