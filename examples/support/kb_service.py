"""The knowledge base as a service of its own: the interface the support agent's tool calls,
and the implementation that answers it wherever it runs (``bloge.rpc.services.kb``).

One process (``bloge serve``, or ``bloge rpc serve`` behind NATS) runs
:class:`BundledKnowledgeBase`; the agent's process binds ``KBSearchOperator`` to
``rpc:kb/search``, so the DSL's ``tool searchKnowledgeBase : KBSearchOperator`` runs there.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from typing_extensions import TypedDict  # pydantic reads typing's TypedDict only on 3.12+

from bloge import rpc
from examples.support.operators import KBSearchOperator


class KBSearchResult(TypedDict):
    """The best article for a query (``articleId`` is ``None`` when none matched)."""

    articleId: str | None
    summary: str
    query: str
    title: str | None
    score: float
    related: list[str]


@runtime_checkable
class KnowledgeBaseService(Protocol):
    """The help-center knowledge base."""

    @rpc.idempotent
    async def search(self, query: str) -> KBSearchResult:
        """Search the help-center knowledge base with the customer's question and get the
        best article's id and one-sentence answer, plus related article ids."""
        ...


class BundledKnowledgeBase:
    """The articles bundled with the example, ranked with BM25 (see :class:`KBSearchOperator`);
    an empty query is the caller's mistake (``invalid_argument``)."""

    def __init__(self) -> None:
        self._search = KBSearchOperator()

    async def search(self, query: str) -> KBSearchResult:
        found = self._search.execute({"query": query})
        return KBSearchResult(articleId=found["articleId"], summary=found["summary"],
                              query=found["query"], title=found["title"],
                              score=found["score"], related=found["related"])
