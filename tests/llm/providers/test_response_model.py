"""The model that answered, as its server names it: on whole answers and on a stream's
``done`` chunk, joined into the answer (a traced model call's ``gen_ai.response.model``)."""

from __future__ import annotations

from bloge.llm.chunks import join_chunks
from bloge.llm.providers.anthropic import parse_messages_response
from bloge.llm.providers.anthropic_stream import AnthropicStreamAssembler
from bloge.llm.providers.openai import parse_chat_response
from bloge.llm.providers.openai_stream import OpenAIStreamAssembler
from tests.llm.providers.wire_payloads import (
    ANTHROPIC_MODEL,
    OPENAI_MODEL,
    anthropic_events,
    anthropic_message,
    openai_completion,
    openai_stream,
)


def test_a_whole_answer_names_the_model_that_answered() -> None:
    assert parse_chat_response(openai_completion("Hi")).served_model == OPENAI_MODEL
    assert parse_messages_response(anthropic_message([{"type": "text", "text": "Hi"}])).served_model == \
        ANTHROPIC_MODEL


def test_a_streams_done_chunk_names_it_and_the_joined_answer_keeps_it() -> None:
    openai = OpenAIStreamAssembler()
    chunks = [c for payload in openai_stream(["Hel", "lo"]) for c in openai.feed(payload)]
    assert join_chunks([*chunks, *openai.finish()]).served_model == OPENAI_MODEL
    anthropic = AnthropicStreamAssembler()
    chunks = [c for event in anthropic_events(["Hi"]) for c in anthropic.feed(event)]
    assert join_chunks([*chunks, *anthropic.finish()]).served_model == ANTHROPIC_MODEL


def test_a_server_that_names_no_model_leaves_it_none() -> None:
    body = openai_completion("Hi")
    del body["model"]
    assert parse_chat_response(body).served_model is None
