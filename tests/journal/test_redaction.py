"""Redactor: configured and built-in keys at any depth, secret values inside strings."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bloge.journal import REDACTED, Redactor


def redact(redactor: Redactor, **event: Any) -> dict[str, Any]:
    return redactor(None, "info", dict(event))


def test_configured_keys_are_redacted_at_any_depth_whatever_their_case() -> None:
    event = redact(Redactor(["customer_email"]),
                   customer_email="a@b.c",
                   body={"items": [{"Customer-Email": "x@y.z", "sku": 7}], "CUSTOMER_EMAIL": "q"})
    assert event == {"customer_email": REDACTED,
                     "body": {"items": [{"Customer-Email": REDACTED, "sku": 7}],
                              "CUSTOMER_EMAIL": REDACTED}}


@pytest.mark.parametrize("key", ["api_key", "apiKey", "X-Api-Key", "Authorization", "password",
                                 "secret", "access_token", "refresh_token", "client_secret"])
def test_builtin_sensitive_keys_are_always_redacted(key: str) -> None:
    assert redact(Redactor(), **{key: "value"}) == {key: REDACTED}


def test_token_counts_are_not_secrets() -> None:
    counts = {"prompt_tokens": 10, "completion_tokens": 5, "total_llm_tokens": 15,
              "max_tokens": 1024}
    assert redact(Redactor(["token"]), **counts) == counts


def test_secret_values_are_replaced_inside_any_string_at_any_depth() -> None:
    redactor = Redactor(secrets=["sk-live-123", ""])
    event = redact(redactor, note="key sk-live-123 leaked twice: sk-live-123",
                   nested=[{"text": "Bearer sk-live-123"}, ("sk-live-123",)], other="fine")
    assert event == {"note": f"key {REDACTED} leaked twice: {REDACTED}",
                     "nested": [{"text": f"Bearer {REDACTED}"}, (REDACTED,)], "other": "fine"}


def test_a_secret_that_contains_another_is_hidden_whole() -> None:
    event = redact(Redactor(secrets=["abc", "abcdef"]), text="x abcdef y")
    assert event == {"text": f"x {REDACTED} y"}


def test_keys_inside_json_text_fields_are_redacted() -> None:
    redactor = Redactor(["pin"], secrets=["s3cr3t"], json_keys=["arguments_json"])
    arguments = json.dumps({"user": "ada", "pin": 1234, "auth": {"password": "p"},
                            "note": "s3cr3t"})
    event = redact(redactor, arguments_json=arguments)
    assert json.loads(event["arguments_json"]) == {
        "user": "ada", "pin": REDACTED, "auth": REDACTED, "note": REDACTED}


def test_json_text_without_anything_to_redact_is_kept_byte_for_byte() -> None:
    redactor = Redactor(json_keys=["arguments_json"])
    arguments = '{ "query" : "status" }'
    assert redact(redactor, arguments_json=arguments) == {"arguments_json": arguments}


def test_json_text_that_does_not_parse_still_has_its_secrets_hidden() -> None:
    redactor = Redactor(secrets=["s3cr3t"], json_keys=["arguments_json"])
    event = redact(redactor, arguments_json='{"cut": "s3cr3t')
    assert event == {"arguments_json": f'{{"cut": "{REDACTED}'}


def test_nested_values_of_the_caller_are_never_modified() -> None:
    nested = {"password": "p", "list": [{"api_key": "k"}]}
    redact(Redactor(), payload=nested)
    assert nested == {"password": "p", "list": [{"api_key": "k"}]}


def test_values_without_anything_to_redact_are_passed_through_unchanged() -> None:
    nested = {"a": [1, {"b": "c"}]}
    assert Redactor().redact(nested) is nested
