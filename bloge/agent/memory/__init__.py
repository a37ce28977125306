"""Conversation memory: strategies and the memories that implement them."""

from bloge.agent.memory.strategy import AgentMemoryStrategy, MemoryStrategy

__all__ = ["AgentMemoryStrategy", "MemoryStrategy"]
