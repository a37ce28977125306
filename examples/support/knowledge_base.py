"""The help-center knowledge base: articles, and a BM25 search over their titles and bodies.

The bundled articles live in ``articles.json`` beside this module, a JSON list of objects with
``id``, ``title``, ``summary`` and ``body``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from examples.support.analyzer import analyze
from examples.support.bm25 import Bm25Index

BUNDLED_ARTICLES = "articles.json"


@dataclass(frozen=True, slots=True)
class Article:
    """One help-center article. ``summary`` is the one-sentence answer shown to the model."""

    id: str
    title: str
    summary: str
    body: str


@dataclass(frozen=True, slots=True)
class SearchHit:
    """An article that matched a query, with its BM25 score."""

    article: Article
    score: float


def load_bundled_articles() -> list[Article]:
    """The articles shipped with this package, in file order."""
    text = resources.files(__package__).joinpath(BUNDLED_ARTICLES).read_text(encoding="utf-8")
    return parse_articles(json.loads(text))


def parse_articles(records: Any) -> list[Article]:
    """Articles from decoded JSON; a malformed record raises ``ValueError`` naming it."""
    if not isinstance(records, list):
        raise ValueError(f"articles must be a JSON list, got {type(records).__name__}")
    articles = []
    for position, record in enumerate(records):
        fields = ("id", "title", "summary", "body")
        if not isinstance(record, dict) or not all(isinstance(record.get(f), str) for f in fields):
            raise ValueError(f"article #{position} needs string fields {', '.join(fields)}")
        articles.append(Article(*(record[f] for f in fields)))
    return articles


class KnowledgeBase:
    """Articles indexed for search once, at construction; read-only afterwards.

    An article is indexed as its title, summary and body, with the title counted twice: a
    word in the title says more about what an article is for than a word in passing.
    """

    __slots__ = ("_articles", "_index")

    def __init__(self, articles: Iterable[Article]) -> None:
        self._articles = {article.id: article for article in articles}
        if not self._articles:
            raise ValueError("a knowledge base needs at least one article")
        self._index = Bm25Index({
            article.id: analyze(f"{article.title} {article.title} {article.summary} {article.body}")
            for article in self._articles.values()
        })

    @classmethod
    def bundled(cls) -> KnowledgeBase:
        """The knowledge base of the articles shipped with this package."""
        return cls(load_bundled_articles())

    @property
    def articles(self) -> Sequence[Article]:
        """Every article, in the order they were given."""
        return tuple(self._articles.values())

    def article(self, article_id: str) -> Article:
        """The article with ``article_id``; ``KeyError`` when there is none."""
        return self._articles[article_id]

    def search(self, query: str, *, limit: int = 5) -> list[SearchHit]:
        """Up to ``limit`` articles sharing a term with ``query``, best first; may be empty."""
        ranked = self._index.rank(analyze(query))[:limit]
        return [SearchHit(self._articles[hit.doc_id], hit.score) for hit in ranked]
