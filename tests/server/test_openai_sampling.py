"""``/v1/chat/completions`` passes how the client wants the model to answer —
``temperature``, ``max_completion_tokens``/``max_tokens``, ``stop``, ``seed`` — to every model
call of that run, through the official ``openai`` SDK against a real server."""

from __future__ import annotations

import openai
import pytest

from bloge.llm import LlmRequest, LlmResponse, ScriptedProvider, ToolCall
from tests.server.conftest import Serve, V1Client

LOOKUP = LlmResponse("", "tool_calls", tool_calls=(ToolCall("c1", "lookup", '{"q": "kb"}'),))
HI = [{"role": "user", "content": "Hi"}]


def sampled(request: LlmRequest) -> tuple[object, ...]:
    return (request.temperature, request.max_tokens, request.stop, request.seed)


def test_every_model_call_of_the_run_gets_the_clients_sampling(
        serve: Serve, v1_client: V1Client) -> None:
    provider = ScriptedProvider(LOOKUP, "Found KB.")
    sdk = v1_client(serve(provider).url())
    sdk.chat.completions.create(model="helper", messages=HI, temperature=0.3,
                                max_completion_tokens=40, stop=["END"], seed=7)
    assert [sampled(r) for r in provider.requests] == [(0.3, 40, ("END",), 7)] * 2


def test_a_stream_gets_the_clients_sampling_too(serve: Serve, v1_client: V1Client) -> None:
    provider = ScriptedProvider("Hello.")
    sdk = v1_client(serve(provider).url())
    stream = sdk.chat.completions.create(model="helper", messages=HI, stream=True,
                                         max_tokens=16, stop="\n\n", temperature=0)
    assert "".join(c.choices[0].delta.content or "" for c in stream) == "Hello."
    assert [sampled(r) for r in provider.requests] == [(0.0, 16, ("\n\n",), None)]


def test_a_run_that_asks_nothing_keeps_the_agents_own(serve: Serve, v1_client: V1Client) -> None:
    provider = ScriptedProvider("One.", "Two.")
    sdk = v1_client(serve(provider).url())
    sdk.chat.completions.create(model="helper", messages=HI, max_tokens=5, seed=1)
    sdk.chat.completions.create(model="helper", messages=HI)
    assert [sampled(r) for r in provider.requests] == [(None, 5, (), 1), (None, None, (), None)]


@pytest.mark.parametrize(("options", "param"), [
    ({"max_tokens": 10, "max_completion_tokens": 20}, "max_tokens"),
    ({"stop": ["a", "b", "c", "d", "e"]}, "stop"),
    ({"stop": [""]}, "stop"),
    ({"seed": 1.5}, "seed"),
    ({"max_completion_tokens": 0}, "max_completion_tokens"),
])
def test_sampling_that_cannot_be_honoured_is_a_bad_request(serve: Serve, v1_client: V1Client,
                                                           options: dict, param: str) -> None:
    provider = ScriptedProvider()
    sdk = v1_client(serve(provider).url())
    with pytest.raises(openai.BadRequestError) as caught:
        sdk.chat.completions.create(model="helper", messages=HI, **options)
    assert caught.value.param == param
    assert provider.requests == []


@pytest.mark.parametrize(("stop", "said"), [
    (["a", "b", "c", "d", "e"], "stop: up to 4 stop sequences, got 5"),
    (["a", ""], "stop: a stop sequence must not be empty"),
])
def test_a_stop_list_out_of_bounds_is_told_what_the_bound_is(
        serve: Serve, v1_client: V1Client, stop: list[str], said: str) -> None:
    sdk = v1_client(serve(ScriptedProvider()).url())
    with pytest.raises(openai.BadRequestError) as caught:
        sdk.chat.completions.create(model="helper", messages=HI, stop=stop)
    assert said in caught.value.message
