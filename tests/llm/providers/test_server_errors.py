"""The server's own error message, from every error body shape we meet."""

from __future__ import annotations

import json

from bloge.llm.providers.server_errors import MAX_MESSAGE, redact, server_error_message
from tests.llm.providers.wire_payloads import anthropic_error, openai_error


def test_openai_error_bodies_give_message_type_and_code() -> None:
    body = json.dumps(openai_error("Rate limit reached for gpt-4o", "requests",
                                   "rate_limit_exceeded"))
    assert server_error_message(body) == (
        "Rate limit reached for gpt-4o (type: requests, code: rate_limit_exceeded)")


def test_anthropic_error_bodies_give_message_and_type() -> None:
    body = json.dumps(anthropic_error("overloaded_error", "Overloaded"))
    assert server_error_message(body) == "Overloaded (type: overloaded_error)"


def test_a_plain_string_error_is_the_message() -> None:
    assert server_error_message('{"error": "model \\"llama3\\" not found"}') == (
        'model "llama3" not found')


def test_a_detail_field_is_the_message() -> None:
    assert server_error_message('{"detail": "Not Found"}') == "Not Found"


def test_a_body_that_is_not_json_is_quoted_with_whitespace_collapsed() -> None:
    assert server_error_message("<html>\n  <h1>502 Bad Gateway</h1>\n</html>") == (
        "<html> <h1>502 Bad Gateway</h1> </html>")


def test_long_bodies_are_truncated() -> None:
    message = server_error_message("x" * 10_000)
    assert len(message) == MAX_MESSAGE
    assert message.endswith("…")


def test_an_empty_body_says_so() -> None:
    assert server_error_message("") == "(empty response body)"


def test_redact_replaces_every_secret_and_ignores_empty_ones() -> None:
    assert redact("key sk-1 and sk-1 again", ["sk-1", ""]) == "key *** and *** again"
