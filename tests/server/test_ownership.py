"""With API keys, a thread and a run belong to the key that created them: another key is told
they do not exist (404, the same answer as for an id nobody has), an admin key sees them all;
without keys everything is everyone's, as before. Over the runs API, /v1 and /mcp."""

from __future__ import annotations

import asyncio
import threading

import httpx
import pytest

from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, ScriptedProvider
from tests.server.conftest import Serve, Served, V1Client

ALICE, BOB, ADMIN = "key-alice", "key-bob", "key-admin"
KEYED = {"api_keys": (ALICE, BOB)}
WITH_ADMIN = {**KEYED, "admin_keys": (ADMIN,)}


def as_key(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def started_by_alice(served: Served, thread_id: str = "customer-42") -> dict[str, str]:
    response = httpx.post(served.url("/agents/helper/runs"), headers=as_key(ALICE),
                          json={"input": "Hi", "thread_id": thread_id})
    assert response.status_code == 200, response.text
    body: dict[str, str] = response.json()
    return body


def test_another_key_is_told_a_run_and_its_thread_do_not_exist(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hi."), **KEYED)
    run_id = started_by_alice(served)["run_id"]
    for method, path in [("GET", f"/runs/{run_id}"), ("GET", f"/runs/{run_id}/stream"),
                         ("POST", f"/runs/{run_id}/cancel"), ("POST", f"/runs/{run_id}/resume"),
                         ("GET", "/threads/customer-42")]:
        foreign = httpx.request(method, served.url(path), headers=as_key(BOB), timeout=10)
        nobodys = httpx.request(method, served.url(path.replace("customer-42", "nobody-7")
                                                    .replace(run_id, "f" * 32)),
                                headers=as_key(BOB), timeout=10)
        assert foreign.status_code == 404, (path, foreign.text)
        # Whether another key's run or thread exists is not told: the same answer as for none.
        assert (foreign.json()["error"]["message"].replace(run_id, "f" * 32)
                .replace("customer-42", "nobody-7")) == nobodys.json()["error"]["message"]
        assert httpx.request(method, served.url(path), headers=as_key(ALICE),
                             timeout=10).status_code != 404


def test_another_key_cannot_continue_a_thread_it_does_not_own(serve: Serve) -> None:
    provider = ScriptedProvider("Hi.", "Hello Bob.")
    served = serve(provider, **KEYED)
    started_by_alice(served)
    joined = httpx.post(served.url("/agents/helper/runs"), headers=as_key(BOB),
                        json={"input": "What did Alice say?", "thread_id": "customer-42"})
    assert joined.status_code == 404, joined.text
    assert joined.json()["error"]["message"] == "no thread 'customer-42'"
    streamed = httpx.post(served.url("/agents/helper/runs"), headers=as_key(BOB),
                          json={"input": "And now?", "thread_id": "customer-42",
                                "stream": True})
    assert streamed.status_code == 404, streamed.text
    assert len(provider.requests) == 1  # only Alice's run reached the model
    own = httpx.post(served.url("/agents/helper/runs"), headers=as_key(BOB),
                     json={"input": "Hi", "thread_id": "bob-1"})
    assert own.status_code == 200, own.text


def test_an_admin_key_sees_and_continues_every_thread(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hi.", "Hello again."), **WITH_ADMIN)
    run_id = started_by_alice(served)["run_id"]
    assert httpx.get(served.url(f"/runs/{run_id}"), headers=as_key(ADMIN)).status_code == 200
    thread = httpx.get(served.url("/threads/customer-42"), headers=as_key(ADMIN))
    assert thread.status_code == 200
    continued = httpx.post(served.url("/agents/helper/runs"), headers=as_key(ADMIN),
                           json={"input": "Still there?", "thread_id": "customer-42"})
    assert continued.status_code == 200, continued.text


def test_without_keys_every_run_and_thread_is_everyones(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hi.", "Hello again."))
    first = httpx.post(served.url("/agents/helper/runs"),
                       json={"input": "Hi", "thread_id": "customer-42"}).json()
    assert httpx.get(served.url(f"/runs/{first['run_id']}")).status_code == 200
    again = httpx.post(served.url("/agents/helper/runs"),
                       json={"input": "Again", "thread_id": "customer-42"})
    assert again.status_code == 200, again.text


def test_a_running_runs_stream_is_not_joined_by_another_key(serve: Serve) -> None:
    started = threading.Event()
    release = asyncio.Event()
    loop: list[asyncio.AbstractEventLoop] = []

    async def waiting(request: LlmRequest) -> LlmResponse:
        loop.append(asyncio.get_running_loop())
        started.set()
        await release.wait()
        return LlmResponse("Done.", "stop")

    served = serve(FunctionProvider(waiting), **KEYED)
    answered: list[httpx.Response] = []
    running = threading.Thread(target=lambda: answered.append(httpx.post(
        served.url("/agents/helper/runs"), headers=as_key(ALICE),
        json={"input": "Hi", "on_disconnect": "continue"}, timeout=30)))
    running.start()
    assert started.wait(10)
    [run] = asyncio.run(served.store.list_runs())
    joined = httpx.get(served.url(f"/runs/{run.id}/stream"), headers=as_key(BOB), timeout=10)
    cancelled = httpx.post(served.url(f"/runs/{run.id}/cancel"), headers=as_key(BOB))
    loop[0].call_soon_threadsafe(release.set)
    running.join(30)
    assert joined.status_code == 404
    assert cancelled.status_code == 404
    assert answered[0].json()["status"] == "succeeded"


def test_a_v1_completion_is_the_run_of_the_key_that_asked(serve: Serve,
                                                          v1_client: V1Client) -> None:
    served = serve(ScriptedProvider("Hi."), **KEYED)
    completion = v1_client(served.url(), api_key=ALICE).chat.completions.create(
        model="helper", messages=[{"role": "user", "content": "Hi"}])
    run_id = completion.id.removeprefix("chatcmpl-")
    assert httpx.get(served.url(f"/runs/{run_id}"), headers=as_key(ALICE)).status_code == 200
    assert httpx.get(served.url(f"/runs/{run_id}"), headers=as_key(BOB)).status_code == 404


async def test_an_mcp_call_is_the_run_of_the_key_that_called(serve: Serve) -> None:
    pytest.importorskip("mcp", reason="the MCP endpoint needs the extra: pip install "
                        "'bloge[mcp]'")
    import httpx2  # noqa: PLC0415 -- the MCP SDK's client, there with the extra
    from mcp import Client  # noqa: PLC0415 -- the extra, checked above
    from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415 -- the extra

    served = await asyncio.to_thread(serve, ScriptedProvider("Hi."), mcp=True, **KEYED)
    async with httpx2.AsyncClient(headers=as_key(ALICE)) as http, \
            Client(streamable_http_client(served.url("/mcp"), http_client=http),
                   cache=None) as mcp:
        result = await mcp.call_tool("helper", {"message": "Hi"})
    assert not result.is_error
    [run] = await served.store.list_runs()
    async with httpx.AsyncClient() as client:
        own = await client.get(served.url(f"/runs/{run.id}"), headers=as_key(ALICE))
        foreign = await client.get(served.url(f"/runs/{run.id}"), headers=as_key(BOB))
    assert (own.status_code, foreign.status_code) == (200, 404)
