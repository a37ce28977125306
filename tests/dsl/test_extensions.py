from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import EntryPoint
from typing import Any

import pytest

from bloge import AgentBuilder, AgentDslCompiler, BlogeUsageError, ExpressionError
from bloge.agent import AgentDef, AgentExtensionProvider
from bloge.dsl import (
    ENTRY_POINT_GROUP,
    DslCompiler,
    Function,
    FunctionError,
    SourceText,
    discover_extensions,
    extensions,
)
from bloge.dsl import syntax as s
from bloge.dsl.extensions import CompileOptions


def test_the_agent_kind_is_discovered_through_the_entry_point_group() -> None:
    kinds = {type(e): e.kind for e in discover_extensions()}
    assert kinds.get(AgentExtensionProvider) == "agent"


def test_the_generic_compiler_hands_agent_blocks_to_the_agent_extension() -> None:
    (block,) = DslCompiler().compile('graph g { agent a { model = "m" } }')
    assert (block.kind, block.name) == ("agent", "a")
    assert isinstance(block.definition, AgentDef)


class _Counter:
    kind = "counter"

    def claims(self, block: s.Block) -> bool:
        return block.keywords == ("counter",)

    def compile_block(self, block: s.Block, source: SourceText, options: CompileOptions) -> int:
        return len(block.body)


def test_a_new_block_kind_needs_only_an_extension() -> None:
    compiled = DslCompiler([_Counter()]).compile("counter c { a = 1 b = 2 }\nother o { counter d {} }")
    assert [(b.name, b.definition) for b in compiled] == [("c", 2), ("d", 0)]


def _mentions(scope: Mapping[str, Any], word: Any) -> bool:
    if not isinstance(word, str):
        raise FunctionError(f"mentions() needs a string, got {type(word).__name__}")
    return word.lower() in str(scope.get("content") or "").lower()


class _Mentions:
    """A third party's extension: no block kind, one function that reads the scope."""

    kind = "mentions"

    def claims(self, block: s.Block) -> bool:
        return False

    def compile_block(self, block: s.Block, source: SourceText, options: CompileOptions) -> None:
        raise AssertionError("claims no block")

    def functions(self) -> Mapping[str, Function]:
        return {"mentions": Function(_mentions, 1, 1, reads_scope=True,
                                     doc="whether the reply mentions the word")}


MENTIONS_AGENT = 'agent a { model = "m" exit_condition = mentions("refund") }'


def test_an_extension_adds_a_function_that_reads_the_evaluation_scope() -> None:
    (block,) = DslCompiler([AgentExtensionProvider(), _Mentions()]).compile(MENTIONS_AGENT)
    condition = block.definition.exit_condition
    assert condition.evaluate({"content": "Your REFUND is on its way"}) is True
    assert condition.evaluate({"content": "Hello"}) is False


def test_a_contributed_function_reports_bad_values_at_its_call() -> None:
    (block,) = DslCompiler([AgentExtensionProvider(), _Mentions()]).compile(
        'agent a {\n  model = "m"\n  exit_condition = mentions(turn)\n}', filename="a.bloge")
    with pytest.raises(ExpressionError) as caught:
        block.definition.exit_condition.evaluate({"turn": 1})
    assert str(caught.value).startswith("a.bloge:3:20: mentions() needs a string, got int")


@pytest.fixture
def advertise(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """Installs extensions as entry points of the group, by ``name="module:attribute"``."""

    def install(**extensions_by_name: str) -> None:
        advertised = [EntryPoint(name, value, ENTRY_POINT_GROUP)
                      for name, value in extensions_by_name.items()]
        monkeypatch.setattr(extensions, "entry_points",
                            lambda group: advertised if group == ENTRY_POINT_GROUP else [])
        discover_extensions.cache_clear()

    yield install
    discover_extensions.cache_clear()


def test_an_installed_extension_adds_its_functions_to_agents_everywhere(advertise: Callable[..., None]) -> None:
    advertise(agent="bloge.agent.extension:AgentExtensionProvider",
              mentions="tests.dsl.test_extensions:_Mentions")
    compiled = AgentDslCompiler().compile(MENTIONS_AGENT)
    built = AgentBuilder.create("a").model("m").exit_condition('mentions("refund")').build()
    assert compiled == built


def test_an_extension_that_cannot_be_loaded_is_named(advertise: Callable[..., None]) -> None:
    advertise(broken="vendor_extension_missing:Extension")
    with pytest.raises(BlogeUsageError) as caught:
        AgentDslCompiler()
    assert str(caught.value).startswith("entry point 'broken' in 'bloge.dsl.extensions' cannot "
                                        "be loaded from 'vendor_extension_missing:Extension'")


class _Shadow(_Mentions):
    """An extension whose function would replace a standard one."""

    def functions(self) -> Mapping[str, Function]:
        return {"len": Function(lambda value: 0, 1, 1)}


def test_an_extension_cannot_replace_a_function() -> None:
    with pytest.raises(BlogeUsageError, match=r"_Shadow contributes a function len\(\), which "
                                              "the standard library already gives"):
        DslCompiler([_Shadow()])
