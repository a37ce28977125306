"""``sliding_window(n, block)``: a window that moves a block of messages at a time, so that its
first message — and the prompt prefix a provider caches — stays for several messages."""

from __future__ import annotations

import pytest

from bloge import AgentBuilder, AgentDslCompiler, AgentMemoryStrategy
from bloge.agent.memory.pruning import SlidingWindowMemory
from bloge.core import BlogeUsageError, CompileError
from bloge.llm import LlmMessage


def firsts(memory: SlidingWindowMemory, count: int) -> list[str]:
    """The first message of the view after each of ``count`` appended messages."""
    seen = []
    for number in range(count):
        memory.append(LlmMessage.user(f"m{number}"))
        seen.append(memory.messages()[1].content)
    return seen


def test_a_window_without_blocks_moves_one_message_at_a_time() -> None:
    memory = SlidingWindowMemory([LlmMessage.system("S")], 4)
    assert firsts(memory, 8) == ["m0", "m0", "m0", "m0", "m1", "m2", "m3", "m4"]


def test_a_block_window_keeps_its_first_message_for_a_block() -> None:
    memory = SlidingWindowMemory([LlmMessage.system("S")], 4, block=3)
    assert firsts(memory, 10) == ["m0", "m0", "m0", "m0", "m3", "m3", "m3", "m6", "m6", "m6"]
    assert len(memory.messages()) - 1 <= 4


def test_the_dsl_writes_a_block_window_with_its_block() -> None:
    agent = AgentDslCompiler().compile('agent a {\n model = "m"\n memory = sliding_window(20, 5)\n}')
    assert agent.memory_strategy == AgentMemoryStrategy.SlidingWindow(20, 5)
    assert agent.memory_strategy.to_dsl() == "sliding_window(20, 5)"


def test_a_block_larger_than_the_window_is_a_compile_error_at_the_block() -> None:
    with pytest.raises(CompileError, match=r":3:29: sliding_window\(n, block\) needs a block "
                                           r"between 1 and the window size 4, got 9"):
        AgentDslCompiler().compile('agent a {\n model = "m"\n memory = sliding_window(4, 9)\n}')


def test_the_builder_checks_the_block_too() -> None:
    with pytest.raises(BlogeUsageError, match="block between 1 and the window size 4"):
        AgentBuilder.create("a").memory(AgentMemoryStrategy.SlidingWindow(4, 0))
