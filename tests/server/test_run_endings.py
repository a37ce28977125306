"""How a run that ends without an answer is told: to its client (naming the run) and in the
server's log."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from bloge.core.errors import ProviderError
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse
from tests.server.conftest import Serve
from tests.server.test_guard import hanging_model


def failing_model() -> FunctionProvider:
    async def fail(request: LlmRequest) -> LlmResponse:
        raise ProviderError("the model went away (password=hunter2)", provider="test",
                            status_code=502)

    return FunctionProvider(fail)


def test_a_run_past_the_time_limit_is_a_504_naming_the_run(serve: Serve) -> None:
    provider, _ = hanging_model()
    served = serve(provider, request_timeout=0.2)
    response = httpx.post(served.url("/agents/helper/runs"), json={"input": "Hang"}, timeout=30)
    (run,) = asyncio.run(served.store.list_runs())
    assert response.status_code == 504
    # before: "resume it with POST /runs/{id}/resume", a literal {id}, and no header
    assert response.headers["bloge-run-id"] == run.id
    assert f"POST /runs/{run.id}/resume" in response.json()["error"]["message"]


@pytest.mark.parametrize(("path", "body"), [
    ("/agents/helper/runs", {"input": "hello"}),
    ("/agents/helper/runs", {"input": "hello", "stream": True}),
    ("/v1/chat/completions", {"model": "helper",
                              "messages": [{"role": "user", "content": "hello"}]}),
], ids=["whole", "streamed", "completion"])
def test_a_failed_run_is_one_warning_in_the_log_naming_it_and_why(
        serve: Serve, caplog: pytest.LogCaptureFixture, path: str,
        body: dict[str, object]) -> None:
    served = serve(failing_model())
    with caplog.at_level("WARNING", logger="bloge.server"):
        httpx.post(served.url(path), json=body, timeout=30)
    (run,) = asyncio.run(served.store.list_runs())
    assert run.error is not None
    # before: only the access line
    warned = [r.getMessage() for r in caplog.records
              if r.name == "bloge.server" and r.levelname == "WARNING"]
    assert warned == [f"run {run.id} failed: {run.error.message}"]
    assert "hunter2" not in warned[0]
