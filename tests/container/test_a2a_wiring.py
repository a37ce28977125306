"""The application's remote agents: their operators, keys by URL, and the report."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("a2a", reason="A2A needs the extra: pip install 'bloge[a2a]'")

from bloge.a2a import A2aAgentTool
from bloge_config import load_settings
from bloge_container import create_container

SETTINGS = """
bloge:
  agents:
    dsl-locations: ["*.bloge"]
  a2a:
    remotes:
      all:
        url: "http://127.0.0.1:9000/agents/"
        api-key: "${ALL_KEY:}"
      pricing:
        url: "http://127.0.0.1:9000/agents/pricing"
        api-key: "pricing-secret"
        headers: {X-Tenant: acme}
        max-answer-bytes: 64KiB
"""
AGENT = """
agent shop {
  model = "gpt-4o"
  tool quote : a2a "http://127.0.0.1:9000/agents/pricing" { idempotent = true timeout = 9s }
  tool stock : a2a "http://127.0.0.1:9000/agents/stock" { }
}
"""


def project(tmp_path: Path) -> Path:
    (tmp_path / "settings.yaml").write_text(SETTINGS)
    (tmp_path / "shop.bloge").write_text(AGENT)
    return tmp_path


def test_each_remote_tool_is_an_operator_with_the_key_of_its_url(tmp_path: Path) -> None:
    folder = project(tmp_path)
    container = create_container(load_settings(base_dir=folder, environ={}),
                                 project_dir=folder)
    container.agents()
    registry = container.operator_registry()
    quote = registry.get("a2a:shop.quote")
    assert isinstance(quote, A2aAgentTool)
    assert (quote.timeout, quote.max_attempts, quote.metadata.idempotent) == (9.0, 3, True)
    assert quote.max_answer_bytes == 64 * 1024
    report = container.report()
    assert report.find("RemoteAgent[shop.quote]").reason == (
        "A2A agent at http://127.0.0.1:9000/agents/pricing (its key and 1 headers from "
        "bloge.a2a.remotes.pricing; idempotent: up to 3 tries; within 9 s)")
    assert "no key and 0 headers from bloge.a2a.remotes.all; not idempotent: asked once" in \
        report.find("RemoteAgent[shop.stock]").reason
    assert "pricing-secret" not in repr(quote)


def test_a_folder_with_its_own_settings_is_another_project(tmp_path: Path) -> None:
    folder = project(tmp_path)
    nested = folder / "services" / "pricing"
    nested.mkdir(parents=True)
    (nested / "settings.yaml").write_text("bloge: {}\n")
    (nested / "pricing.bloge").write_text('agent pricing { model = "gpt-4o" }\n')
    settings = load_settings(base_dir=folder, environ={},
                             overrides={"agents": {"dsl-locations": ["**/*.bloge"]}})
    container = create_container(settings, project_dir=folder)
    assert set(container.agents()) == {"shop"}
    assert not container.report().find("DslLocation[services/pricing]").registered
