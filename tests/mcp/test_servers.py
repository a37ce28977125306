"""MCP servers as operator sources: listing, results, and each fault named by its server."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from bloge import BlogeUsageError
from bloge.mcp import McpError, McpServers, McpToolError
from tests.mcp.conftest import SERVER, spec


def test_each_listed_tool_is_an_operator_named_after_its_server(docs: McpServers) -> None:
    assert sorted(docs.operators()) == ["docs.crash", "docs.fail", "docs.hang", "docs.huge",
                                        "docs.search", "docs.secret"]


def test_a_tool_carries_the_servers_description_and_input_schema(docs: McpServers) -> None:
    metadata = docs.operators()["docs.search"].metadata

    assert metadata.prompt_hint == "Search the docs for a query"
    assert metadata.input_schema == {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "What to look for"},
                       "limit": {"type": "integer", "minimum": 1}},
        "required": ["query"],
    }


async def test_structured_content_is_the_tools_result(docs: McpServers) -> None:
    result = await docs.operators()["docs.search"].aexecute({"query": "reset"})

    assert result["articleId"] == "KB-1"
    assert result["summary"] == "About reset."


async def test_a_tool_that_reports_an_error_fails_with_its_text(docs: McpServers) -> None:
    with pytest.raises(McpToolError, match=r"^MCP server 'docs': tool 'fail' failed: the "
                       r"index is offline$"):
        await docs.operators()["docs.fail"].aexecute({})


def test_a_tool_with_an_invalid_schema_is_skipped_and_the_others_kept(docs: McpServers) -> None:
    listing = docs.connection("docs").listing

    assert [s.name for s in listing.skipped] == ["broken"]
    assert "input schema is invalid at properties/q/type" in listing.skipped[0].reason
    assert "docs.broken" not in docs.operators()


async def test_a_result_over_the_byte_limit_is_refused_naming_the_server(
        docs: McpServers) -> None:
    with pytest.raises(McpError, match=r"MCP server 'docs': tool 'huge' returned 2000000 bytes, "
                       r"more than its limit of 1048576 \(bloge.mcp.servers.docs.max-result-"
                       r"bytes\)"):
        await docs.operators()["docs.huge"].aexecute({})


def test_tools_can_be_renamed(fresh: list[McpServers]) -> None:
    fresh.append(McpServers([spec(rename={"search": "KBSearchOperator"})]))

    assert "KBSearchOperator" in fresh[0].operators()
    assert "docs.search" not in fresh[0].operators()


def test_a_server_that_never_answers_initialize_times_out_naming_it(
        fresh: list[McpServers]) -> None:
    fresh.append(McpServers([spec("quiet", "silent", startup_timeout=0.5)]))

    error = fresh[0].outcomes["quiet"].error
    assert error is not None
    assert str(error).startswith("MCP server 'quiet': did not answer initialize and list its "
                                 "tools within 0.5 s (")
    assert "bloge.mcp.servers.quiet.startup-timeout" in str(error)


def test_a_command_that_does_not_exist_is_an_error_naming_the_server(
        fresh: list[McpServers]) -> None:
    fresh.append(McpServers([spec("nope").__class__("nope", command="/no/such/mcp-server")]))

    error = fresh[0].outcomes["nope"].error
    assert str(error) == ("MCP server 'nope': cannot start '/no/such/mcp-server': No such file "
                          "or directory (bloge.mcp.servers.nope.command)")


def test_a_server_that_cannot_start_leaves_the_others_running(fresh: list[McpServers]) -> None:
    fresh.append(McpServers([spec(), spec("quiet", "silent", startup_timeout=0.5)]))

    assert fresh[0].outcomes["quiet"].connection is None
    assert "docs.search" in fresh[0].operators()


async def test_a_server_that_crashes_mid_call_fails_that_call_and_is_restarted_once(
        fresh: list[McpServers]) -> None:
    fresh.append(McpServers([spec()]))
    operators = fresh[0].operators()
    before = (await operators["docs.search"].aexecute({"query": "a"}))["pid"]

    with pytest.raises(McpError, match=r"^MCP server 'docs': closed the connection before "
                       r"answering the call to 'crash' \(did it exit\?\); it is restarted once$"):
        await operators["docs.crash"].aexecute({})
    fresh[0].connection("docs").wait_restart()

    after = (await operators["docs.search"].aexecute({"query": "a"}))["pid"]
    assert after != before


async def test_calls_during_the_restart_fail_clearly(fresh: list[McpServers],
                                                     tmp_path: Path) -> None:
    # Restarted, the server never answers: the restart lasts until the test stops it.
    fresh.append(McpServers([spec(mode="silent-after-restart", startup_timeout=60,
                                  env={"MARKER": str(tmp_path / "started")})]))
    operators = fresh[0].operators()
    with pytest.raises(McpError):
        await operators["docs.crash"].aexecute({})

    with pytest.raises(McpError, match=r"^MCP server 'docs': is restarting after it closed the "
                       r"connection \(at a call to 'crash'\); its tools are unavailable until "
                       r"it is back$"):
        await operators["docs.search"].aexecute({"query": "a"})


async def test_a_server_that_crashes_again_after_its_restart_stays_down(
        fresh: list[McpServers]) -> None:
    fresh.append(McpServers([spec()]))
    operators = fresh[0].operators()
    connection = fresh[0].connection("docs")
    for _ in range(2):
        with pytest.raises(McpError):
            await operators["docs.crash"].aexecute({})
        connection.wait_restart()

    with pytest.raises(McpError, match=r"^MCP server 'docs': is down \(it closed the connection "
                       r"\(at a call to 'crash'\), again after its restart\); its tools fail "
                       r"until the application restarts$"):
        await operators["docs.search"].aexecute({"query": "a"})


async def test_the_servers_environment_reaches_it_and_its_repr_hides_the_values(
        fresh: list[McpServers]) -> None:
    server = spec(env={"SECRET": "s3cr3t-value"}, headers={})
    fresh.append(McpServers([server]))

    assert await fresh[0].operators()["docs.secret"].aexecute({}) == "s3cr3t-value"
    assert "s3cr3t-value" not in repr(server)
    assert "SECRET" in repr(server)


async def test_a_line_on_stdout_that_is_not_json_rpc_is_one_warning_naming_the_server(
        fresh: list[McpServers], caplog: pytest.LogCaptureFixture) -> None:
    fresh.append(McpServers([spec(mode="noisy", env={"SECRET": "s3cr3t-value"})]))

    found = await fresh[0].operators()["docs.search"].aexecute({"query": "q"})

    assert found["summary"] == "About q."
    [warning] = [r for r in caplog.records if "not JSON-RPC" in r.getMessage()]
    assert warning.name == "bloge.mcp"
    assert warning.exc_info is None
    assert "MCP server 'docs'" in warning.getMessage()
    assert "docs server ready, SECRET=****" in warning.getMessage()
    assert not [r for r in caplog.records if r.name == "mcp.client.stdio"]
    assert "s3cr3t-value" not in caplog.text


async def test_a_stopped_server_fails_its_calls(fresh: list[McpServers]) -> None:
    servers = McpServers([spec()])
    operators = servers.operators()
    servers.close()

    with pytest.raises(McpError, match=r"is down \(the application is shutting down\)"):
        await operators["docs.search"].aexecute({"query": "a"})


def test_the_test_server_is_where_the_specs_say(docs: McpServers) -> None:
    assert str(SERVER) in docs.connection("docs").spec.where()


async def test_a_server_killed_while_idle_fails_the_next_call_and_comes_back(
        fresh: list[McpServers]) -> None:
    fresh.append(McpServers([spec()]))
    operators = fresh[0].operators()
    pid = (await operators["docs.search"].aexecute({"query": "a"}))["pid"]
    os.kill(pid, signal.SIGKILL)

    with pytest.raises(McpError, match=r"^MCP server 'docs': "):
        await operators["docs.search"].aexecute({"query": "a"})
    fresh[0].connection("docs").wait_restart()

    assert (await operators["docs.search"].aexecute({"query": "b"}))["pid"] != pid


async def test_a_call_past_the_call_timeout_fails_naming_the_setting(
        fresh: list[McpServers]) -> None:
    fresh.append(McpServers([spec(call_timeout=0.5)]))

    with pytest.raises(McpError, match=r"^MCP server 'docs': tool 'hang' did not answer within "
                       r"0.5 s \(bloge.mcp.servers.docs.call-timeout\)$"):
        await fresh[0].operators()["docs.hang"].aexecute({})


def test_two_servers_naming_one_operator_is_an_error(fresh: list[McpServers]) -> None:
    fresh.append(McpServers([spec(rename={"search": "find"}),
                             spec("other", rename={"search": "find"})]))

    with pytest.raises(BlogeUsageError, match=r"^MCP servers 'docs' and 'other' both name a "
                       r"tool 'find'; rename one"):
        fresh[0].operators()
