"""A request a model's server refused is kept with the run, so that ``bloge runs show`` shows
what was sent (without the key)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import bloge
from tests.cli.fake_openai import fake_openai
from tests.llm.providers.wire_payloads import openai_error

KEY = "sk-do-not-print-me"


def test_runs_show_prints_the_request_the_server_refused_without_the_key(app: Path) -> None:
    refusal = openai_error("1 validation error: messages.2.content", "invalid_request_error")
    with fake_openai(400, refusal) as server:
        failed = bloge("run", "customerSupport", "How do I reset my password?", cwd=app, env={
            "BLOGE_LLM__PROVIDER": "openai", "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": KEY})
    assert failed.returncode == 1
    listed = json.loads(bloge("runs", "list", "--json", cwd=app).stdout)
    shown = bloge("runs", "show", listed[0]["id"], cwd=app)
    assert shown.returncode == 0, shown.stderr
    [line] = [line for line in shown.stdout.splitlines() if "refused request" in line]
    assert '"messages":[{"role":"system","content":"You are a helpful customer' in line
    assert '"tool_choice":"auto"' in line
    assert KEY not in shown.stdout + failed.stderr
