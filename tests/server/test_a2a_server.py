"""bloge serve's agents as A2A agents, asked with the protocol's own SDK client (1.0 and 0.3)."""

from __future__ import annotations

import asyncio
import threading

import httpx
import pytest

pytest.importorskip("a2a", reason="A2A needs the extra: pip install 'bloge[a2a]'")

from a2a.client import Client, ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.client.errors import A2AClientError
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import InvalidParamsError, TaskNotCancelableError, TaskNotFoundError

from bloge.a2a.parts import answer_of, message
from bloge.llm import FunctionProvider, LlmRequest, ScriptedProvider
from bloge.llm.testing import tool_call_response
from tests.server.conftest import Serve, Served

KEY = "sk-a2a-test"
OTHER_KEY = "sk-a2a-other"


async def _answers(served: Served, text: str, *, key: str | None = None, streaming: bool = False,
                   legacy: bool = False, context_id: str = "") -> list[pb.StreamResponse]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        card = await A2ACardResolver(http, served.url("/agents/helper")).get_agent_card()
        if legacy:  # a 0.3 client: the card's 0.3 interface only
            kept = [i for i in card.supported_interfaces if i.protocol_version == "0.3"]
            del card.supported_interfaces[:]
            card.supported_interfaces.extend(kept)
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming)).create(card)
        request = pb.SendMessageRequest(message=message(text, context_id=context_id))
        return [answer async for answer in client.send_message(request)]


async def _client(served: Served, http: httpx.AsyncClient) -> Client:
    card = await A2ACardResolver(http, served.url("/agents/helper")).get_agent_card()
    return ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)


async def test_the_agent_card_names_the_agent_its_tools_and_its_endpoint(serve: Serve) -> None:
    served = serve(ScriptedProvider("hi"), a2a=True)
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, served.url("/agents/helper")).get_agent_card()
        default = await A2ACardResolver(http, served.url()).get_agent_card()
    assert card.name == "helper" == default.name
    assert [skill.id for skill in card.skills] == ["lookup"]
    assert {(i.url, i.protocol_version) for i in card.supported_interfaces} == {
        (served.url("/agents/helper"), "1.0"), (served.url("/agents/helper"), "0.3")}
    assert card.capabilities.streaming


async def test_a_message_is_a_run_whose_id_is_the_task_id(serve: Serve) -> None:
    served = serve(ScriptedProvider(tool_call_response("lookup", '{"q": "jam"}'), "JAM it is."),
                   a2a=True)
    [answer] = await _answers(served, "look up jam")
    task = answer.task
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert answer_of(task) == "JAM it is."
    run = await served.store.get_run(task.id)
    assert run.thread_id == task.context_id
    assert run.output is not None
    assert run.output["content"] == "JAM it is."


async def test_a_0_3_client_is_answered_too(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hello from 0.3."), a2a=True)
    [answer] = await _answers(served, "hi", legacy=True)
    assert answer.task.status.state == pb.TASK_STATE_COMPLETED
    assert answer_of(answer.task) == "Hello from 0.3."


async def test_a_streamed_task_shows_its_tokens_then_completes(serve: Serve) -> None:
    served = serve(ScriptedProvider("Streamed answer."), a2a=True)
    answers = await _answers(served, "hi", streaming=True)
    assert answers[0].task.status.state == pb.TASK_STATE_SUBMITTED
    tokens = [a.artifact_update.artifact.parts[0].text for a in answers
              if a.HasField("artifact_update")]
    assert "".join(tokens) == "Streamed answer."
    last = answers[-1].status_update
    assert last.status.state == pb.TASK_STATE_COMPLETED
    assert (await served.store.get_run(last.task_id)).status.value == "succeeded"


async def test_the_context_id_continues_the_thread(serve: Serve) -> None:
    provider = ScriptedProvider("first", "second")
    served = serve(provider, a2a=True)
    [first] = await _answers(served, "one")
    [second] = await _answers(served, "two", context_id=first.task.context_id)
    assert second.task.context_id == first.task.context_id
    assert [m.content for m in provider.requests[1].messages if m.role == "user"] == [
        "one", "two"]


async def test_a_failed_run_is_a_failed_task_naming_the_run(serve: Serve) -> None:
    served = serve(ScriptedProvider(), a2a=True)  # no answer: the model call fails
    [answer] = await _answers(served, "hi")
    task = answer.task
    assert task.status.state == pb.TASK_STATE_FAILED
    assert f"run {task.id} failed" in task.status.message.parts[0].text


async def test_with_keys_a_task_is_its_keys_own(serve: Serve) -> None:
    served = serve(ScriptedProvider("mine"), a2a=True, api_keys=(KEY, OTHER_KEY))
    with pytest.raises(A2AClientError, match="401"):
        await _answers(served, "hi")
    [answer] = await _answers(served, "hi", key=KEY)
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {OTHER_KEY}"}) as http:
        client = await _client(served, http)
        with pytest.raises(TaskNotFoundError):
            await client.get_task(pb.GetTaskRequest(id=answer.task.id))
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}) as http:
        client = await _client(served, http)
        task = await client.get_task(pb.GetTaskRequest(id=answer.task.id))
    assert task.status.state == pb.TASK_STATE_COMPLETED


