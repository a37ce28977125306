"""``bloge run --json`` prints one document whatever a tool returned."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.cli.conftest import bloge


def test_json_output_of_a_tool_result_with_no_json_form_is_still_one_document(
        tmp_path: Path) -> None:
    (tmp_path / "lookup.py").write_text(textwrap.dedent("""
        class Handle:
            def __str__(self):
                return "handle #7"

        def lookup(input):
            return {"handle": Handle(), "name": input["name"]}
    """))
    (tmp_path / "agent.bloge").write_text(textwrap.dedent("""
        agent finder {
          model = "gpt-4o"
          tool lookupName : Lookup {
            description = "Look up a name"
            input { name = tool_args.name }
          }
          exit_condition = tool_call("lookupName")
        }
    """))
    (tmp_path / "settings.yaml").write_text(
        'bloge:\n  agents: {dsl-locations: ["*.bloge"]}\n  operators: {Lookup: "lookup:lookup"}\n')
    result = bloge("run", "finder", "Please look up the name Ada", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    (value,) = json.loads(result.stdout)["tool_results"].values()
    assert value["handle"] == {"$unserializable": "Handle", "str": "handle #7"}
