"""Search over the bundled help-center articles: analysis, BM25 ranking and the articles."""

from __future__ import annotations

import math

import pytest

from examples.support.analyzer import analyze, stem
from examples.support.bm25 import Bm25Index
from examples.support.knowledge_base import Article, KnowledgeBase, parse_articles


@pytest.fixture(scope="module")
def knowledge_base() -> KnowledgeBase:
    return KnowledgeBase.bundled()


@pytest.mark.parametrize(
    ("inflected", "plain"),
    [("resetting", "reset"), ("passwords", "password"), ("refunded", "refund"),
     ("shipping", "ship"), ("billing", "bill"), ("charged", "charge"), ("deletion", "delete"),
     ("cancelling", "cancel"), ("invoices", "invoice"), ("keys", "key")],
)
def test_inflected_words_and_their_plain_forms_become_the_same_term(inflected: str, plain: str) -> None:
    assert stem(inflected) == stem(plain)


def test_words_ending_in_a_stem_s_keep_it() -> None:
    assert [stem(w) for w in ("status", "access", "address")] == ["status", "access", "address"]


def test_analysis_lower_cases_and_drops_stop_words() -> None:
    assert analyze("How do I RESET my Password?") == ["reset", "password"]


def test_bm25_scores_follow_the_formula() -> None:
    index = Bm25Index({"a": ["x", "y"], "b": ["y", "y", "z", "z"]}, k1=1.5, b=0.75)
    idf_x = math.log(1 + (2 - 1 + 0.5) / (1 + 0.5))
    expected = idf_x * 1 * 2.5 / (1 + 1.5 * (1 - 0.75 + 0.75 * 2 / 3))
    [hit] = index.rank(["x"])
    assert hit.doc_id == "a"
    assert hit.score == pytest.approx(expected)


def test_bm25_prefers_the_rarer_term() -> None:
    index = Bm25Index({"a": ["tea", "tea", "cup"], "b": ["saucer", "cup", "cup"], "c": ["tea"]})
    assert index.rank(["tea", "saucer"])[0].doc_id == "b"


def test_bm25_ignores_terms_no_document_has() -> None:
    assert Bm25Index({"a": ["x"]}).rank(["nothing", "here"]) == []


def test_a_password_question_ranks_the_reset_article_first(knowledge_base: KnowledgeBase) -> None:
    assert knowledge_base.search("How do I reset my password?")[0].article.id == "KB-RESET-001"


@pytest.mark.parametrize(
    "question",
    ["I want a refund for my order", "How do I get refunded?", "refunds", "Can I get my money back?"],
)
def test_refund_questions_rank_the_refund_article_first(knowledge_base: KnowledgeBase, question: str) -> None:
    assert knowledge_base.search(question)[0].article.id == "KB-REFUND-014"


@pytest.mark.parametrize(
    ("question", "article_id"),
    [("How do I turn on 2FA?", "KB-2FA-003"), ("I lost my phone with the authenticator app", "KB-2FA-004"),
     ("How long does shipping take?", "KB-SHIP-020"), ("Please delete my account", "KB-DELETE-030"),
     ("How do I rotate an API key?", "KB-API-040"), ("change my credit card", "KB-BILL-007"),
     ("cancelling my subscription", "KB-PLAN-010")],
)
def test_other_topics_find_their_article(knowledge_base: KnowledgeBase, question: str, article_id: str) -> None:
    assert knowledge_base.search(question)[0].article.id == article_id


def test_a_question_sharing_no_word_with_any_article_finds_nothing(knowledge_base: KnowledgeBase) -> None:
    assert knowledge_base.search("I want a human agent right now.") == []


def test_search_returns_at_most_limit_hits_best_first(knowledge_base: KnowledgeBase) -> None:
    hits = knowledge_base.search("password reset email sign in", limit=3)
    assert len(hits) == 3
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_the_bundled_articles_have_unique_ids_and_the_documented_answers(knowledge_base: KnowledgeBase) -> None:
    ids = [a.id for a in knowledge_base.articles]
    assert len(ids) == len(set(ids)) >= 12
    assert knowledge_base.article("KB-RESET-001").summary == (
        "Reset the password from Settings > Security and confirm the email link.")
    assert knowledge_base.article("KB-REFUND-014").summary == (
        "Refund requests can be started from Orders > Request refund within 30 days.")


def test_a_malformed_article_record_is_named() -> None:
    with pytest.raises(ValueError, match="article #1 needs string fields"):
        parse_articles([{"id": "A", "title": "t", "summary": "s", "body": "b"}, {"id": "B"}])


def test_a_knowledge_base_needs_articles() -> None:
    with pytest.raises(ValueError, match="at least one article"):
        KnowledgeBase([])


def test_a_custom_knowledge_base_ranks_its_own_articles() -> None:
    kb = KnowledgeBase([Article("X-1", "Parking", "Park in lot B.", "Visitors park in lot B."),
                        Article("X-2", "Lunch", "Lunch is at noon.", "The canteen opens at noon.")])
    assert kb.search("where do visitors park?")[0].article.id == "X-1"
