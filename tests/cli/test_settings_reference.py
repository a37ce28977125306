"""``bloge config --reference`` prints every setting as ``docs/settings.md`` holds it, or as
JSON, without reading any settings."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import bloge

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "settings.md"


def test_reference_prints_docs_settings_md_even_beside_broken_settings(tmp_path: Path) -> None:
    (tmp_path / "settings.yaml").write_text("bloge:\n  nonsense: 1\n", encoding="utf-8")
    result = bloge("config", "--reference", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == DOCUMENT.read_text(encoding="utf-8")


def test_reference_as_json_lists_each_key_with_its_variable_and_meaning(tmp_path: Path) -> None:
    result = bloge("config", "--reference", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    settings = {s["key"]: s for s in json.loads(result.stdout)["settings"]}
    assert settings["bloge.server.port"] == {
        "section": "bloge.server", "key": "bloge.server.port", "type": "integer",
        "default": 8000, "required": False, "environment": "BLOGE_SERVER__PORT",
        "vendor_environment": None, "description": "The port bloge serve listens on (--port)",
    }
    assert settings["bloge.rpc.services.<name>.url"]["environment"] == (
        "BLOGE_RPC__SERVICES__<NAME>__URL")
