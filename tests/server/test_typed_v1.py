"""``/v1/chat/completions`` honours a client's ``response_format``: the official ``openai`` SDK
against a real server gets JSON that fits its schema, and ``parse()`` gets its model."""

from __future__ import annotations

import json

import openai
import pytest
from pydantic import BaseModel

from bloge.llm import ScriptedProvider
from bloge.llm.offline import OfflineProvider
from tests.server.conftest import Serve, V1Client


class Ticket(BaseModel):
    title: str
    priority: int


def test_parse_with_a_pydantic_model_returns_the_model(serve: Serve, v1_client: V1Client) -> None:
    provider = ScriptedProvider('{"title": "Printer jam", "priority": 2}')
    served = serve(provider)
    client = v1_client(served.url())
    completion = client.chat.completions.parse(
        model="helper", messages=[{"role": "user", "content": "file it"}],
        response_format=Ticket)
    assert completion.choices[0].message.parsed == Ticket(title="Printer jam", priority=2)
    asked = provider.requests[0].output
    assert asked is not None
    assert asked.strict
    assert asked.name == "Ticket"


def test_an_answer_that_fails_the_clients_schema_is_repaired_before_it_is_returned(
        serve: Serve, v1_client: V1Client) -> None:
    provider = ScriptedProvider('{"title": "Printer jam"}', '{"title": "Printer jam", "priority": 1}')
    served = serve(provider)
    client = v1_client(served.url())
    completion = client.chat.completions.create(
        model="helper", messages=[{"role": "user", "content": "file it"}],
        response_format={"type": "json_schema", "json_schema": {
            "name": "ticket", "strict": True, "schema": Ticket.model_json_schema()}})
    assert json.loads(completion.choices[0].message.content or "") == {
        "title": "Printer jam", "priority": 1}
    repair = provider.requests[1].messages[-1].content
    assert "$.priority: expected an integer (required), got nothing" in repair


def test_json_object_with_the_offline_model_answers_a_json_object(
        serve: Serve, v1_client: V1Client) -> None:
    served = serve(OfflineProvider())
    client = v1_client(served.url())
    completion = client.chat.completions.create(
        model="helper", messages=[{"role": "user", "content": "hello"}],
        response_format={"type": "json_object"})
    assert isinstance(json.loads(completion.choices[0].message.content or ""), dict)


def test_a_response_format_without_a_schema_is_a_400_naming_it(
        serve: Serve, v1_client: V1Client) -> None:
    served = serve(ScriptedProvider("Hi."))
    client = v1_client(served.url())
    with pytest.raises(openai.BadRequestError, match=r"response_format\.json_schema\.schema"):
        client.chat.completions.create(
            model="helper", messages=[{"role": "user", "content": "hi"}],
            response_format={"type": "json_schema", "json_schema": {"name": "x"}})  # type: ignore[typeddict-item]  # the mistake under test


def test_a_streamed_completion_parses_into_the_model(serve: Serve, v1_client: V1Client) -> None:
    served = serve(ScriptedProvider('{"title": "Printer jam", "priority": 2}'))
    client = v1_client(served.url())
    with client.chat.completions.stream(
            model="helper", messages=[{"role": "user", "content": "file it"}],
            response_format=Ticket) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].message.parsed == Ticket(title="Printer jam", priority=2)
