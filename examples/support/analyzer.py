"""Text analysis for search: text in, index terms out.

Documents and queries go through the same :func:`analyze`, so that a word in a question and
the same word in an article become the same term: lower-cased, stop words dropped, and lightly
stemmed ("resetting" → "reset", "passwords" → "password", "deletion" → "delet").
"""

from __future__ import annotations

import re

STOP_WORDS = frozenset({
    "a", "about", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by",
    "can", "could", "did", "do", "does", "for", "from", "get", "got", "has", "have", "how", "i",
    "if", "in", "into", "is", "it", "its", "just", "like", "me", "my", "need", "now", "of", "on",
    "or", "our", "please", "right", "so", "that", "the", "their", "them", "then", "there", "this",
    "to", "us", "want", "was", "we", "what", "when", "where", "which", "who", "why", "will",
    "with", "would", "you", "your",
})
"""Words too common to tell one help article from another."""

_WORD = re.compile(r"[a-z0-9]+")

# Longest first, so that "ations" is tried before "s". Each entry needs a stem of at least
# three letters to remain, which keeps short words ("bus", "used") intact.
_SUFFIXES = ("ations", "ation", "ions", "ion", "ings", "ing", "ies", "ed", "es", "s")
# Endings where a final "s" belongs to the word itself ("status", "access", "analysis").
_KEEP_FINAL_S = ("ss", "us", "is")
# A doubled final consonant left by "-ing"/"-ed" is undone ("resett" → "reset") except for
# letters English keeps doubled ("bill", "access", "buzz").
_KEEP_DOUBLED = frozenset("lsz")


def analyze(text: str) -> list[str]:
    """The index terms of ``text``, in order, with repeats (term frequency matters)."""
    return [stem(word) for word in _WORD.findall(text.lower()) if word not in STOP_WORDS]


def stem(word: str) -> str:
    """A light suffix stemmer: enough for plurals and verb forms to meet, nothing cleverer."""
    if len(word) <= 3 or word.isdigit():
        return word
    base = _strip_suffix(word)
    if base != word and len(base) >= 3 and base[-1] == base[-2] and base[-1] not in _KEEP_DOUBLED:
        base = base[:-1]
    # British "cancelled"/"cancelling" meet American "canceled" and "cancel"; words of four
    # letters ("bill", "fill") keep theirs.
    if base.endswith("ll") and len(base) > 4:
        base = base[:-1]
    # A final silent "e" goes too, so that "charge", "charged" and "charging" share "charg".
    if base.endswith("e") and len(base) > 3:
        base = base[:-1]
    return base


def _strip_suffix(word: str) -> str:
    for suffix in _SUFFIXES:
        if not word.endswith(suffix) or len(word) - len(suffix) < 3:
            continue
        if suffix == "s" and word.endswith(_KEEP_FINAL_S):
            return word
        if suffix == "ies":
            return word[: -len(suffix)] + "y"
        if suffix == "es" and not word.endswith(("sses", "xes", "ches", "shes")):
            # "invoices" → "invoice": only sibilants take a real "-es" plural.
            return word[:-1]
        return word[: -len(suffix)]
    return word
