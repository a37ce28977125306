"""How a run that ends without an answer is told: to its client (naming the run) and in the
server's log."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from bloge.core.errors import ProviderError
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse
from tests.server.conftest import Serve
from tests.server.test_guard import hanging_model, posted_at_shutdown


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


MCP_CALL = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "helper", "arguments": {"message": "Hang"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def test_at_shutdown_a_waiting_mcp_call_is_a_503_naming_its_run_in_mcps_shape(
        serve: Serve) -> None:
    pytest.importorskip("mcp", reason="the MCP endpoint needs the extra: pip install 'bloge[mcp]'")
    provider, started = hanging_model()
    served = serve(provider, shutdown_grace=3600, uvicorn_grace=0.01, mcp=True)
    answer, logged = posted_at_shutdown(served, started, "/mcp", MCP_CALL, headers=MCP_HEADERS)
    (run,) = asyncio.run(served.store.list_runs())
    # before: uvicorn's text/plain 500, and its traceback of the cancellation in the log
    assert answer.status_code == 503, answer.text
    body = answer.json()
    assert (body["jsonrpc"], body["id"]) == ("2.0", 7)
    assert f"POST /runs/{run.id}/resume" in body["error"]["message"]
    assert body["error"]["data"] == {"run_id": run.id, "code": "server_stopping"}
    assert run.status.value == "cancelled"  # with its checkpoint, to be resumed
    assert not [m for m in logged if "Exception in ASGI application" in m]
