from __future__ import annotations

from bloge.agent import AgentDef, AgentExtensionProvider
from bloge.dsl import DslCompiler, DslExtensionProvider, SourceText, discover_extensions
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
    assert isinstance(_Counter(), DslExtensionProvider)
    compiled = DslCompiler([_Counter()]).compile("counter c { a = 1 b = 2 }\nother o { counter d {} }")
    assert [(b.name, b.definition) for b in compiled] == [("c", 2), ("d", 0)]
