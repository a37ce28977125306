"""A budget stop through a real ``bloge serve``: ``/v1`` answers it in OpenAI's error shape
(402, code ``budget_exceeded``) to the official SDK, the run resumes with a raised limit over
HTTP, and ``/metrics`` counts the stop and the cost."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import openai
import pytest

from tests.server.conftest import V1Client
from tests.server.test_serve_command import serving

QUESTION = "How do I reset my password?"
ONE_MODEL_CALL = {"BLOGE_BUDGETS__RUN__MODEL_CALLS": "1"}


def test_v1_answers_a_budget_stop_with_402_budget_exceeded(app: Path,
                                                           v1_client: V1Client) -> None:
    with serving(app, env=ONE_MODEL_CALL) as url:
        client = v1_client(url)
        with pytest.raises(openai.APIStatusError) as raised:
            client.chat.completions.create(
                model="customerSupport", messages=[{"role": "user", "content": QUESTION}])
        error = raised.value
        assert error.status_code == 402
        assert isinstance(error.body, dict)
        assert (error.body["type"], error.body["code"]) == ("insufficient_quota",
                                                            "budget_exceeded")
        assert "model_calls budget of 1 would be exceeded" in error.body["message"]
        assert 'with {"budget": {"model_calls": <higher>}}' in error.body["message"]
        run_id = re.search(r"run (\w+):", error.body["message"])
        assert run_id is not None
        resumed = httpx.post(f"{url}/runs/{run_id[1]}/resume",
                             json={"budget": {"model_calls": 2}}, timeout=30)
        assert resumed.status_code == 200, resumed.text
        assert "KB-RESET-001" in resumed.json()["content"]
        metrics = httpx.get(f"{url}/metrics").text
        assert ('bloge_budget_stops_total{agent="customerSupport",limit="model_calls",'
                'scope="run"} 1.0') in metrics


def test_a_streamed_v1_request_stopped_mid_stream_ends_with_the_budget_error(
        app: Path, v1_client: V1Client) -> None:
    with serving(app, env=ONE_MODEL_CALL) as url:
        client = v1_client(url)
        with pytest.raises(openai.APIError) as raised:
            for _ in client.chat.completions.create(
                    model="customerSupport", stream=True,
                    messages=[{"role": "user", "content": QUESTION}]):
                pass
        assert isinstance(raised.value.body, dict)
        assert raised.value.body["code"] == "budget_exceeded"
        assert "POST /runs/" in raised.value.body["message"]


def test_a_resume_body_with_an_unknown_budget_limit_is_a_400(app: Path) -> None:
    with serving(app, env=ONE_MODEL_CALL) as url:
        stopped = httpx.post(f"{url}/agents/customerSupport/runs", json={"input": QUESTION},
                             timeout=30).json()
        assert (stopped["status"], stopped["exit_reason"]) == ("failed", "budget")
        refused = httpx.post(f"{url}/runs/{stopped['id']}/resume",
                             json={"budget": {"dollars": 1}}, timeout=30)
        assert refused.status_code == 400
        assert "unknown budget limit 'dollars'" in refused.json()["error"]["message"]


def test_a_streamed_v1_request_stopped_before_its_first_token_is_a_402(
        app: Path, v1_client: V1Client) -> None:
    with serving(app, env={"BLOGE_BUDGETS__RUN__MODEL_CALLS": "0"}) as url:
        client = v1_client(url)
        with pytest.raises(openai.APIStatusError) as raised:
            client.chat.completions.create(model="customerSupport", stream=True,
                                           messages=[{"role": "user", "content": QUESTION}])
        assert raised.value.status_code == 402
        assert isinstance(raised.value.body, dict)
        assert raised.value.body["code"] == "budget_exceeded"
