"""What the offline model says when no tool is called: who it is, and what would help.

How to get a real model is the application's to say (``switch_hint``): only it knows its
settings.
"""

from __future__ import annotations

from collections.abc import Sequence

from bloge.llm.offline.words import words
from bloge.llm.types import ToolDefinition

IDENTITY = ("I'm bloge's offline model: a rule-based stand-in, not a language model, that "
            "needs no network or API key.")
_THANKS = frozenset({"thank", "thanks", "thx", "cheers"})


def as_clause(description: str) -> str:
    """A tool description's first sentence, ready to follow "I can" or "Let me":
    ``"Search the knowledge base."`` → ``"search the knowledge base"``."""
    sentence = description.strip().split("\n", 1)[0].split(". ", 1)[0].rstrip(". ")
    if sentence[1:2].isupper():  # an acronym ("SQL …") keeps its capitals
        return sentence
    return sentence[:1].lower() + sentence[1:]


def abilities(tools: Sequence[ToolDefinition]) -> str:
    """What the tools do, as one clause: "a, b or c"; a tool without a description by name."""
    clauses = [as_clause(t.description) or f"call {t.name}" for t in tools]
    if len(clauses) <= 1:
        return "".join(clauses)
    return ", ".join(clauses[:-1]) + " or " + clauses[-1]


def greeting(message: str, tools: Sequence[ToolDefinition], *, switch_hint: str) -> str:
    """The answer to a message with no topic ("hi", "thanks")."""
    opening = "You're welcome!" if _THANKS & set(words(message)) else "Hello!"
    if not tools:
        return (f"{opening} {IDENTITY} This agent has no tools, so there is little I can do. "
                f"{switch_hint}")
    return (f"{opening} {IDENTITY} Ask me something this agent's tools handle: I can "
            f"{abilities(tools)}.")


def no_tool(tools: Sequence[ToolDefinition], *, switch_hint: str) -> str:
    """The answer when no tool fits the message (or the agent has none)."""
    if not tools:
        return (f"{IDENTITY} I only do real work through an agent's tools, and this agent "
                f"has none, so I cannot answer this. {switch_hint}")
    return (f"{IDENTITY} I could not match your message to any of this agent's tools. I can "
            f"{abilities(tools)}: try asking with those words. {switch_hint}")


def no_question() -> str:
    """The answer to a conversation without any user message."""
    return f"{IDENTITY} There is no user message for me to answer."
