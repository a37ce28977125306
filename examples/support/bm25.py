"""Okapi BM25 ranking over documents that are already lists of terms.

The index knows nothing about articles or text: give it ``{doc_id: terms}`` once, then rank
any number of queries against it. Scores follow the usual formula

    score(D, Q) = Σ_{t ∈ Q} idf(t) · tf · (k1 + 1) / (tf + k1 · (1 - b + b · |D| / avgdl))

where ``tf`` is how often ``t`` occurs in ``D``, ``|D|`` is the length of ``D`` in terms,
``avgdl`` the average length, and ``idf`` is Lucene's non-negative variant

    idf(t) = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5))

(``N`` documents, ``n(t)`` of them containing ``t``), so that a term found in most documents
still counts a little instead of pushing a score below zero.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ScoredDocument:
    """One ranked document: its id and its BM25 score (always > 0)."""

    doc_id: str
    score: float


class Bm25Index:
    """An immutable BM25 index; safe to share between threads once built."""

    __slots__ = ("_avg_length", "_b", "_document_frequency", "_k1", "_lengths", "_term_counts")

    def __init__(
        self, documents: Mapping[str, Sequence[str]], *, k1: float = 1.5, b: float = 0.75
    ) -> None:
        """Index ``documents`` (doc id → terms); ``k1`` saturates term frequency, ``b``
        normalises for document length (0 = none, 1 = full)."""
        self._k1 = k1
        self._b = b
        self._term_counts = {doc_id: Counter(terms) for doc_id, terms in documents.items()}
        self._lengths = {doc_id: len(terms) for doc_id, terms in documents.items()}
        total = sum(self._lengths.values())
        self._avg_length = total / len(documents) if documents and total else 1.0
        self._document_frequency: Counter[str] = Counter()
        for counts in self._term_counts.values():
            self._document_frequency.update(counts.keys())

    def __len__(self) -> int:
        return len(self._term_counts)

    def idf(self, term: str) -> float:
        """How rare ``term`` is across the index; 0 for a term no document contains."""
        containing = self._document_frequency.get(term, 0)
        if containing == 0:
            return 0.0
        return math.log(1 + (len(self) - containing + 0.5) / (containing + 0.5))

    def rank(self, query_terms: Iterable[str]) -> list[ScoredDocument]:
        """Documents sharing a term with the query, best first; ties keep indexing order.

        A term repeated in the query counts once: a question that says "password" twice is
        not twice as much about passwords.
        """
        terms = [t for t in dict.fromkeys(query_terms) if t in self._document_frequency]
        scored = [
            ScoredDocument(doc_id, score)
            for doc_id in self._term_counts
            if (score := self._score(doc_id, terms)) > 0
        ]
        # sorted() is stable, so equal scores stay in the order the documents were given.
        return sorted(scored, key=lambda hit: hit.score, reverse=True)

    def _score(self, doc_id: str, terms: Sequence[str]) -> float:
        counts = self._term_counts[doc_id]
        length_ratio = self._lengths[doc_id] / self._avg_length
        norm = self._k1 * (1 - self._b + self._b * length_ratio)
        score = 0.0
        for term in terms:
            frequency = counts.get(term, 0)
            if frequency:
                score += self.idf(term) * frequency * (self._k1 + 1) / (frequency + norm)
        return score
