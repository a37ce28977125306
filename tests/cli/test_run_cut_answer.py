"""``bloge run`` when the model's answer stopped at its token limit: bounded by the provider's
``max-tokens`` setting, and said so instead of exiting 0 silently."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import bloge
from tests.cli.fake_openai import fake_openai
from tests.llm.providers.wire_payloads import openai_completion

QUESTION = "How do I reset my password?"
CUT = openai_completion("To reset your password, open", finish_reason="length")


def run_cut(app: Path, *options: str) -> tuple[str, str, list[dict[str, object]]]:
    with fake_openai(200, CUT) as server:
        result = bloge("run", "customerSupport", QUESTION, *options, cwd=app, env={
            "BLOGE_LLM__PROVIDER": "openai", "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "none", "BLOGE_LLM__OPENAI__MAX_TOKENS": "8"})
    assert result.returncode == 0, result.stderr
    return result.stdout, result.stderr, server.bodies


def test_the_provider_max_tokens_setting_bounds_every_answer(app: Path) -> None:
    _, _, bodies = run_cut(app)
    assert [body["max_tokens"] for body in bodies] == [8]
    assert bodies[0]["tool_choice"] == "auto"  # the agent has tools and chose none


def test_an_answer_cut_at_its_token_limit_is_a_warning_on_stderr(app: Path) -> None:
    stdout, stderr, _ = run_cut(app)
    assert stdout.strip() == "To reset your password, open"
    assert "warning: the model's answer was cut at its token limit" in stderr


def test_json_output_of_a_cut_answer_says_length(app: Path) -> None:
    stdout, stderr, _ = run_cut(app, "--json")
    assert json.loads(stdout)["finish_reason"] == "length"
    assert "cut at its token limit" in stderr
