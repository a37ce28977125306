"""A tripped guard over HTTP, as users meet it: a real ``bloge serve`` on the offline model,
its ``/v1`` through the official ``openai`` SDK (400, code ``guardrail_tripped``), its runs
API (422 and the run's record), ``/metrics`` and ``bloge runs show``."""

from __future__ import annotations

from pathlib import Path

import httpx
import openai
import pytest

from tests.cli.conftest import bloge
from tests.server.conftest import V1Client
from tests.server.test_serve_command import serving

GUARDED = """
agent screened {
  model = "gpt-4o"
  guard input no_ssn { when = "ssn" in input }
}
agent terse {
  model = "gpt-4o"
  guard output short : MaxLengthGuard { max_chars = 3 }
}
"""
SSN = [{"role": "user", "content": "my ssn is 078-05-1120"}]


@pytest.fixture
def guarded(app: Path) -> Path:
    folder = app / "examples" / "guarded"
    folder.mkdir()
    (folder / "guarded.bloge").write_text(GUARDED, encoding="utf-8")
    return app


def test_v1_answers_a_tripped_guard_with_openais_error_shape(guarded: Path,
                                                             v1_client: V1Client) -> None:
    with serving(guarded) as url:
        client = v1_client(url)
        with pytest.raises(openai.BadRequestError) as raised:
            client.chat.completions.create(model="screened", messages=SSN)  # type: ignore[arg-type]  # plain dicts, as users write them
        error = raised.value
        assert error.status_code == 400
        assert error.code == "guardrail_tripped"
        assert "input guard 'no_ssn'" in error.message
        # A streamed request hears the same, before any chunk.
        with pytest.raises(openai.BadRequestError) as streamed:
            client.chat.completions.create(model="terse", stream=True, messages=[
                {"role": "user", "content": "How do I reset my password?"}])
        assert streamed.value.code == "guardrail_tripped"
        assert "output guard 'short'" in streamed.value.message
        # Nothing else failed: the other agents still answer.
        answer = client.chat.completions.create(model="screened", messages=[
            {"role": "user", "content": "hello"}])
        assert answer.choices[0].message.content


def test_the_runs_api_answers_422_with_the_guard_and_its_verdict(guarded: Path) -> None:
    with serving(guarded) as url:
        response = httpx.post(f"{url}/agents/screened/runs", json={"input": SSN[0]["content"]},
                              timeout=30)
        assert response.status_code == 422, response.text
        run = response.json()
        assert run["status"] == "failed"
        assert run["exit_reason"] == "guardrail"
        assert run["error"]["type"] == "GuardrailTrippedError"
        assert run["error"]["guardrail"] == {
            "guard": "no_ssn", "kind": "input", "tool": None, "tripped": True,
            "reason": '"ssn" in input holds', "findings": {}}
        metrics = httpx.get(f"{url}/metrics", timeout=30).text
        assert ('bloge_guard_verdicts_total{agent="screened",failed="false",guard="no_ssn",'
                'kind="input",verdict="trip"} 1.0') in metrics
        assert 'bloge_runs_total{agent="screened",outcome="guardrail"} 1.0' in metrics
    shown = bloge("runs", "show", run["id"], cwd=guarded)
    assert shown.returncode == 0, shown.stderr
    assert "input guard no_ssn: TRIP" in shown.stdout


def test_a_thread_goes_on_after_an_input_guard_stopped_a_run(guarded: Path) -> None:
    with serving(guarded) as url:
        tripped = httpx.post(f"{url}/agents/screened/runs",
                             json={"input": SSN[0]["content"]}, timeout=30)
        assert tripped.status_code == 422, tripped.text
        thread_id = tripped.json()["thread_id"]
        answered = httpx.post(f"{url}/agents/screened/runs",
                              json={"input": "hello", "thread_id": thread_id}, timeout=30)
        assert answered.status_code == 200, answered.text
        thread = httpx.get(f"{url}/threads/{thread_id}", timeout=30).json()
    assert "078-05-1120" not in str(thread["messages"])
