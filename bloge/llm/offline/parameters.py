"""What kind of value a tool parameter wants, read from its JSON schema and its name.

The schema's ``enum`` and ``type`` decide first; a string parameter is then known by the
words of its name (``timeRange`` → a time range, ``metricName`` → the thing the message is
about, ``query`` → the message itself).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from bloge.llm.offline.words import stem, stemmed, words


class Kind(enum.Enum):
    """The kinds of argument :mod:`.arguments` knows how to fill."""

    CHOICE = "one of the schema's enum values"
    BOOLEAN = "a boolean"
    NUMBER = "an integer or number"
    OBJECT = "an object, filled property by property"
    ARRAY = "an array of one item"
    SQL = "a SELECT statement"
    FREE_TEXT = "the user's message as it stands"
    REASON = "a sentence quoting the user"
    TITLE = "the message's first few words"
    PRIORITY = "urgent, high, normal or low"
    TIME_RANGE = "a snake_case time range"
    SUBJECT = "the word naming what the message is about"
    IDENTIFIER = "the first number or id in the message"
    TEXT = "any other string: the user's message"


_FREE_TEXT = stemmed(
    "query question text message description details detail content input prompt body q search "
    "keywords keyword comment note notes request problem issue utterance"
)
_TITLE = stemmed("title subject headline heading label topic")
_TITLED_THINGS = stemmed("ticket issue case task project event file")
_PRIORITY = stemmed("priority severity urgency importance")
_TIME_RANGE = stemmed("range period window timeframe interval span duration since")
_SUBJECT = stemmed("metric measure kpi series dimension")
_SUBJECT_TAIL = stemmed("name key type kind field column category")
_IDENTIFIER_TAIL = stemmed("id number code ref reference")
_SQL_TOOL = frozenset({"sql", "sqlite", "select"})
_NAME = stem("name")


def json_type(schema: Mapping[str, Any]) -> str | None:
    """The schema's ``type``; of a list of types, the first that is not ``"null"``."""
    declared = schema.get("type")
    if isinstance(declared, list):
        declared = next((t for t in declared if t != "null"), None)
    return declared if isinstance(declared, str) else None


def kind_of(name: str, schema: Mapping[str, Any], *, tool_words: frozenset[str]) -> Kind:
    """The kind of parameter ``name`` with ``schema``, on a tool known by ``tool_words``
    (the stems of its name and description)."""
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return Kind.CHOICE
    by_type = {"boolean": Kind.BOOLEAN, "integer": Kind.NUMBER, "number": Kind.NUMBER,
               "object": Kind.OBJECT, "array": Kind.ARRAY}
    declared = json_type(schema)
    if declared in by_type:
        return by_type[declared]
    return _string_kind([stem(w) for w in words(name)], tool_words)


def _string_kind(parts: list[str], tool_words: frozenset[str]) -> Kind:
    named = set(parts)
    last = parts[-1] if parts else ""
    if "sql" in named or (named & {"query", "statement"} and tool_words & _SQL_TOOL):
        return Kind.SQL
    if last == "reason":
        return Kind.REASON
    if named & _PRIORITY:
        return Kind.PRIORITY
    if named & _TIME_RANGE:
        return Kind.TIME_RANGE
    if named & _TITLE or (last == _NAME and (len(parts) == 1 or named & _TITLED_THINGS)):
        return Kind.TITLE
    if named & _SUBJECT or (len(parts) > 1 and last in _SUBJECT_TAIL):
        return Kind.SUBJECT
    if (len(parts) > 1 and last in _IDENTIFIER_TAIL) or parts == ["id"]:
        return Kind.IDENTIFIER
    if named & _FREE_TEXT:
        return Kind.FREE_TEXT
    return Kind.TEXT


def required_properties(schema: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The object schema's required properties, in the order ``required`` lists them."""
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    names = [n for n in required if isinstance(n, str)] if isinstance(required, list) else []
    return [(n, p if isinstance(p := properties.get(n), Mapping) else {}) for n in names]
