"""A request's own tools through the official ``openai`` SDK against a real server on
127.0.0.1: the model calls one, the completion ends with the calls (whole and streamed) and
the run waits; the client's next request with the results continues the same run, for the
same principal only. The agent's own tools keep running on the server, also in a round that
calls both."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import openai
import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState

from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, ScriptedProvider, ToolCall
from bloge.llm.offline import OfflineProvider
from bloge.server import ServerConfig
from bloge.store import open_store
from tests.server.conftest import Serve, Served, V1Client, served_app
from tests.server.live_server import LiveServer
from tests.store.conftest import POSTGRES_DSN, postgres_schema  # noqa: F401 -- a fixture

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"], "additionalProperties": False},
    "strict": True}}
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]
KEYS = {"api_keys": ("k-alice", "k-bob")}


def run_of(completion_id: str) -> str:
    return completion_id.removeprefix("chatcmpl-")


def run_record(served: Served, run_id: str, key: str = "none") -> dict[str, Any]:
    found: dict[str, Any] = httpx.get(served.url(f"/runs/{run_id}"), headers={
        "authorization": f"Bearer {key}"}).json()
    return found


def answered(calls: list[Any], results: list[str]) -> list[dict[str, Any]]:
    """The assistant message with ``calls`` and a tool message per result, as a client sends
    them back."""
    return [{"role": "assistant", "content": None, "tool_calls": [
        {"id": c.id, "type": "function",
         "function": {"name": c.function.name, "arguments": c.function.arguments}}
        for c in calls]},
        *({"role": "tool", "tool_call_id": c.id, "content": r} for c, r in zip(calls, results,
                                                                                 strict=True))]


def test_the_model_calls_a_client_tool_and_the_run_waits_for_its_result(
        serve: Serve, v1_client: V1Client) -> None:
    served = serve(OfflineProvider())
    sdk = v1_client(served.url())
    completion = sdk.chat.completions.create(model="helper", messages=ASK, tools=[WEATHER])
    [choice] = completion.choices
    assert choice.finish_reason == "tool_calls"
    [call] = choice.message.tool_calls or []
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "What is the weather in Paris?"}
    run = run_record(served, run_of(completion.id))
    assert run["status"] == "awaiting_tool_results"
    assert [p["call_id"] for p in run["pending_approvals"]] == [call.id]


def test_the_clients_results_continue_the_same_run_to_its_answer(
        serve: Serve, v1_client: V1Client) -> None:
    served = serve(OfflineProvider())
    sdk = v1_client(served.url())
    first = sdk.chat.completions.create(model="helper", messages=ASK, tools=[WEATHER])
    calls = first.choices[0].message.tool_calls or []
    second = sdk.chat.completions.create(
        model="helper", tools=[WEATHER], messages=[*ASK, *answered(calls, ["Sunny, 21 °C"])])
    assert second.choices[0].finish_reason == "stop"
    assert "Sunny, 21 °C" in (second.choices[0].message.content or "")
    assert run_of(second.id) == run_of(first.id)
    assert run_record(served, run_of(first.id))["status"] == "succeeded"


def streamed(sdk: openai.OpenAI, **request: Any) -> tuple[Any, list[Any]]:
    """The completion a stream adds up to (as the SDK adds it up), and its chunks."""
    state: ChatCompletionStreamState[None] = ChatCompletionStreamState()
    chunks = list(sdk.chat.completions.create(model="helper", stream=True, **request))
    for chunk in chunks:
        state.handle_chunk(chunk)
    return state.get_final_completion(), chunks


def test_a_streamed_completion_streams_the_calls_and_continues_streamed(
        serve: Serve, v1_client: V1Client) -> None:
    served = serve(OfflineProvider())
    sdk = v1_client(served.url())
    first, chunks = streamed(sdk, messages=ASK, tools=[WEATHER])
    assert first.choices[0].finish_reason == "tool_calls"
    deltas = [c.choices[0].delta.tool_calls for c in chunks if c.choices
              and c.choices[0].delta.tool_calls]
    opening = deltas[0][0]
    assert (opening.index, opening.type, opening.function and opening.function.name,
            opening.function and opening.function.arguments) == (0, "function", "get_weather",
                                                                  "")
    calls = first.choices[0].message.tool_calls or []
    assert [c.function.name for c in calls] == ["get_weather"]
    second, _ = streamed(sdk, tools=[WEATHER],
                         messages=[*ASK, *answered(calls, ["Sunny, 21 °C"])])
    assert second.choices[0].finish_reason == "stop"
    said = second.choices[0].message.content or ""
    assert "Sunny, 21 °C" in said
    assert first.choices[0].message.content not in said  # the first completion's text is not replayed
    assert run_of(second.id) == run_of(first.id)


def lookup_then_weather(request: LlmRequest) -> LlmResponse | str:
    """Turn 1: the agent's own ``lookup``; turn 2: the client's ``get_weather``; then an
    answer from both results."""
    said = [m for m in request.messages if m.role == "tool"]
    if not said:
        return LlmResponse(finish_reason="tool_calls", tool_calls=(
            ToolCall("c1", "lookup", '{"q": "paris"}'),))
    if len(said) == 1:
        return LlmResponse("Now the weather.", "tool_calls", tool_calls=(
            ToolCall("c2", "get_weather", '{"city": "Paris"}'),))
    return " / ".join(m.content for m in said)


def test_the_agents_own_tools_keep_running_on_the_server(serve: Serve, v1_client: V1Client) -> None:
    served = serve(FunctionProvider(lookup_then_weather))
    sdk = v1_client(served.url())
    first = sdk.chat.completions.create(model="helper", messages=ASK, tools=[WEATHER])
    message = first.choices[0].message
    assert message.content == "Now the weather."
    assert [c.function.name for c in message.tool_calls or []] == ["get_weather"]
    second = sdk.chat.completions.create(
        model="helper", tools=[WEATHER],
        messages=[*ASK, *answered(message.tool_calls or [], ["Sunny"])])
    assert second.choices[0].message.content == '{"found":"PARIS"} / Sunny'


def test_a_round_that_calls_both_runs_the_agents_tool_and_returns_the_clients(
        serve: Serve, v1_client: V1Client) -> None:
    provider = ScriptedProvider(
        LlmResponse(finish_reason="tool_calls", tool_calls=(
            ToolCall("c1", "lookup", '{"q": "paris"}'),
            ToolCall("c2", "get_weather", '{"city": "Paris"}'))),
        "Both are in.")
    served = serve(provider)
    sdk = v1_client(served.url())
    first = sdk.chat.completions.create(model="helper", messages=ASK, tools=[WEATHER])
    calls = first.choices[0].message.tool_calls or []
    assert [c.id for c in calls] == ["c2"]  # the server's own call is not the client's
    sdk.chat.completions.create(model="helper", tools=[WEATHER],
                                messages=[*ASK, *answered(calls, ["Sunny"])])
    results = [(m.tool_call_id, m.content) for m in provider.requests[1].messages
               if m.role == "tool"]
    assert results == [("c1", '{"found":"PARIS"}'), ("c2", "Sunny")]


def test_tool_choice_and_parallel_tool_calls_reach_the_model(
        serve: Serve, v1_client: V1Client) -> None:
    provider = FunctionProvider(lambda request: LlmResponse(
        finish_reason="tool_calls", tool_calls=(ToolCall("c9", "get_weather", "{}"),)))
    served = serve(provider)
    sdk = v1_client(served.url())
    sdk.chat.completions.create(
        model="helper", messages=ASK, tools=[WEATHER], parallel_tool_calls=False,
        tool_choice={"type": "function", "function": {"name": "get_weather"}})
    [request] = provider.requests
    assert (request.tool_choice, request.parallel_tool_calls) == ("get_weather", False)
    assert [t.name for t in request.tools] == ["lookup", "get_weather"]


def test_tool_choice_none_offers_the_model_only_the_agents_tools(
        serve: Serve, v1_client: V1Client) -> None:
    provider = ScriptedProvider("No tools needed.")
    served = serve(provider)
    sdk = v1_client(served.url())
    completion = sdk.chat.completions.create(model="helper", messages=ASK,
                                             tools=[WEATHER], tool_choice="none")
    assert completion.choices[0].finish_reason == "stop"
    assert [t.name for t in provider.requests[0].tools] == ["lookup"]


def test_another_principals_call_ids_are_not_found(serve: Serve, v1_client: V1Client) -> None:
    served = serve(OfflineProvider(), **KEYS)
    alice = v1_client(served.url(), api_key="k-alice")
    bob = v1_client(served.url(), api_key="k-bob")
    first = alice.chat.completions.create(model="helper", messages=ASK, tools=[WEATHER])
    calls = first.choices[0].message.tool_calls or []
    with pytest.raises(openai.NotFoundError, match="no paused run") as caught:
        bob.chat.completions.create(
            model="helper", tools=[WEATHER], messages=[*ASK, *answered(calls, ["Sunny"])])
    assert caught.value.body["param"] == "messages[2].tool_call_id"  # type: ignore[index]  # the SDK's body is the error object
    assert run_record(served, run_of(first.id), "k-alice")["status"] == "awaiting_tool_results"


def test_results_sent_twice_find_no_paused_run_the_second_time(
        serve: Serve, v1_client: V1Client) -> None:
    served = serve(OfflineProvider())
    sdk = v1_client(served.url())
    first = sdk.chat.completions.create(model="helper", messages=ASK, tools=[WEATHER])
    again = [*ASK, *answered(first.choices[0].message.tool_calls or [], ["Sunny"])]
    sdk.chat.completions.create(model="helper", tools=[WEATHER], messages=again)
    with pytest.raises(openai.NotFoundError, match="no paused run"):
        sdk.chat.completions.create(model="helper", tools=[WEATHER], messages=again)


def test_results_of_only_some_of_the_calls_are_refused_naming_the_missing(
        serve: Serve, v1_client: V1Client) -> None:
    both = LlmResponse(finish_reason="tool_calls", tool_calls=(
        ToolCall("w1", "get_weather", '{"city": "Paris"}'),
        ToolCall("w2", "get_weather", '{"city": "Rome"}')))
    served = serve(ScriptedProvider(both))
    sdk = v1_client(served.url())
    first = sdk.chat.completions.create(model="helper", messages=ASK, tools=[WEATHER])
    [paris, _] = first.choices[0].message.tool_calls or []
    with pytest.raises(openai.BadRequestError, match="'w2'"):
        sdk.chat.completions.create(model="helper", tools=[WEATHER],
                                    messages=[*ASK, *answered([paris], ["Sunny"])])


def test_results_sent_without_the_tools_still_continue_the_run(
        serve: Serve, v1_client: V1Client) -> None:
    served = serve(OfflineProvider())
    sdk = v1_client(served.url())
    first = sdk.chat.completions.create(model="helper", messages=ASK, tools=[WEATHER])
    calls = first.choices[0].message.tool_calls or []
    second = sdk.chat.completions.create(
        model="helper", messages=[*ASK, *answered(calls, ["Sunny"])])
    assert "Sunny" in (second.choices[0].message.content or "")


def test_a_stream_whose_model_only_calls_the_clients_tool_streams_the_call(
        serve: Serve, v1_client: V1Client) -> None:
    silent = LlmResponse(finish_reason="tool_calls", tool_calls=(
        ToolCall("w1", "get_weather", '{"city": "Paris"}'),))
    served = serve(ScriptedProvider(silent))  # no text before the call: no token at all
    sdk = v1_client(served.url())
    completion, _ = streamed(sdk, messages=ASK, tools=[WEATHER],
                             stream_options={"include_usage": True})
    assert completion.choices[0].finish_reason == "tool_calls"
    assert [c.id for c in completion.choices[0].message.tool_calls or []] == ["w1"]


def test_the_round_trip_works_on_postgresql_too(request: pytest.FixtureRequest,
                                                v1_client: V1Client) -> None:
    schema = request.getfixturevalue("postgres_schema")  # skipped without PostgreSQL
    store = open_store(f"{POSTGRES_DSN}?schema={schema}")
    try:
        with LiveServer(served_app(OfflineProvider(), store, ServerConfig())) as server:
            sdk = v1_client(server.url())
            first = sdk.chat.completions.create(model="helper", messages=ASK, tools=[WEATHER])
            calls = first.choices[0].message.tool_calls or []
            second = sdk.chat.completions.create(model="helper", tools=[WEATHER],
                                                 messages=[*ASK, *answered(calls, ["Sunny"])])
        assert run_of(second.id) == run_of(first.id)
        assert "Sunny" in (second.choices[0].message.content or "")
    finally:
        asyncio.run(store.aclose())


def test_a_run_continued_outside_v1_still_offers_the_clients_tools(
        serve: Serve, v1_client: V1Client) -> None:
    def weather(call_id: str) -> LlmResponse:
        return LlmResponse(finish_reason="tool_calls", tool_calls=(
            ToolCall(call_id, "get_weather", '{"city": "Paris"}'),))

    served = serve(ScriptedProvider(weather("w1"), weather("w2")))
    sdk = v1_client(served.url())
    first = sdk.chat.completions.create(model="helper", messages=ASK, tools=[WEATHER])
    run_id = run_of(first.id)
    posted = httpx.post(served.url(f"/runs/{run_id}/tool-results"), json={"w1": "Sunny"})
    assert posted.json()["continued"] is True
    with httpx.stream("GET", served.url(f"/runs/{run_id}/stream"), timeout=30) as stream:
        "".join(stream.iter_text())  # to the run's end: it waits again
    assert run_record(served, run_id)["status"] == "awaiting_tool_results"
    requests = served.provider.requests  # type: ignore[attr-defined]  # a ScriptedProvider
    assert "get_weather" in [tool.name for tool in requests[1].tools]


def same_call_id(request: LlmRequest) -> LlmResponse | str:
    """A model server that names every call ``call_0``: the weather of the question's city,
    then an answer from its result."""
    said = [m for m in request.messages if m.role == "tool"]
    if said:
        return f"Result: {said[-1].content}"
    city = str(request.messages[-1].content).rsplit(maxsplit=1)[-1]
    return LlmResponse(finish_reason="tool_calls", tool_calls=(
        ToolCall("call_0", "get_weather", json.dumps({"city": city})),))


def test_results_continue_the_run_whose_conversation_they_carry_when_call_ids_repeat(
        serve: Serve, v1_client: V1Client) -> None:
    served = serve(FunctionProvider(same_call_id))
    sdk = v1_client(served.url())
    metz = [{"role": "user", "content": "What is the weather in Metz"}]
    lille = [{"role": "user", "content": "What is the weather in Lille"}]
    first = sdk.chat.completions.create(model="helper", messages=metz, tools=[WEATHER])
    other = sdk.chat.completions.create(model="helper", messages=lille, tools=[WEATHER])
    calls = first.choices[0].message.tool_calls or []
    assert [c.id for c in calls] == [c.id for c in other.choices[0].message.tool_calls or []]
    answer = sdk.chat.completions.create(
        model="helper", tools=[WEATHER], messages=[*metz, *answered(calls, ["Metz: 12 C"])])
    assert run_of(answer.id) == run_of(first.id)
    assert answer.choices[0].message.content == "Result: Metz: 12 C"
    assert run_record(served, run_of(other.id))["status"] == "awaiting_tool_results"


def test_results_whose_calls_differ_from_every_paused_runs_are_not_found(
        serve: Serve, v1_client: V1Client) -> None:
    served = serve(FunctionProvider(same_call_id))
    sdk = v1_client(served.url())
    first = sdk.chat.completions.create(model="helper", messages=ASK, tools=[WEATHER])
    [call] = first.choices[0].message.tool_calls or []
    call.function.arguments = json.dumps({"city": "Nancy"})
    with pytest.raises(openai.NotFoundError, match="does not match") as caught:
        sdk.chat.completions.create(model="helper", tools=[WEATHER],
                                    messages=[*ASK, *answered([call], ["Rain"])])
    assert caught.value.body["code"] == "tool_call_not_found"  # type: ignore[index]  # the SDK's body is the error object
    assert run_record(served, run_of(first.id))["status"] == "awaiting_tool_results"


def twice_call_0(request: LlmRequest) -> LlmResponse | str:
    """Two rounds of the client's tool, both calls named ``call_0``, then an answer."""
    said = [m.content for m in request.messages if m.role == "tool"]
    if len(said) < 2:
        return LlmResponse(finish_reason="tool_calls", tool_calls=(
            ToolCall("call_0", "get_weather", json.dumps({"round": len(said)})),))
    return " / ".join(said)


def test_a_later_round_of_repeated_call_ids_continues_its_own_run(
        serve: Serve, v1_client: V1Client) -> None:
    served = serve(FunctionProvider(twice_call_0))
    sdk = v1_client(served.url())
    metz = [{"role": "user", "content": "Metz"}]
    first = sdk.chat.completions.create(model="helper", messages=metz, tools=[WEATHER])
    sdk.chat.completions.create(model="helper", messages=[{"role": "user", "content": "Lille"}],
                                tools=[WEATHER])
    metz += answered(first.choices[0].message.tool_calls or [], ["12 C"])
    second = sdk.chat.completions.create(model="helper", messages=metz, tools=[WEATHER])
    metz += answered(second.choices[0].message.tool_calls or [], ["dry"])
    third = sdk.chat.completions.create(model="helper", messages=metz, tools=[WEATHER])
    assert run_of(second.id) == run_of(third.id) == run_of(first.id)
    assert third.choices[0].message.content == "12 C / dry"
