"""Which tool, if any, a user's message asks for.

Each tool is scored by how the message's topic words meet the tool's words: a word in the
tool's name counts most, then its description, then its parameter names (an action verb of
the name, such as *create* or *fetch*, only counts like a parameter name: it says what the
tool does, not what it is about). A small table of intents adds the everyday words people use
for common tools ("a real person" means escalate, "broken" means a ticket). The best positive
score wins, ties going to the tool listed first; with no score at all, the first tool that
only needs free text (a query, a question) gets the message, and otherwise none does. SQL
written into the message goes to a tool that mentions SQL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bloge.llm.offline.parameters import Kind, kind_of, required_properties
from bloge.llm.offline.sql import written_sql
from bloge.llm.offline.words import content_stems, stem, stem_set, stemmed, stems
from bloge.llm.types import ToolDefinition

NAME_WEIGHT = 3
DESCRIPTION_WEIGHT = 2
PARAMETER_WEIGHT = 1
WRITTEN_SQL_WEIGHT = 6

_ACTION_VERBS = stemmed(
    "create make add new open get fetch run do execute call send set update delete remove list "
    "show find read write post put use handle process lookup look"
)


@dataclass(frozen=True, slots=True)
class Intent:
    """Everyday ``cues`` for wanting a tool whose name or description has a ``target`` word."""

    name: str
    cues: frozenset[str]
    targets: frozenset[str]
    weight: int


def _intent(name: str, cues: str, targets: str, weight: int) -> Intent:
    return Intent(name, frozenset(map(stem, cues.split())), frozenset(map(stem, targets.split())),
                  weight)


INTENTS = (
    _intent("escalate",
            "human person people agent representative rep someone somebody operator manager "
            "supervisor staff live real speak talk escalate",
            "escalate human handoff transfer operator live", 3),
    _intent("ticket",
            "refund complaint complain ticket issue broken problem bug damaged defect faulty "
            "charge report case",
            "ticket case issue incident report", 2),
    _intent("metrics",
            "trend trending metric metrics revenue growth grow kpi sales signup signups churn "
            "increase decrease performance stats statistics analytics dashboard chart graph "
            "many much today yesterday daily week weekly month monthly quarter",
            "metric statistic kpi series measure", 2),
    _intent("search",
            "find how what search where why when which look lookup help explain tell know "
            "question information info guide article can",
            "search knowledge find lookup article faq doc documentation help", 2),
    _intent("query",
            "sql query select table row rows count average avg mean total sum maximum minimum "
            "group",
            "sql query database table", 3),
)


@dataclass(frozen=True, slots=True)
class ToolWords:
    """The stems a tool is known by, by where they come from."""

    name: frozenset[str]
    description: frozenset[str]
    parameters: frozenset[str]

    @classmethod
    def of(cls, tool: ToolDefinition) -> ToolWords:
        properties = tool.parameters.get("properties")
        names = list(properties) if isinstance(properties, Mapping) else []
        return cls(stem_set([tool.name]), stem_set([tool.description]), stem_set(names))

    def weight(self, word: str) -> int:
        """What one of the message's topic words is worth to this tool."""
        if word in self.name:
            return PARAMETER_WEIGHT if word in _ACTION_VERBS else NAME_WEIGHT
        if word in self.description:
            return PARAMETER_WEIGHT if word in _ACTION_VERBS else DESCRIPTION_WEIGHT
        return PARAMETER_WEIGHT if word in self.parameters else 0


def score(message: str, tool: ToolDefinition) -> int:
    """How plainly ``message`` asks for ``tool``; 0 when nothing connects them."""
    known = ToolWords.of(tool)
    total = sum(known.weight(word) for word in content_stems(message))
    spoken = set(stems(message))
    about = known.name | known.description
    for intent in INTENTS:
        if spoken & intent.cues and about & intent.targets:
            total += intent.weight
    if "sql" in about and written_sql(message):
        total += WRITTEN_SQL_WEIGHT
    return total


def choose_tool(message: str, tools: Sequence[ToolDefinition], *,
                fallback: bool = True) -> ToolDefinition | None:
    """The tool ``message`` asks for; see the module docstring for the rules (without
    ``fallback``, only a tool the message matches, never the first free-text one)."""
    best: ToolDefinition | None = None
    best_score = 0
    for tool in tools:
        points = score(message, tool)
        if points > best_score:
            best, best_score = tool, points
    if best is not None or not fallback:
        return best
    return next((tool for tool in tools if takes_free_text(tool)), None)


def takes_free_text(tool: ToolDefinition) -> bool:
    """Whether every required argument of ``tool`` is free text the message can fill whole."""
    tool_words = stem_set([tool.name, tool.description])
    required = required_properties(tool.parameters)
    return bool(required) and all(
        kind_of(name, schema, tool_words=tool_words) is Kind.FREE_TEXT
        for name, schema in required
    )
