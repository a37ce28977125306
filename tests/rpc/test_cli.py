"""``bloge rpc services|call|serve`` through the real console script, and the support
example split in two processes over NATS."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from bloge.rpc import jetstream
from bloge_config.models import RpcRepliesSettings
from tests.cli.conftest import BLOGE, REPO, bloge, environment
from tests.processes import said_until
from tests.rpc.conftest import NATS_URL, nats_or_skip
from tests.uvicorn_server import UvicornServer

QUESTION = "How do I reset my password?"


def test_services_says_how_each_is_bound(app: Path) -> None:
    done = bloge("rpc", "services", cwd=app)
    assert done.returncode == 0, done.stderr
    assert ("RpcService[kb]: registered, bloge.rpc.services.kb.transport is 'in-process': "
            "KnowledgeBaseService bound to a proxy over the in-process transport") in done.stdout


def test_config_says_how_each_service_is_bound(app: Path) -> None:
    done = bloge("config", "--json", cwd=app)
    assert done.returncode == 0, done.stderr
    conditions = {c["component"]: c for c in json.loads(done.stdout)["conditions"]}
    assert conditions["RpcService[kb]"]["registered"]


def test_a_service_that_does_not_fit_is_told_by_config_and_not_by_a_run_calling_none(
        app: Path) -> None:
    unfit = {"BLOGE_RPC__SERVICES__KB__IMPLEMENTATION":
             "examples.support.operators:KBSearchOperator"}
    ran = bloge("run", "customerSupport", QUESTION, cwd=app, env=unfit)
    assert ran.returncode == 0, ran.stderr
    assert "KB-RESET-001" in ran.stdout
    shown = bloge("config", cwd=app, env=unfit)
    assert shown.returncode == 2
    assert ("bloge.rpc.services.kb.implementation: KBSearchOperator does not implement "
            "KnowledgeBaseService") in shown.stderr


def test_services_says_how_keyed_calls_are_de_duplicated(app: Path) -> None:
    done = bloge("rpc", "services", cwd=app, env={"BLOGE_RPC__REPLIES__BUCKET": "kb_replies",
                                                  "BLOGE_RPC__REPLIES__TTL": "1h"})
    assert done.returncode == 0, done.stderr
    assert ("RpcExposed[kb/nats]: registered, bloge.rpc.services.kb.expose lists nats: bloge "
            "rpc serve answers on NATS; keyed calls de-duplicated across replicas in the "
            "JetStream bucket kb_replies (bloge.rpc.replies: replies kept 3600s, claim lease "
            "10s") in done.stdout


def test_the_replies_settings_default_to_the_responders_defaults() -> None:
    replies = RpcRepliesSettings()
    assert (replies.bucket, replies.ttl, replies.claim_lease) == (
        jetstream.DEFAULT_BUCKET, jetstream.DEFAULT_TTL, jetstream.DEFAULT_LEASE)


@pytest.mark.parametrize("given", ["inline", "@args.json", "-"])
def test_call_prints_the_reply(app: Path, given: str) -> None:
    """The arguments inline, from a file (``@args.json``) or from stdin (``-``)."""
    arguments = '{\n  "query": "reset my password"\n}\n'
    (app / "args.json").write_text(arguments, encoding="utf-8")
    done = bloge("rpc", "call", "kb", "search", arguments if given == "inline" else given,
                 cwd=app, stdin=arguments if given == "-" else None)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["articleId"] == "KB-RESET-001"


def test_a_failed_call_prints_its_code_and_exits_1(app: Path) -> None:
    done = bloge("rpc", "call", "kb", "search", '{"query": ""}', cwd=app)
    assert done.returncode == 1
    assert done.stderr.strip() == ("error: invalid_argument: kb.search: query must not be "
                                   "empty: pass the customer's question")


def test_arguments_that_are_not_json_are_a_usage_error(app: Path) -> None:
    done = bloge("rpc", "call", "kb", "search", "{query}", cwd=app)
    assert done.returncode == 2
    assert "the arguments are not JSON" in done.stderr


async def _not_json(request: Request) -> PlainTextResponse:
    return PlainTextResponse("hello, not JSON")


def test_a_reply_that_is_not_json_is_an_error_naming_the_method(app: Path) -> None:
    not_bloge = Starlette(routes=[Route("/rpc/kb/search", _not_json, methods=["POST"])])
    with UvicornServer(not_bloge) as server:
        done = bloge("rpc", "call", "kb", "search", '{"query": "reset my password"}', cwd=app,
                     env={"BLOGE_RPC__SERVICES__KB__TRANSPORT": "http",
                          "BLOGE_RPC__SERVICES__KB__URL": server.url("")})
    assert done.returncode == 1
    assert done.stderr.startswith("error: internal: kb.search: the reply does not fit the "
                                  "declared result type: Invalid JSON"), done.stderr
    assert "Traceback" not in done.stderr


def test_an_unknown_service_is_a_usage_error(app: Path) -> None:
    done = bloge("rpc", "call", "billing", "charge", cwd=app)
    assert (done.returncode, done.stderr.strip()) == (
        2, "error: bloge.rpc.services has no service 'billing' (it has: kb)")


def test_the_support_agent_uses_a_knowledge_base_behind_nats(app: Path) -> None:
    nats_or_skip()
    shutil.copy(REPO / "examples/support/settings.kb-remote.yaml", app)
    env = {"NATS_URL": NATS_URL, "BLOGE_RPC__REPLIES__BUCKET": "kb_replies"}
    service = subprocess.Popen([str(BLOGE), "rpc", "serve"], cwd=app, env=environment(env),
                               stderr=subprocess.PIPE, text=True)
    try:
        (ready,) = said_until(service, bool, "that it serves", stream="stderr")
        assert "bloge rpc serve: kb on NATS" in ready
        assert "de-duplicated across replicas, in the JetStream bucket kb_replies" in ready
        done = bloge("run", "customerSupport", QUESTION, "--profile", "kb-remote", cwd=app,
                     env={**env, "KB_TRANSPORT": "nats", "KB_URL": NATS_URL})
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("KB-RESET-001 — ")
    finally:
        service.send_signal(signal.SIGTERM)
        _, rest = service.communicate(timeout=30)
    assert service.returncode == 0
    assert "bloge rpc serve: stopped" in rest


def test_a_missing_arguments_file_is_named(app: Path) -> None:
    done = bloge("rpc", "call", "kb", "search", "@nowhere.json", cwd=app)
    assert done.returncode == 2
    assert done.stderr.strip() == ("error: cannot read the arguments file nowhere.json: No "
                                   "such file or directory")


def test_arguments_that_are_not_json_are_placed_by_file_line_and_column(app: Path) -> None:
    (app / "args.json").write_text('{\n  "query": "x",\n}\n', encoding="utf-8")
    done = bloge("rpc", "call", "kb", "search", "@args.json", cwd=app)
    assert done.returncode == 2
    assert done.stderr.strip() == ("error: the arguments file args.json is not JSON at line 3, "
                                   "column 1: Expecting property name enclosed in double "
                                   "quotes")


def test_arguments_that_are_not_an_object_are_refused_before_the_call(app: Path) -> None:
    done = bloge("rpc", "call", "kb", "search", "-", cwd=app, stdin='["reset my password"]')
    assert done.returncode == 2
    assert done.stderr.strip() == ("error: the arguments on stdin are a list; a JSON object "
                                   "is needed (the method's arguments by name)")
