"""Words for matching: tokens, identifier splitting, stop words and a light stemmer.

Everything the offline model compares goes through :func:`stem`, on both sides, so that
"trending" meets "trend", "tickets" meets "createTicket" and "escalation" meets "escalate".
The stemmer is deliberately crude: it only has to conflate a word's common inflections, never
to produce a dictionary word.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"[A-Za-z0-9]+(?:['\u2019][A-Za-z]+)?")
_APOSTROPHE = re.compile(r"['\u2019]")
# The first suffix that fits comes off, and only when three letters stay. Replacing "ss" by itself
# keeps "class" from losing its "s".
_SUFFIXES = (
    ("ations", "at"), ("ation", "at"), ("ions", ""), ("ion", ""), ("ingly", ""), ("ings", ""),
    ("ing", ""), ("edly", ""), ("ied", "y"), ("ies", "y"), ("ed", ""), ("ly", ""),
    ("sses", "ss"), ("ches", "ch"), ("shes", "sh"), ("xes", "x"), ("ss", "ss"), ("us", "us"),
    ("is", "is"), ("s", ""),
)
# camelCase humps, ALLCAPS runs before a capitalised word ("SQLQuery"), and digit runs.
_HUMP = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def word_set(listing: str) -> frozenset[str]:
    """The words of a whitespace-separated ``listing``, as a set."""
    return frozenset(listing.split())


def stemmed(listing: str) -> frozenset[str]:
    """The stems of the words of a whitespace-separated ``listing``, as a set."""
    return frozenset(stem(w) for w in listing.split())


STOP_WORDS = word_set(
    "a about above after again all also am an and any are as at be because been before being "
    "below between both but by can could did do does doing done during each else ever few for "
    "from further get gets getting got had has have having he her here hers him his how i if in "
    "into is it its itself just let me might more most much must my myself need needs no nor not "
    "now of off on once only or other our ours out over own please right same shall she should so "
    "some such than thank thanks that the their theirs them then there these they this those "
    "through to too under until up very via want wants was we were what when where which while "
    "who whom why will with would you your yours whats hows wheres dont doesnt didnt isnt arent "
    "wasnt cant couldnt wont wouldnt im ive youre weve theyre thats theres lets"
)
"""Words that carry no topic. Question words (how, what, where, why) are stop words too: the
intent table in :mod:`.choice` reads them from the unfiltered message."""

SMALL_TALK = word_set(
    "hi hello hey morning afternoon evening good great nice cool awesome perfect fine thank "
    "thanks thx cheers lot bye goodbye ok okay yes yeah sure yo"
)
"""Words of greetings and thanks: a message of only these (and stop words) has no topic."""


def words(text: str) -> list[str]:
    """The lower-case words of ``text``, identifiers split and contractions closed up:
    ``"searchKnowledgeBase, time_range, don't"`` → ``["search", "knowledge", "base", "time",
    "range", "dont"]``."""
    return [hump.lower() for token in _WORD.findall(text)
            for hump in _HUMP.findall(_APOSTROPHE.sub("", token))]


def stem(word: str) -> str:
    """A crude stem of a lower-case word: common suffixes off, a final ``e`` off.

    ``trending``/``trends`` → ``trend``, ``tickets`` → ``ticket``, ``escalation``/
    ``escalated``/``escalate`` → ``escalat``, ``queries`` → ``query``, ``running`` → ``run``.
    """
    if len(word) <= 3 or word.isdigit():
        return word
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + replacement
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word



def stems(text: str) -> list[str]:
    """The stems of every word in ``text``, in order, stop words included."""
    return [stem(w) for w in words(text)]


def content_stems(text: str) -> list[str]:
    """The stems of ``text``'s topic words, in order, without repeats or stop words."""
    return list(dict.fromkeys(stem(w) for w in words(text) if w not in STOP_WORDS))


def stem_set(texts: Iterable[str]) -> frozenset[str]:
    """Every stem of every text, stop words left out."""
    return frozenset(s for text in texts for s in content_stems(text))


def numbers(text: str) -> list[str]:
    """The numbers written in ``text`` with digits, in order (``"1234"``, ``"2.5"``)."""
    return _NUMBER.findall(text)


def is_small_talk(text: str) -> bool:
    """Whether ``text`` carries no topic at all: empty, or only greetings and stop words."""
    return all(w in STOP_WORDS or w in SMALL_TALK for w in words(text))
