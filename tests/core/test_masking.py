"""Credential masking: which names are secret, and credentials found in text and URLs."""

from __future__ import annotations

import pytest

from bloge.core.masking import (
    CredentialMasker,
    holds_no_text,
    mask_credentials,
    mask_url_credentials,
    mask_urls_in,
    name_kind,
)


@pytest.mark.parametrize("name", [
    "token", "session_token", "Session-Token", "x-auth-token", "accessToken", "db.password",
    "PASSWD", "client_secret", "api_key", "apiKey", "X-Api-Key", "api-key", "Authorization",
    "Proxy-Authorization", "Cookie", "Set-Cookie", "aws_credentials", "private_key", "auth",
    "basic_auth", "passphrase",
])
def test_names_are_sensitive_by_substring_whatever_their_case(name: str) -> None:
    assert name_kind(name) == "sensitive"


@pytest.mark.parametrize("name", ["prompt_tokens", "completion_tokens", "total_tokens",
                                  "max_tokens", "total_llm_tokens", "prompt_tokens_details"])
def test_token_count_names_are_counts_not_secrets(name: str) -> None:
    assert name_kind(name) == "count"


@pytest.mark.parametrize("name", ["query", "author", "key_points", "tool_name", "model"])
def test_ordinary_names_are_safe(name: str) -> None:
    assert name_kind(name) == "safe"


def test_counts_hold_numbers_and_nulls_but_no_text() -> None:
    assert holds_no_text({"cached_tokens": 0, "audio": None, "all": [1, 2.5, True]})
    assert not holds_no_text(["tok-123"])


def test_a_url_password_is_masked_and_its_user_kept() -> None:
    assert (mask_url_credentials("https://ada:KEY-1@proxy.example/v1")
            == "https://ada:****@proxy.example/v1")


@pytest.mark.parametrize("password", ["pa?ss", "pa#ss", "pa/ss", "p?a#s/s"])
def test_a_url_password_with_unencoded_delimiters_is_masked_whole(password: str) -> None:
    # Before, "?", "#" or "/" ended the user-info: the password was left in clear.
    assert (mask_url_credentials(f"cannot reach postgresql://bob:{password}@db:5432/shop")
            == "cannot reach postgresql://bob:****@db:5432/shop")


def test_a_url_whose_user_info_is_a_token_has_all_of_it_masked() -> None:
    assert mask_url_credentials("git clone https://ghp_abc@github.com/x.git") == (
        "git clone https://****@github.com/x.git")


def test_credential_query_parameters_are_masked_and_the_others_kept() -> None:
    url = "https://h.example/v1?api-key=K1&key=K2&q=shoes&token=K3&sig=K4&max_tokens=5#top"
    assert mask_url_credentials(url) == (
        "https://h.example/v1?api-key=****&key=****&q=shoes&token=****&sig=****"
        "&max_tokens=5#top")


@pytest.mark.parametrize(("text", "masked"), [
    ("login with password=hunter2 now", "login with password=**** now"),
    ('{"token": "abc", "n": 1}', '{"token": "****", "n": 1}'),
    ("{'api_key': 'sk-1', 'x': 2}", "{'api_key': '****', 'x': 2}"),
    ("Authorization: Bearer xyz", "Authorization: ****"),
    ("X-Api-Key: abc123\nAccept: */*", "X-Api-Key: ****\nAccept: */*"),
    ("session_token=abc; path=/", "session_token=****; path=/"),
    ('{"secret": "cut sho', '{"secret": "****'),
    ("see Bearer abc.def-1", "see Bearer ****"),
    # JSON inside a JSON string, as a provider's error body quotes tool arguments
    ('"arguments": "{\\"q\\": \\"x\\", \\"api_key\\": \\"sk-1 2\\"}"',
     '"arguments": "{\\"q\\": \\"x\\", \\"api_key\\": \\"****\\"}"'),
    ('"{\\"password\\": \\"cut sho', '"{\\"password\\": \\"****'),
])
def test_credentials_in_text_are_masked(text: str, masked: str) -> None:
    assert mask_credentials(text) == masked


def test_token_counts_in_text_are_kept() -> None:
    text = '{"prompt_tokens": 10, "total_tokens": 12, "max_tokens": "many"}'
    assert mask_credentials(text) == (
        '{"prompt_tokens": 10, "total_tokens": 12, "max_tokens": "****"}')


def test_a_container_under_a_sensitive_name_is_masked_whole() -> None:
    text = '{"credentials": {"user": "ada", "pin": "1234", "nested": [1, "}"]}, "ok": true}'
    assert mask_credentials(text) == '{"credentials": ****, "ok": true}'


def test_a_container_cut_short_is_masked_to_the_end() -> None:
    assert mask_credentials('{"auth": {"user": "ada", "pin": "12') == '{"auth": ****'


def test_text_without_credentials_is_returned_as_is() -> None:
    text = "The author: Ada. See https://docs.example/a?q=1 and key points: none"
    assert mask_credentials(text) is text


def test_configured_names_and_masks_are_used() -> None:
    masker = CredentialMasker(["customer_email"], mask="[redacted]")
    assert masker("Customer-Email: a@b.c") == "Customer-Email: [redacted]"


def test_mask_urls_in_masks_every_string_of_a_document_and_copies_it() -> None:
    document = {"settings": {"base-url": "https://u:KEY@h/v1"}, "notes": ["https://T@h", 3]}
    assert mask_urls_in(document) == {"settings": {"base-url": "https://u:****@h/v1"},
                                      "notes": ["https://****@h", 3]}
    assert document["settings"] == {"base-url": "https://u:KEY@h/v1"}
