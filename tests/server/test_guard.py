"""Safe by default: API keys, Host and Origin checks, CORS only when configured, limits on
bodies, concurrent runs and run time."""

from __future__ import annotations

import asyncio
import json
import logging
import threading

import httpx
import openai
import pytest

from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, ScriptedProvider
from bloge.store import Run
from bloge.store.follow import follow
from tests.server.conftest import Serve, Served, V1Client
from tests.server.test_runs_api import LOOKUP


def hanging_model() -> tuple[FunctionProvider, threading.Event]:
    started = threading.Event()

    async def hang(request: LlmRequest) -> LlmResponse:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("never answers")

    return FunctionProvider(hang), started


def test_with_keys_every_endpoint_but_healthz_needs_one(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hi."), api_keys=("key-1", "key-2"))
    assert httpx.get(served.url("/healthz")).status_code == 200
    refused = httpx.get(served.url("/agents"))
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == "Bearer"
    assert httpx.get(served.url("/agents"), headers={"Authorization": "Bearer nope"}
                     ).status_code == 401
    assert httpx.get(served.url("/agents"), headers={"Authorization": "Bearer key-2"}
                     ).status_code == 200


@pytest.mark.parametrize("header", ["Authorization", "X-Api-Key"])
@pytest.mark.parametrize("keys", [(), ("key-1",)])
def test_two_credential_headers_are_a_400(serve: Serve, header: str,
                                          keys: tuple[str, ...]) -> None:
    served = serve(ScriptedProvider("Hi."), api_keys=keys)
    doubled = httpx.get(served.url("/agents"), headers=[(header, "Bearer key-1"),
                                                        (header, "Bearer key-1")])
    assert doubled.status_code == 400
    assert f"more than one {header} header" in doubled.json()["error"]["message"]


def test_a_host_the_server_does_not_serve_is_refused(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hi."))
    response = httpx.get(served.url("/agents"), headers={"Host": "rebound.example:8000"})
    assert response.status_code == 400
    assert "rebound.example" in response.json()["error"]["message"]


def test_a_foreign_origin_is_refused_and_the_servers_own_is_not(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hi."))
    foreign = httpx.get(served.url("/agents"), headers={"Origin": "https://attacker.example"})
    assert foreign.status_code == 403
    own = httpx.get(served.url("/agents"),
                    headers={"Origin": f"http://127.0.0.1:{served.server.port}"})
    assert own.status_code == 200
    assert "access-control-allow-origin" not in own.headers


def test_a_page_of_another_port_on_the_same_host_is_a_foreign_origin(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hi."))
    port = served.server.port
    # before: only the origin's host name was checked, so another local app could run agents
    other_port = httpx.post(served.url("/chat"), content="Hi",
                            headers={"Origin": f"http://127.0.0.1:{port + 1}"})
    assert other_port.status_code == 403
    assert other_port.json()["error"]["type"] == "permission_error"
    other_scheme = httpx.post(served.url("/chat"), content="Hi",
                              headers={"Origin": "https://127.0.0.1"})
    assert other_scheme.status_code == 403
    own = httpx.post(served.url("/chat"), content="Hi",
                     headers={"Origin": f"http://localhost:{port}", "Host": f"localhost:{port}"})
    assert own.status_code == 200


def test_cors_answers_the_configured_origins_only(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hi."), cors_origins=("https://app.example",))
    preflight = httpx.options(served.url("/agents/helper/runs"), headers={
        "Origin": "https://app.example", "Access-Control-Request-Method": "POST"})
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == "https://app.example"
    assert "Authorization" in preflight.headers["access-control-allow-headers"]
    response = httpx.get(served.url("/agents"), headers={"Origin": "https://app.example"})
    assert response.headers["access-control-allow-origin"] == "https://app.example"


@pytest.mark.parametrize("chunked", [False, True])
def test_a_body_over_the_limit_is_a_413(serve: Serve, chunked: bool) -> None:
    served = serve(ScriptedProvider("Hi."), max_body_bytes=1000)
    body = b"x" * 5000
    content = (part for part in (body[:2500], body[2500:])) if chunked else body
    response = httpx.post(served.url("/chat"), content=content)
    assert response.status_code == 413


def test_runs_past_the_limit_get_a_429_with_retry_after(serve: Serve) -> None:
    provider, started = hanging_model()
    served = serve(provider, max_concurrent_runs=1)

    async def scenario() -> httpx.Response:
        async with httpx.AsyncClient(timeout=30) as client:
            first = asyncio.create_task(client.post(served.url("/chat"), content=b"one"))
            await asyncio.to_thread(started.wait)
            second = await client.post(served.url("/chat"), content=b"two")
            first.cancel()
            return second

    second = asyncio.run(scenario())
    assert second.status_code == 429
    assert second.headers["retry-after"] == "1"


def test_a_run_past_the_request_time_limit_is_cancelled_with_a_504(serve: Serve) -> None:
    provider, _ = hanging_model()
    served = serve(provider, request_timeout=0.2)
    response = httpx.post(served.url("/agents/helper/runs"), json={"input": "Hang"}, timeout=30)
    assert response.status_code == 504
    (run,) = asyncio.run(served.store.list_runs())
    assert run.status.value == "cancelled"


def test_a_client_that_disconnects_cancels_its_run(serve: Serve) -> None:
    provider, started = hanging_model()
    served = serve(provider)

    async def scenario() -> None:
        async with httpx.AsyncClient(timeout=30) as client:
            request = asyncio.create_task(client.post(served.url("/agents/helper/runs"),
                                                      json={"input": "Hang"}))
            await asyncio.to_thread(started.wait)
            request.cancel()  # closes the connection
            await asyncio.gather(request, return_exceptions=True)

    asyncio.run(scenario())
    ended = asyncio.run(_ended(served))
    assert ended.status.value == "cancelled"


async def _ended(served: Served) -> Run:
    """The run, once it has ended (the server cancels it when it sees the client gone)."""
    (run,) = await served.store.list_runs()
    async for _ in follow(served.store, run.id):
        pass
    return await served.store.get_run(run.id)


def test_a_run_asked_to_continue_goes_on_after_its_client_left(serve: Serve) -> None:
    release = threading.Event()
    started = threading.Event()

    async def slow(request: LlmRequest) -> LlmResponse:
        started.set()
        await asyncio.to_thread(release.wait)
        return LlmResponse("Finished anyway.")

    served = serve(FunctionProvider(slow))

    async def scenario() -> None:
        async with httpx.AsyncClient(timeout=30) as client:
            request = asyncio.create_task(client.post(served.url("/agents/helper/runs"), json={
                "input": "Go on", "on_disconnect": "continue"}))
            await asyncio.to_thread(started.wait)
            request.cancel()
            await asyncio.gather(request, return_exceptions=True)
        release.set()

    asyncio.run(scenario())
    ended = asyncio.run(_ended(served))
    assert (ended.status.value, ended.output["content"]) == ("succeeded", "Finished anyway.")


def test_a_quiet_stream_sends_keepalive_comments(serve: Serve) -> None:
    release = threading.Event()

    async def slow(request: LlmRequest) -> LlmResponse:
        await asyncio.to_thread(release.wait)
        return LlmResponse("Late.")

    served = serve(FunctionProvider(slow), keepalive=0.05)
    with httpx.stream("POST", served.url("/agents/helper/runs"),
                      json={"input": "Wait", "stream": True}, timeout=30) as response:
        lines = response.iter_lines()
        for line in lines:
            if line == ": ping":
                release.set()
                break
        rest = list(lines)
    assert "event: done" in rest


def test_metrics_count_runs_turns_and_tool_calls(serve: Serve) -> None:
    served = serve(ScriptedProvider(LOOKUP, "Found."))
    httpx.post(served.url("/agents/helper/runs"), json={"input": "Find kb"})
    text = httpx.get(served.url("/metrics")).text
    assert 'bloge_runs_total{agent="helper",outcome="succeeded"} 1.0' in text
    assert 'bloge_turns_total{agent="helper"} 2.0' in text
    assert 'bloge_tool_calls_total{agent="helper",outcome="ok",tool="lookup"} 1.0' in text


def test_readyz_says_when_the_store_answers(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hi."))
    assert httpx.get(served.url("/readyz")).json()["status"] == "ready"


HANGING_REQUESTS = pytest.mark.parametrize(("path", "body"), [
    ("/agents/helper/runs", {"input": "Hang"}),
    ("/agents/helper/runs", {"input": "Hang", "stream": True}),
    ("/v1/chat/completions", {"model": "helper", "messages": [{"role": "user", "content": "Hang"}]}),
    ("/v1/chat/completions", {"model": "helper", "stream": True,
                              "messages": [{"role": "user", "content": "Hang"}]}),
], ids=["whole", "stream", "completion", "completion-stream"])


@HANGING_REQUESTS
def test_at_shutdown_a_request_the_server_ends_cancels_its_run(
        serve: Serve, path: str, body: dict[str, object]) -> None:
    provider, started = hanging_model()
    # uvicorn ends the open request at once; the app's own grace would keep the run an hour
    served = serve(provider, shutdown_grace=3600, uvicorn_grace=0.01)

    async def scenario() -> None:
        async with httpx.AsyncClient(timeout=30) as client:
            request = asyncio.create_task(client.post(served.url(path), json=body))
            await asyncio.to_thread(started.wait)
            await asyncio.to_thread(served.server.stop)
            await asyncio.gather(request, return_exceptions=True)

    asyncio.run(scenario())
    (run,) = asyncio.run(served.store.list_runs())
    assert run.status.value == "cancelled"


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def posted_at_shutdown(served: Served, started: threading.Event, path: str,
                       body: dict[str, object], *,
                       headers: dict[str, str] | None = None) -> tuple[httpx.Response, list[str]]:
    """The answer to a POST of ``body`` to ``path`` that the server stops under (once its model
    was ``started``), and what uvicorn logged meanwhile."""
    records = _Records()
    uvicorn_log = logging.getLogger("uvicorn.error")
    uvicorn_log.addHandler(records)

    async def scenario() -> httpx.Response:
        async with httpx.AsyncClient(timeout=30) as client:
            request = asyncio.create_task(client.post(served.url(path), json=body,
                                                      headers=headers))
            await asyncio.to_thread(started.wait)
            await asyncio.to_thread(served.server.stop)
            return await request

    try:
        return asyncio.run(scenario()), records.messages
    finally:
        uvicorn_log.removeHandler(records)


@pytest.mark.parametrize(("path", "body"), [
    ("/agents/helper/runs", {"input": "Hang"}),
    ("/v1/chat/completions", {"model": "helper", "messages": [{"role": "user", "content": "Hang"}]}),
    ("/v1/chat/completions", {"model": "helper", "stream": True,  # no token yet: no stream yet
                              "messages": [{"role": "user", "content": "Hang"}]}),
], ids=["whole", "completion", "completion-before-its-first-token"])
def test_at_shutdown_a_request_the_server_ends_is_answered_503_naming_its_run(
        serve: Serve, path: str, body: dict[str, object]) -> None:
    provider, started = hanging_model()
    served = serve(provider, shutdown_grace=3600, uvicorn_grace=0.01)
    answer, logged = posted_at_shutdown(served, started, path, body)
    (run,) = asyncio.run(served.store.list_runs())
    assert answer.status_code == 503
    error = answer.json()["error"]
    assert (error["type"], error["code"]) == ("server_error", "server_stopping")
    assert f"POST /runs/{run.id}/resume" in error["message"]
    # before: uvicorn's text/plain 500, and its traceback of the cancellation in the log
    assert not [m for m in logged if "Exception in ASGI application" in m]


def test_at_shutdown_a_stream_the_server_ends_closes_with_an_error_event_naming_its_run(
        serve: Serve) -> None:
    provider, started = hanging_model()
    served = serve(provider, shutdown_grace=3600, uvicorn_grace=0.01)
    records = _Records()
    uvicorn_log = logging.getLogger("uvicorn.error")
    uvicorn_log.addHandler(records)
    try:
        with httpx.stream("POST", served.url("/agents/helper/runs"),
                          json={"input": "Hang", "stream": True}, timeout=30) as response:
            run_id = response.headers["bloge-run-id"]
            started.wait()
            served.server.stop()
            lines = list(response.iter_lines())  # before: the body was cut off mid-chunk
    finally:
        uvicorn_log.removeHandler(records)
    assert "event: error" in lines
    ending = json.loads(lines[lines.index("event: error") + 1].removeprefix("data: "))
    assert (ending["error_type"], ending["exit_reason"]) == ("ServerStoppingError", "cancelled")
    assert f"POST /runs/{run_id}/resume" in ending["error_message"]
    assert not [m for m in records.messages if "Exception in ASGI application" in m]


def test_at_shutdown_a_streamed_completion_ends_with_an_error_the_sdk_raises(
        serve: Serve, v1_client: V1Client) -> None:
    provider, started = hanging_model()
    # keepalive: the completion's stream starts before the model's first token
    served = serve(provider, shutdown_grace=3600, uvicorn_grace=0.01, keepalive=0.05)
    client = v1_client(served.url())
    stream = client.chat.completions.create(
        model="helper", messages=[{"role": "user", "content": "Hang"}], stream=True)
    started.wait()
    served.server.stop()
    with pytest.raises(openai.APIError, match="the server is stopping"):
        list(stream)


def test_at_shutdown_runs_still_going_are_cancelled_with_their_checkpoint(serve: Serve) -> None:
    provider, started = hanging_model()
    served = serve(provider, shutdown_grace=0.1, uvicorn_grace=0.1)

    async def scenario() -> None:
        async with httpx.AsyncClient(timeout=30) as client:
            request = asyncio.create_task(client.post(served.url("/agents/helper/runs"), json={
                "input": "Hang", "on_disconnect": "continue"}))
            await asyncio.to_thread(started.wait)
            await asyncio.to_thread(served.server.stop)
            await asyncio.gather(request, return_exceptions=True)

    asyncio.run(scenario())
    (run,) = asyncio.run(served.store.list_runs())
    assert run.status.value == "cancelled"
