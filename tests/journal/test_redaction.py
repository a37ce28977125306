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


def test_every_secret_is_looked_for_not_only_the_first() -> None:
    redactor = Redactor(secrets=["sk-live-0123456789", "sk-ant-42", "pw-7"])
    event = redact(redactor, first="fine", second="uses pw-7", count=3, none=None)
    assert event == {"first": "fine", "second": f"uses {REDACTED}", "count": 3, "none": None}
    assert redact(redactor, text="holds none of them") == {"text": "holds none of them"}


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


#: The agent bridge's configuration: JSON fields, and the free-text field.
BRIDGE = {"json_keys": ["arguments_json", "result_summary"], "text_keys": ["error_message"]}


@pytest.mark.parametrize("key", ["token", "session_token", "Session-Token", "x-auth-token",
                                 "db_password", "Cookie", "aws_credentials", "private_key",
                                 "apiKey", "PASSWD"])
def test_sensitive_keys_are_redacted_by_substring_whatever_their_case(key: str) -> None:
    assert redact(Redactor(), **{key: "value"}) == {key: REDACTED}


def test_token_counts_are_kept_while_they_hold_numbers() -> None:
    counts = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
              "max_tokens": 1024, "prompt_tokens_details": {"cached_tokens": 0}}
    assert redact(Redactor(), **counts) == counts
    assert redact(Redactor(), access_tokens=["tok-1"]) == {"access_tokens": REDACTED}


def test_json_arguments_with_leading_whitespace_are_redacted() -> None:
    event = redact(Redactor(**BRIDGE), arguments_json='  {"session_token": "abc", "q": 1}')
    assert json.loads(event["arguments_json"]) == {"session_token": REDACTED, "q": 1}


def test_arguments_that_are_not_json_are_scanned_as_text() -> None:
    event = redact(Redactor(**BRIDGE), arguments_json="password=hunter2, user=ada")
    assert event == {"arguments_json": f"password={REDACTED}, user=ada"}


def test_malformed_json_arguments_never_reach_the_sink_raw() -> None:
    event = redact(Redactor(**BRIDGE), arguments_json='{"token": "abc", "q": ')
    assert event == {"arguments_json": f'{{"token": "{REDACTED}", "q": '}


def test_a_tool_result_cut_short_is_scanned_for_sensitive_pairs() -> None:
    summary = '{"user": "ada", "api_key": "sk-9", "profile": {"password": "pw", "bio": "a lo'
    event = redact(Redactor(**BRIDGE), result_summary=summary)
    assert event == {"result_summary": f'{{"user": "ada", "api_key": "{REDACTED}", '
                                       f'"profile": {{"password": "{REDACTED}", "bio": "a lo'}


def test_a_tool_result_that_is_json_is_redacted_as_data() -> None:
    event = redact(Redactor(**BRIDGE), result_summary='{"items": [{"secret": "s"}], "n": 2}')
    assert json.loads(event["result_summary"]) == {"items": [{"secret": REDACTED}], "n": 2}


def test_credentials_in_urls_are_masked_in_results() -> None:
    summary = '{"url": "https://ada:KEY-1@db.example/x?token=T-2&page=3"}'
    event = redact(Redactor(**BRIDGE), result_summary=summary)
    assert json.loads(event["result_summary"]) == {
        "url": f"https://ada:{REDACTED}@db.example/x?token={REDACTED}&page=3"}


def test_error_messages_are_scanned_as_text() -> None:
    message = "POST https://u:KEY-1@h.example/v1 failed; sent Authorization: Bearer sk-1"
    event = redact(Redactor(**BRIDGE), error_message=message)
    assert event == {"error_message": f"POST https://u:{REDACTED}@h.example/v1 failed; "
                                      f"sent Authorization: {REDACTED}"}


def test_a_json_key_spelled_with_escapes_is_still_redacted() -> None:
    event = redact(Redactor(**BRIDGE), arguments_json='{"\\u0070assword": "pw"}')
    assert json.loads(event["arguments_json"]) == {"password": REDACTED}


def test_every_string_field_is_scanned_unless_text_fields_are_named() -> None:
    assert redact(Redactor(), note="password=hunter2") == {"note": f"password={REDACTED}"}


def test_strings_inside_containers_are_scanned_as_text() -> None:
    event = redact(Redactor(**BRIDGE), headers=["Authorization: Bearer xyz", "Accept: */*"])
    assert event == {"headers": [f"Authorization: {REDACTED}", "Accept: */*"]}


def test_configured_keys_are_found_in_text_too() -> None:
    event = redact(Redactor(["customer_email"], **BRIDGE),
                   result_summary='{"customerEmail": "a@b.c", "id": 7')
    assert event == {"result_summary": f'{{"customerEmail": "{REDACTED}", "id": 7'}


def test_a_count_that_held_a_number_is_redacted_when_an_event_of_the_same_keys_holds_text() -> None:
    redactor = Redactor(**BRIDGE)
    assert redact(redactor, event="called", prompt_tokens=10) == {
        "event": "called", "prompt_tokens": 10}
    assert redact(redactor, event="called", prompt_tokens="tok-1") == {
        "event": "called", "prompt_tokens": REDACTED}


def test_an_event_of_known_keys_holding_a_container_is_still_redacted() -> None:
    redactor = Redactor(**BRIDGE)
    assert redact(redactor, event="e", payload="plain") == {"event": "e", "payload": "plain"}
    assert redact(redactor, event="e", payload={"api_key": "k"}) == {
        "event": "e", "payload": {"api_key": REDACTED}}


def test_a_text_field_of_known_keys_is_scanned_in_every_event() -> None:
    redactor = Redactor(**BRIDGE)
    assert redact(redactor, error_message=None) == {"error_message": None}
    assert redact(redactor, error_message="password=hunter2") == {
        "error_message": f"password={REDACTED}"}


def test_a_secret_split_by_the_fields_of_an_event_is_not_invented() -> None:
    redactor = Redactor(secrets=["ab\0cd"])
    assert redact(redactor, left="ab", right="cd") == {"left": "ab", "right": "cd"}
