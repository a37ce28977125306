"""Filling a tool's required arguments from the user's message.

Every required property of the tool's JSON schema gets a value of the kind
:func:`~bloge.llm.offline.parameters.kind_of` reads from its schema and name; nested objects
are filled the same way, property by property. Optional properties are left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bloge.llm.offline import phrases, sql
from bloge.llm.offline.parameters import Kind, json_type, kind_of, required_properties
from bloge.llm.offline.words import (
    STOP_WORDS,
    numbers,
    stem,
    stem_set,
    stemmed,
    stems,
    words,
)
from bloge.llm.types import ToolDefinition

HUMAN_CUES = frozenset({"human", "person", "people", "agent", "representative", "someone",
                        "somebody", "operator", "manager", "supervisor", "staff", "real"})

_NOT_A_SUBJECT = stemmed(
    "trend trending change changing go going doing look looking show tell give many much compare "
    "performance perform data number numbers value values chart see check like well up down rise "
    "fall increase decrease growth grow happen happening today yesterday week weeks month months "
    "year years day days quarter last past previous recent recently lately daily weekly monthly "
    "one two three four five six seven eight nine ten twelve thirty ago since over average avg "
    "mean total sum max maximum highest peak best min minimum lowest worst count row rows table "
    "record records entry entries"
)
# Second words that make a two-word name of a measure: "churn rate", "active users".
_COMPOUND_HEADS = stemmed("rate ratio users count time score views sessions size cost")
_SNAKE_NAME = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
_IDENTIFIER_LIST = re.compile(r"\b[A-Za-z][A-Za-z0-9_]*\b")


@dataclass(frozen=True, slots=True)
class _Reading:
    """The message, read once for every argument of one tool."""

    message: str
    stems: frozenset[str]
    tool_words: frozenset[str]
    hints: tuple[str, ...]


def fill_arguments(
    tool: ToolDefinition, message: str, *, hints: Iterable[str] = ()
) -> dict[str, Any]:
    """Values for every required argument of ``tool``, read from the user's ``message``.

    ``hints`` are other texts that may describe the tool's world (the system prompt, or what
    an application's :class:`~bloge.llm.offline.ArgumentFiller` knows), read only for a SQL
    schema such as ``metrics(date TEXT, name TEXT, value REAL)``.
    """
    text = " ".join(message.split())
    tool_words = stem_set([tool.name, tool.description])
    reading = _Reading(text, frozenset(stems(text)), tool_words,
                       (tool.description, *_descriptions(tool.parameters), *hints))
    return _fill_object(tool.parameters, reading)


def _fill_object(schema: Mapping[str, Any], reading: _Reading) -> dict[str, Any]:
    filled: dict[str, Any] = {}
    numbers_taken = 0
    for name, prop in required_properties(schema):
        kind = kind_of(name, prop, tool_words=reading.tool_words)
        if kind is Kind.NUMBER:
            # "add 2 and 3": the numeric arguments take the message's numbers in order.
            filled[name] = _number(prop, reading.message, position=numbers_taken)
            numbers_taken += 1
        else:
            filled[name] = _fill(name, prop, reading, kind)
    return filled


def _fill(name: str, schema: Mapping[str, Any], reading: _Reading,
          kind: Kind | None = None) -> Any:
    message = reading.message
    match kind or kind_of(name, schema, tool_words=reading.tool_words):
        case Kind.CHOICE:
            return choose_option(schema["enum"], reading.stems,
                                 preferred=_preferred(name, reading))
        case Kind.BOOLEAN:
            return False
        case Kind.NUMBER:
            return _number(schema, message)
        case Kind.OBJECT:
            return _fill_object(schema, reading)
        case Kind.ARRAY:
            items = schema.get("items")
            return [_fill(name, items if isinstance(items, Mapping) else {}, reading)]
        case Kind.SQL:
            subject = subject_word(message, exclude=reading.tool_words)
            days = phrases.days_in(phrases.time_range(message) or phrases.DEFAULT_TIME_RANGE)
            return sql.select_for(message, subject=subject, days=days, hints=reading.hints)
        case Kind.REASON:
            return reason(message)
        case Kind.TITLE:
            return phrases.title(message)
        case Kind.PRIORITY:
            return phrases.priority(message)
        case Kind.TIME_RANGE:
            return phrases.time_range(message) or phrases.DEFAULT_TIME_RANGE
        case Kind.SUBJECT:
            listed = _listed_option(schema, name, reading)
            exclude = reading.tool_words | stem_set([name])
            return listed or subject_word(message, exclude=exclude) or message
        case Kind.IDENTIFIER:
            return phrases.identifier(message) or message
        case Kind.FREE_TEXT | Kind.TEXT:
            return message


def choose_option(options: Sequence[Any], message_stems: frozenset[str], *,
                  preferred: str | None = None) -> Any:
    """The option the message mentions (the longest, when several are), else ``preferred``
    when it is an option, else the first option."""
    mentioned = [o for o in options if (spelled := set(stems(str(o)))) and spelled <= message_stems]
    if mentioned:
        return max(mentioned, key=lambda o: len(str(o)))
    if preferred is not None:
        for option in options:
            if str(option).lower() == preferred:
                return option
    return options[0]


def subject_word(message: str, *, exclude: frozenset[str] = frozenset()) -> str | None:
    """The word naming what ``message`` is about: a snake_case name the user typed, else the
    first topic word that is not about time, change or the tool itself (``"How is revenue
    trending this week?"`` → ``"revenue"``), joined to a measure word after it ("churn rate"
    → ``"churn_rate"``)."""
    typed: list[str] = _SNAKE_NAME.findall(message.lower())
    for name in typed:
        if phrases.time_range(name) is None:
            return name
    spoken = words(message)
    for index, word in enumerate(spoken):
        if word in STOP_WORDS or word.isdigit():
            continue
        root = stem(word)
        if root not in _NOT_A_SUBJECT and root not in exclude:
            following = spoken[index + 1] if index + 1 < len(spoken) else ""
            return f"{word}_{following}" if stem(following) in _COMPOUND_HEADS else word
    return None


def reason(message: str) -> str:
    """A short sentence for whoever picks the conversation up, quoting the user."""
    if HUMAN_CUES & set(words(message)):
        return f'The user asked for a human agent: "{message}"'
    return f"The user's request: \"{message}\""


def _preferred(name: str, reading: _Reading) -> str | None:
    """What a parameter of this name would get without an enum, for picking among its enum."""
    match kind_of(name, {"type": "string"}, tool_words=reading.tool_words):
        case Kind.PRIORITY:
            return phrases.priority(reading.message)
        case Kind.TIME_RANGE:
            return phrases.time_range(reading.message)
    return None


def _listed_option(schema: Mapping[str, Any], name: str, reading: _Reading) -> str | None:
    """An option the parameter's own description lists ("one of revenue, churn_rate") that
    the message mentions; ``"churn rate"`` finds ``churn_rate``."""
    description = schema.get("description")
    if not isinstance(description, str):
        return None
    noise = reading.tool_words | stem_set([name]) | frozenset(STOP_WORDS)
    options = [o for o in dict.fromkeys(_IDENTIFIER_LIST.findall(description))
               if not set(stems(o)) <= noise]
    mentioned = [o for o in options if set(stems(o)) <= reading.stems]
    return max(mentioned, key=len) if mentioned else None


def _number(schema: Mapping[str, Any], message: str, *, position: int = 0) -> int | float:
    """The message's number at ``position`` (its last one past the end; 1 without any)."""
    found = numbers(message)
    value: int | float = float(found[min(position, len(found) - 1)]) if found else 1
    if json_type(schema) == "integer" or value == int(value):
        value = int(value)
    minimum = schema.get("minimum")
    if isinstance(minimum, (int, float)) and value < minimum:
        value = minimum
    maximum = schema.get("maximum")
    if isinstance(maximum, (int, float)) and value > maximum:
        value = maximum
    return value


def _descriptions(schema: Mapping[str, Any]) -> list[str]:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    return [p["description"] for p in properties.values()
            if isinstance(p, Mapping) and isinstance(p.get("description"), str)]