async def test_an_ended_task_cannot_be_cancelled(serve: Serve) -> None:
    served = serve(ScriptedProvider("done"), a2a=True)
    [answer] = await _answers(served, "hi")
    async with httpx.AsyncClient() as http:
        client = await _client(served, http)
        with pytest.raises(TaskNotCancelableError, match="ended"):
            await client.cancel_task(pb.CancelTaskRequest(id=answer.task.id))


async def test_an_unknown_agent_is_a_404_naming_the_agents(serve: Serve) -> None:
    served = serve(ScriptedProvider("x"), a2a=True)
    async with httpx.AsyncClient() as http:
        response = await http.get(served.url("/agents/helpr/.well-known/agent-card.json"))
    assert response.status_code == 404
    assert "helper" in response.text


async def test_without_a2a_its_paths_say_why(serve: Serve) -> None:
    why = "the A2A SDK is not installed: pip install 'bloge[a2a]'"
    served = serve(ScriptedProvider("x"), a2a_off=why)
    async with httpx.AsyncClient() as http:
        card = await http.get(served.url("/agents/helper/.well-known/agent-card.json"))
        task = await http.post(served.url("/agents/helper"), json={"jsonrpc": "2.0"})
    assert card.status_code == task.status_code == 404
    assert why in card.json()["error"]["message"]
    assert why in task.json()["error"]["message"]


async def test_a_running_task_is_cancelled_and_its_run_with_it(serve: Serve) -> None:
    started = threading.Event()

    async def never(request: LlmRequest) -> str:
        started.set()
        await asyncio.Event().wait()  # until the run is cancelled
        raise AssertionError("unreachable")

    served = serve(FunctionProvider(never), a2a=True)
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, served.url("/agents/helper")).get_agent_card()
        config = ClientConfig(httpx_client=http, streaming=False, polling=True)
        client = ClientFactory(config).create(card)
        [answer] = [a async for a in client.send_message(
            pb.SendMessageRequest(message=message("hi")))]
        assert answer.task.status.state == pb.TASK_STATE_SUBMITTED
        assert await asyncio.to_thread(started.wait, 30)
        cancelled = await client.cancel_task(pb.CancelTaskRequest(id=answer.task.id))
    assert cancelled.status.state == pb.TASK_STATE_CANCELED
    assert (await served.store.get_run(answer.task.id)).status.value == "cancelled"


async def test_another_keys_context_is_not_continued(serve: Serve) -> None:
    served = serve(ScriptedProvider("mine", "theirs"), a2a=True, api_keys=(KEY, OTHER_KEY))
    [mine] = await _answers(served, "hi", key=KEY)
    with pytest.raises(InvalidParamsError, match="no context") as caught:
        await _answers(served, "hi", key=OTHER_KEY, context_id=mine.task.context_id)
    assert "bloge-0.db" not in str(caught.value)
    [again] = await _answers(served, "again", key=KEY, context_id=mine.task.context_id)
    assert again.task.context_id == mine.task.context_id


async def test_a_0_3_client_streams_too(serve: Serve) -> None:
    served = serve(ScriptedProvider("Streamed to 0.3."), a2a=True)
    answers = await _answers(served, "hi", streaming=True, legacy=True)
    tokens = [a.artifact_update.artifact.parts[0].text for a in answers
              if a.HasField("artifact_update")]
    assert "".join(tokens) == "Streamed to 0.3."
    assert answers[-1].status_update.status.state == pb.TASK_STATE_COMPLETED


async def test_a_subscriber_follows_a_running_task_to_its_end(serve: Serve) -> None:
    started, release = threading.Event(), threading.Event()

    async def slow(request: LlmRequest) -> str:
        started.set()
        assert await asyncio.to_thread(release.wait, 30)
        return "At last."

    served = serve(FunctionProvider(slow), a2a=True)
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, served.url("/agents/helper")).get_agent_card()
        sender = ClientFactory(ClientConfig(httpx_client=http, streaming=False,
                                            polling=True)).create(card)
        [answer] = [a async for a in sender.send_message(
            pb.SendMessageRequest(message=message("hi")))]
        assert await asyncio.to_thread(started.wait, 30)
        client = ClientFactory(ClientConfig(httpx_client=http)).create(card)
        followed = []
        async for update in client.subscribe(pb.SubscribeToTaskRequest(id=answer.task.id)):
            followed.append(update)
            if len(followed) == 1:
                assert update.task.status.state == pb.TASK_STATE_WORKING
                release.set()
    assert followed[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    assert "At last." in [u.artifact_update.artifact.parts[0].text for u in followed
                          if u.HasField("artifact_update")]
