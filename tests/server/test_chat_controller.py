"""POST /chat on a real server when its run fails: the failure names the run, as the run's
record tells it (secrets taken out)."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from bloge.core.errors import ProviderError
from bloge.llm import LlmRequest, LlmResponse, ScriptedProvider
from tests.server.conftest import Serve


class Failing:
    async def chat(self, request: LlmRequest) -> LlmResponse:
        raise ProviderError("the model went away (password=hunter2)", provider="test",
                            status_code=502)


@pytest.mark.parametrize("path", ["/chat", "/agents/helper/chat"])
def test_a_failed_chat_names_its_run_and_keeps_secrets_out(serve: Serve, path: str) -> None:
    served = serve(Failing())
    response = httpx.post(served.url(path), content="hello")
    [run] = asyncio.run(served.store.list_runs())
    assert run.error is not None
    assert (response.status_code, response.headers["bloge-run-id"]) == (500, run.id)
    assert response.text == f"run {run.id} failed: {run.error.message}"
    assert "the model went away" in response.text
    assert "hunter2" not in response.text


def test_an_answer_names_its_run(serve: Serve) -> None:
    served = serve(ScriptedProvider(LlmResponse("Hello.", "stop")))
    response = httpx.post(served.url("/chat"), content="hello")
    [run] = asyncio.run(served.store.list_runs())
    assert (response.status_code, response.text) == (200, "Hello.")
    assert response.headers["bloge-run-id"] == run.id
