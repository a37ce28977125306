"""The knowledge base as an MCP server, over stdio: ``python -m examples.support.kb_mcp_server``.

One tool, ``search``, answers as :class:`~examples.support.operators.KBSearchOperator` does
(structured content: ``{articleId, summary, query, title, score, related}``). With
``KB_OVER_MCP=true``, ``settings.yaml`` starts it with the application and registers its tool
under ``KBSearchOperator``: the support agent's ``searchKnowledgeBase`` then runs here, and any
MCP client (an IDE, another agent framework) can use it too.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from examples.support.kb_service import KBSearchResult
from examples.support.operators import KBSearchOperator

server = MCPServer("knowledge-base", log_level="WARNING")
_search = KBSearchOperator()


@server.tool()
def search(query: str) -> KBSearchResult:
    """Search the help-center knowledge base with the customer's question and get the best
    article's id and one-sentence answer, plus related article ids (articleId is null when no
    article matched: then do not invent an answer)."""
    found = _search.execute({"query": query})
    return KBSearchResult(articleId=found["articleId"], summary=found["summary"],
                          query=found["query"], title=found["title"], score=found["score"],
                          related=found["related"])


if __name__ == "__main__":
    server.run("stdio")
