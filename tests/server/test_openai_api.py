"""The OpenAI-compatible API through the official ``openai`` SDK, unchanged, against a real
server on 127.0.0.1: models, completions whole and streamed, errors before and during a
stream, keys, and a client that goes away."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import openai
import pytest

from bloge.core.errors import ProviderError
from bloge.llm import LlmChunk, LlmRequest, LlmResponse, ScriptedProvider, ToolCall
from tests.server.conftest import Serve, V1Client

LOOKUP = LlmResponse("", "tool_calls", tool_calls=(ToolCall("c1", "lookup", '{"q": "kb"}'),))
HI = [{"role": "user", "content": "Hi"}]


class Trickle:
    """A model that streams ``text``, then waits on ``then()`` (which may raise)."""

    def __init__(self, text: str, then: Callable[[], Awaitable[None]]) -> None:
        self.text = text
        self.then = then

    async def chat(self, request: LlmRequest) -> LlmResponse:
        raise AssertionError("the OpenAI streams use the streaming operator")

    async def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        if self.text:
            yield LlmChunk(content=self.text)
        await self.then()
        yield LlmChunk(done=True)


async def forever() -> None:
    await asyncio.Event().wait()


async def fail() -> None:
    raise ProviderError("the model went away", provider="test", status_code=502)


def run_of(completion_id: str) -> str:
    return completion_id.removeprefix("chatcmpl-")


def test_the_agents_are_listed_as_models(serve: Serve, v1_client: V1Client) -> None:
    served = serve(ScriptedProvider())
    sdk = v1_client(served.url())
    models = sdk.models.list()
    assert [(m.id, m.object, m.owned_by) for m in models] == [
        ("helper", "model", "bloge"), ("other", "model", "bloge")]
    assert sdk.models.retrieve("other").id == "other"


def test_an_unknown_model_is_not_found(serve: Serve, v1_client: V1Client) -> None:
    served = serve(ScriptedProvider())
    sdk = v1_client(served.url())
    with pytest.raises(openai.NotFoundError, match="did you mean 'helper'"):
        sdk.chat.completions.create(model="helpr", messages=HI)
    with pytest.raises(openai.NotFoundError):
        sdk.models.retrieve("nope")


def test_an_endpoint_it_does_not_serve_is_a_404_in_openais_error_shape(
        serve: Serve, v1_client: V1Client) -> None:
    served = serve(ScriptedProvider())
    sdk = v1_client(served.url())
    with pytest.raises(openai.NotFoundError) as raised:  # before: the text/plain "Not Found"
        sdk.embeddings.create(model="helper", input="hi")
    assert raised.value.body == {"message": "no endpoint POST /v1/embeddings",
                                 "type": "not_found_error", "param": None, "code": None}


def test_a_method_it_does_not_take_is_a_405_in_openais_error_shape(serve: Serve) -> None:
    served = serve(ScriptedProvider())
    response = httpx.get(served.url("/v1/chat/completions"))
    assert (response.status_code, response.headers["allow"]) == (405, "POST")
    assert response.json()["error"] == {
        "message": "GET /v1/chat/completions: the method is not allowed here (allowed: POST)",
        "type": "invalid_request_error", "param": None, "code": None}


def test_a_completion_is_the_agents_answer_with_its_usage(
        serve: Serve, v1_client: V1Client) -> None:
    served = serve(ScriptedProvider(LlmResponse("Hello.", prompt_tokens=5,
                                                completion_tokens=2)))
    sdk = v1_client(served.url())
    completion = sdk.chat.completions.create(model="helper", messages=HI)
    assert completion.choices[0].message.content == "Hello."
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.total_tokens) == (5, 7)
    run = httpx.get(served.url(f"/runs/{run_of(completion.id)}")).json()
    assert (run["status"], run["agent_id"]) == ("succeeded", "helper")


def test_the_agents_tools_run_on_the_server(serve: Serve, v1_client: V1Client) -> None:
    provider = ScriptedProvider(LOOKUP, "Found KB.")
    served = serve(provider)
    sdk = v1_client(served.url())
    completion = sdk.chat.completions.create(model="helper", messages=HI)
    assert completion.choices[0].message.content == "Found KB."
    assert provider.requests[1].messages[-1].content == '{"found":"KB"}'


def test_the_messages_come_after_the_agents_system_prompt(
        serve: Serve, v1_client: V1Client) -> None:
    provider = ScriptedProvider("You are Ada.")
    served = serve(provider)
    sdk = v1_client(served.url())
    sdk.chat.completions.create(model="helper", messages=[
        {"role": "system", "content": "Answer in English."},
        {"role": "user", "content": "I am Ada."}, {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": [{"type": "text", "text": "Who am I?"}]}])
    assert [m.content for m in provider.requests[0].messages] == [
        "Be brief.", "Answer in English.", "I am Ada.", "Hello.", "Who am I?"]


def test_a_stream_sends_the_tokens_and_with_include_usage_a_last_usage_chunk(
        serve: Serve, v1_client: V1Client) -> None:
    served = serve(ScriptedProvider(LlmResponse("Found the word.", prompt_tokens=5,
                                                completion_tokens=3)))
    sdk = v1_client(served.url())
    chunks = list(sdk.chat.completions.create(
        model="helper", messages=HI, stream=True, stream_options={"include_usage": True}))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks[:-1]) == "Found the word."
    assert [c.choices[0].finish_reason for c in chunks[:-1]][-1] == "stop"
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens == 8
    assert all(c.usage is None for c in chunks[:-1])


def test_a_stream_shows_no_tool_activity(serve: Serve, v1_client: V1Client) -> None:
    served = serve(ScriptedProvider(LOOKUP, "Found KB."))
    sdk = v1_client(served.url())
    chunks = list(sdk.chat.completions.create(model="helper", messages=HI, stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "Found KB."
    assert all(c.choices[0].delta.tool_calls is None for c in chunks)


def test_an_agent_out_of_turns_finishes_with_length(serve: Serve, v1_client: V1Client) -> None:
    served = serve(ScriptedProvider(*[LOOKUP] * 8))
    sdk = v1_client(served.url())
    whole = sdk.chat.completions.create(model="helper", messages=HI)
    streamed = list(sdk.chat.completions.create(model="helper", messages=HI, stream=True))
    assert whole.choices[0].finish_reason == "length"
    assert streamed[-1].choices[0].finish_reason == "length"


def test_a_run_failing_mid_stream_raises_during_the_iteration(
        serve: Serve, v1_client: V1Client) -> None:
    served = serve(Trickle("Hel", fail))
    sdk = v1_client(served.url())
    stream = sdk.chat.completions.create(model="helper", messages=HI, stream=True)
    chunks = iter(stream)
    seen = [next(chunks).choices[0].delta.content, next(chunks).choices[0].delta.content]
    with pytest.raises(openai.APIError, match="the model went away") as caught:
        next(chunks)
    assert seen == ["", "Hel"]
    assert caught.value.code == "run_failed"


def test_a_run_failing_before_its_first_token_has_its_real_status_and_is_not_retried(
        serve: Serve, v1_client: V1Client) -> None:
    served = serve(Trickle("", fail))
    retrying = v1_client(served.url(), max_retries=2)  # the SDK's default, retries on a 5xx
    with pytest.raises(openai.InternalServerError, match="the model went away"):
        retrying.chat.completions.create(model="helper", messages=HI, stream=True)
    assert len(asyncio.run(served.store.list_runs())) == 1


def test_a_stream_starts_while_the_run_works_without_tokens(
        serve: Serve, v1_client: V1Client) -> None:
    release = threading.Event()

    async def slow_start() -> None:
        await asyncio.to_thread(release.wait)  # answers once the client holds the stream

    served = serve(Trickle("", slow_start), keepalive=0.01)
    try:
        stream = v1_client(served.url(), timeout=30).chat.completions.create(
            model="helper", messages=HI, stream=True)
    finally:
        release.set()
    assert [c.choices[0].finish_reason for c in stream] == [None, "stop"]


def test_a_client_leaving_mid_stream_cancels_its_run(serve: Serve, v1_client: V1Client) -> None:
    served = serve(Trickle("Hel", forever))
    sdk = v1_client(served.url())
    stream = sdk.chat.completions.create(model="helper", messages=HI, stream=True)
    first = next(iter(stream))
    stream.close()
    run_id = run_of(first.id)
    httpx.get(served.url(f"/runs/{run_id}/stream"), timeout=30)  # returns once the run ended
    assert httpx.get(served.url(f"/runs/{run_id}")).json()["status"] == "cancelled"


@pytest.mark.parametrize(("options", "param"), [
    ({"n": 2}, "n"), ({"temperature": "hot"}, "temperature"), ({"messages": []}, "messages"),
    ({"tools": [{"type": "function", "function": {"name": "f g"}}]},
     "tools[0].function.name"),
    # JSON's types as they are, as OpenAI's API takes them: "yes" is not true
    ({"stream": "yes"}, "stream"), ({"temperature": "0.5"}, "temperature")])
def test_a_request_that_cannot_be_honoured_is_a_bad_request(serve: Serve, v1_client: V1Client,
                                                            options: dict, param: str) -> None:
    served = serve(ScriptedProvider())
    sdk = v1_client(served.url())
    with pytest.raises(openai.BadRequestError) as caught:
        sdk.chat.completions.create(**{"model": "helper", "messages": HI, **options})
    assert caught.value.param == param


def test_with_api_keys_a_wrong_key_is_refused_and_the_right_one_works(
        serve: Serve, v1_client: V1Client) -> None:
    served = serve(ScriptedProvider("Hello."), api_keys=("k1",))
    wrong = v1_client(served.url(), api_key="k2")
    with pytest.raises(openai.AuthenticationError):
        wrong.chat.completions.create(model="helper", messages=HI)
    right = v1_client(served.url(), api_key="k1")
    assert right.chat.completions.create(model="helper", messages=HI).choices[0].message \
        .content == "Hello."


def test_a_run_past_the_servers_limit_is_rate_limited(serve: Serve, v1_client: V1Client) -> None:
    served = serve(Trickle("Hel", forever), max_concurrent_runs=1)
    sdk = v1_client(served.url())
    busy = sdk.chat.completions.create(model="helper", messages=HI, stream=True)
    next(iter(busy))
    with pytest.raises(openai.RateLimitError):
        sdk.chat.completions.create(model="helper", messages=HI)
    busy.close()


def test_the_async_client_works_whole_and_streamed(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hello.", "Hello again."))

    async def scenario() -> tuple[str | None, str]:
        async with openai.AsyncOpenAI(base_url=served.url("/v1"), api_key="none") as aclient:
            whole = await aclient.chat.completions.create(model="helper", messages=HI)
            stream = await aclient.chat.completions.create(model="helper", messages=HI,
                                                           stream=True)
            text = "".join([c.choices[0].delta.content or "" async for c in stream])
            return whole.choices[0].message.content, text

    assert asyncio.run(scenario()) == ("Hello.", "Hello again.")


def test_a_failed_completion_names_its_run_as_its_record_tells_it(
        serve: Serve, v1_client: V1Client) -> None:
    async def leaky() -> None:
        raise ProviderError("the model went away (password=hunter2)", provider="test",
                            status_code=502)

    served = serve(Trickle("", leaky))
    sdk = v1_client(served.url())
    with pytest.raises(openai.InternalServerError) as caught:
        sdk.chat.completions.create(model="helper", messages=HI, stream=True)
    [run] = asyncio.run(served.store.list_runs())
    assert run.error is not None
    assert caught.value.message.endswith(f" - run {run.id} failed: {run.error.message}")
    assert "hunter2" not in caught.value.message
