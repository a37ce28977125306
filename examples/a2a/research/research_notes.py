"""The research agent's tool: a few notes, searched by the words of a question."""

from __future__ import annotations

import re
from collections.abc import Mapping

NOTES = {
    "tea": "Tea was first drunk in China; it reached Europe in the early 17th century "
           "through Dutch traders",
    "coffee": "Coffee drinking began in Yemen in the 15th century and spread through the "
              "Ottoman Empire",
    "chocolate": "Chocolate was drunk in Mesoamerica for millennia before it reached Spain "
                 "in the 16th century",
}


def search_notes(input: Mapping[str, str]) -> dict[str, str]:
    """Search the research notes for a topic (tea, coffee, chocolate)."""
    query = input["query"]
    words = set(re.findall(r"[a-z]+", query.lower()))
    topic = next((name for name in NOTES if name in words), None)
    if topic is None:
        return {"topic": "none", "note": f"No note matches {query!r}; topics: "
                f"{', '.join(NOTES)}."}
    return {"topic": topic, "note": NOTES[topic]}
