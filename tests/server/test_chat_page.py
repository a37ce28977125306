"""The chat page in a real headless Chromium (Debian's ``chromium``, driven by Playwright)
against a real server: pick an agent, type, watch the tool calls and tokens arrive (see
:mod:`tests.server.browser` for when these tests skip)."""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bloge import Agent
from bloge.llm import LlmResponse, ScriptedProvider, ToolCall
from bloge.server import ServerConfig, create_app
from bloge.store import open_store
from tests.server.browser import GatedProvider, last_answer, open_chat, say
from tests.server.conftest import Serve
from tests.server.live_server import LiveServer

with contextlib.suppress(ImportError):  # without Playwright, the browser fixture skips
    from playwright.sync_api import Page, Route, expect

LOOKUP = LlmResponse("", "tool_calls", tool_calls=(ToolCall("c1", "lookup", '{"q": "kb"}'),))


def test_a_message_shows_its_tool_call_and_its_streamed_answer(serve: Serve, page: Page) -> None:
    served = serve(ScriptedProvider(LOOKUP, "Found the word."))
    open_chat(page, served)
    say(page, "Find kb")
    answer = last_answer(page)
    tool = answer.locator('.tool[data-call-id="c1"]')
    expect(tool.locator(".tool-name")).to_have_text("lookup")
    expect(tool.locator(".call-id")).to_have_text("c1")
    expect(tool.locator(".tool-state")).to_have_text("succeeded")
    expect(answer.locator(".text")).to_have_text("Found the word.")
    expect(answer).to_have_attribute("data-state", "done")


def test_the_answer_shows_its_run_id(serve: Serve, page: Page) -> None:
    served = serve(ScriptedProvider("Hello."))
    open_chat(page, served)
    say(page, "Hi")
    expect(last_answer(page)).to_have_attribute("data-state", "done")
    thread = httpx.get(served.url(f"/threads/{page.text_content('#thread-id')}")).json()
    expect(last_answer(page).locator(".run-id")).to_have_text(thread["last_run_id"])


@pytest.fixture
def thinking(serve: Serve, page: Page) -> Iterator[tuple[Any, GatedProvider]]:
    """A run under way in ``page``: its first words shown, the rest held back until the
    provider's ``release`` is set (at the latest when the test ends)."""
    provider = GatedProvider()
    served = serve(provider, shutdown_grace=0.0)
    try:
        open_chat(page, served)
        say(page, "Think")
        expect(last_answer(page).locator(".text")).to_have_text("Thinking ")
        yield served, provider
    finally:
        provider.release.set()


def test_tokens_appear_while_the_run_is_still_going(thinking: tuple[Any, GatedProvider], page: Page) -> None:
    _, provider = thinking
    answer = last_answer(page)
    expect(answer).to_have_attribute("data-state", "running")
    expect(page.locator("#stop")).to_be_visible()
    provider.release.set()
    expect(answer.locator(".text")).to_have_text("Thinking done.")
    expect(answer).to_have_attribute("data-state", "done")


def test_the_picked_agent_answers(serve: Serve, page: Page) -> None:
    served = serve(ScriptedProvider("Other here."))
    open_chat(page, served)
    page.select_option("#agent", "other")
    expect(page.locator("#agent-info")).to_have_text("gpt-4o · no tools")
    say(page, "Who are you?")
    expect(last_answer(page)).to_have_attribute("data-state", "done")
    run_id = last_answer(page).get_attribute("data-run-id")
    assert httpx.get(served.url(f"/runs/{run_id}")).json()["agent_id"] == "other"


def test_a_second_message_continues_the_conversation(serve: Serve, page: Page) -> None:
    provider = ScriptedProvider("Hello Ada.", "You are Ada.")
    open_chat(page, serve(provider))
    for text in ("I am Ada.", "Who am I?"):
        say(page, text)
        expect(last_answer(page)).to_have_attribute("data-state", "done")
    seen = [m.content for m in provider.requests[1].messages]
    assert seen == ["Be brief.", "I am Ada.", "Hello Ada.", "Who am I?"]


def test_a_new_conversation_starts_a_new_thread(serve: Serve, page: Page) -> None:
    provider = ScriptedProvider("Hello Ada.", "Hello again.")
    open_chat(page, serve(provider))
    first_thread = page.text_content("#thread-id")
    say(page, "I am Ada.")
    expect(last_answer(page)).to_have_attribute("data-state", "done")
    page.click("#new-conversation")
    expect(page.locator("#thread-id")).not_to_have_text(first_thread or "")
    expect(page.locator(".turn")).to_have_count(0)
    say(page, "Who am I?")
    expect(last_answer(page)).to_have_attribute("data-state", "done")
    assert [m.content for m in provider.requests[1].messages] == ["Be brief.", "Who am I?"]


def test_the_page_asks_for_the_api_key_and_then_works(serve: Serve, page: Page) -> None:
    served = serve(ScriptedProvider("Hello."), api_keys=("k-test",))
    page.goto(served.url("/"))
    expect(page.locator("#key-form")).to_be_visible()
    page.fill("#api-key", "k-test")
    page.press("#api-key", "Enter")
    expect(page.locator("#key-form")).to_be_hidden()
    expect(page.locator("#send")).to_be_enabled()
    say(page, "Hi")
    expect(last_answer(page).locator(".text")).to_have_text("Hello.")


def test_a_refused_key_is_asked_for_again(serve: Serve, page: Page) -> None:
    served = serve(ScriptedProvider("Hello."), api_keys=("k-test",))
    page.goto(served.url("/"))
    page.fill("#api-key", "k-wrong")
    page.press("#api-key", "Enter")
    expect(page.locator("#key-reason")).to_contain_text("refused that key")
    expect(page.locator("#key-form")).to_be_visible()


def test_model_text_is_shown_as_text_never_as_markup(serve: Serve, page: Page) -> None:
    markup = '<img src=x onerror="document.title=1"> <b>bold</b>'
    open_chat(page, serve(ScriptedProvider(markup)))
    say(page, "<i>hi</i>")
    answer = last_answer(page)
    expect(answer.locator(".text")).to_have_text(markup)
    expect(page.locator(".turn.user .text")).to_have_text("<i>hi</i>")
    expect(page.locator("#transcript img, #transcript b, #transcript i")).to_have_count(0)
    assert page.title() == "bloge chat"


def test_a_failed_run_is_shown_plainly(serve: Serve, page: Page) -> None:
    open_chat(page, serve(ScriptedProvider(LOOKUP)))  # nothing left for the second turn
    say(page, "Find kb")
    answer = last_answer(page)
    expect(answer.locator(".error")).to_contain_text(
        "The run failed (error): BlogeUsageError: ScriptedProvider has no answer left")
    expect(answer).to_have_attribute("data-state", "failed")
    expect(page.locator("#send")).to_be_enabled()


def test_stop_cancels_the_running_run(thinking: tuple[Any, GatedProvider], page: Page) -> None:
    served, _ = thinking
    answer = last_answer(page)
    page.click("#stop")
    expect(answer.locator(".error")).to_have_text("The run was stopped.")
    run_id = answer.get_attribute("data-run-id")
    assert httpx.get(served.url(f"/runs/{run_id}")).json()["status"] == "cancelled"


def test_a_dropped_stream_is_joined_again_after_its_last_event(serve: Serve, page: Page) -> None:
    served = serve(ScriptedProvider(LOOKUP, "Found the word."))
    kept: list[str] = []

    def cut_short(route: Route) -> None:
        response = route.fetch()
        blocks = response.text().split("\n\n")
        kept.extend(re.findall(r"^id: (\d+)$", "\n".join(blocks[:3]), flags=re.MULTILINE))
        route.fulfill(response=response, body="\n\n".join(blocks[:3]) + "\n\n")

    page.route("**/agents/helper/runs", cut_short)
    open_chat(page, served)
    with page.expect_request("**/stream") as rejoined:
        say(page, "Find kb")
    answer = last_answer(page)
    expect(answer.locator(".text")).to_have_text("Found the word.")
    expect(answer).to_have_attribute("data-state", "done")
    assert rejoined.value.headers["last-event-id"] == kept[-1]


def test_the_stream_reader_takes_comments_crlf_and_multi_line_data(serve: Serve, page: Page) -> None:
    served = serve(ScriptedProvider())
    body = (": ping\r\n\r\n"
            'id: 1\r\nevent: token\r\ndata: {"text":\r\ndata: "Hello "}\r\n\r\n'
            "id: 2\nevent: surprise\ndata: {}\n\n"
            'id: 3\nevent: token\ndata:{"text": "world"}\n\n'
            'id: 4\nevent: done\ndata: {"run_id": "r-1", "thread_id": "t", '
            '"content": "Hello world", "turns_used": 1, "usage": {}}\n\n')
    page.route("**/agents/helper/runs", lambda route: route.fulfill(
        status=200, content_type="text/event-stream", body=body))
    open_chat(page, served)
    say(page, "Hi")
    answer = last_answer(page)
    expect(answer.locator(".text")).to_have_text("Hello world")
    expect(answer.locator(".run-id")).to_have_text("r-1")


def test_the_page_keeps_to_its_content_security_policy(serve: Serve, page: Page) -> None:
    refused: list[str] = []
    page.on("console", lambda message: refused.append(message.text)
            if "Content Security Policy" in message.text else None)
    open_chat(page, serve(ScriptedProvider(LOOKUP, "Found it.")))
    say(page, "Find kb")
    expect(last_answer(page)).to_have_attribute("data-state", "done")
    assert page.evaluate("getComputedStyle(document.body).display") == "flex"  # the style ran
    assert refused == []


def test_a_call_awaiting_approval_shows_approve_and_deny_and_continues(tmp_path: Path,
                                                                        page: Page) -> None:
    def transfer(amount: int) -> str:
        """Send money."""
        return f"sent {amount}"

    transfer.requires_approval = True  # type: ignore[attr-defined]  # the facade reads it
    answers = ScriptedProvider(LlmResponse("", "tool_calls", tool_calls=(
        ToolCall("p1", "transfer", '{"amount": 500}'),)), "Sent it.")
    store = open_store(f"sqlite:///{tmp_path / 'bloge.db'}")
    app = create_app([Agent(answers, [transfer], name="payer")], store=store,
                     config=ServerConfig())
    with LiveServer(app) as server:
        page.goto(server.url("/"))
        expect(page.locator("#send")).to_be_enabled()
        say(page, "Pay 500")
        answer = last_answer(page)
        waiting = answer.locator('.approval[data-call-id="p1"]')
        expect(waiting.locator(".tool-name")).to_have_text("transfer")
        expect(waiting.locator(".arguments")).to_have_text('{"amount": 500}')
        expect(answer).to_have_attribute("data-state", "awaiting")
        waiting.locator("button.approve").click()
        expect(answer.locator(".text")).to_have_text("Sent it.")
        expect(answer).to_have_attribute("data-state", "done")
        expect(waiting).to_have_attribute("data-decided", "approved")
    closing = threading.Thread(target=asyncio.run, args=(store.aclose(),))
    closing.start()
    closing.join()


def test_a_sub_agents_call_awaiting_approval_is_decided_in_the_callers_answer(
        tmp_path: Path, page: Page) -> None:
    def refund(amount: int) -> str:
        """Refund an amount."""
        return f"refunded {amount}"

    refund.requires_approval = True  # type: ignore[attr-defined]  # the facade reads it
    store = open_store(f"sqlite:///{tmp_path / 'bloge.db'}")
    billing = Agent(ScriptedProvider(LlmResponse("", "tool_calls", tool_calls=(
        ToolCall("r1", "refund", '{"amount": 10}'),)), "Refunded 10."), [refund],
        name="billing", store=store)
    triage = Agent(ScriptedProvider(LlmResponse("", "tool_calls", tool_calls=(
        ToolCall("c1", "billing", '{"input": "refund 10"}'),)), "Your refund is on its way."),
        [billing.as_tool()], name="triage", store=store)
    with LiveServer(create_app([triage], store=store, config=ServerConfig())) as server:
        page.goto(server.url("/"))
        expect(page.locator("#send")).to_be_enabled()
        say(page, "Refund me")
        answer = last_answer(page)
        waiting = answer.locator('.approval[data-call-id="r1"]')
        expect(waiting.locator(".tool-name")).to_have_text("refund")
        expect(answer).to_have_attribute("data-state", "awaiting")
        waiting.locator("button.approve").click()
        expect(answer.locator(".text")).to_have_text("Your refund is on its way.")
        expect(answer).to_have_attribute("data-state", "done")
    closing = threading.Thread(target=asyncio.run, args=(store.aclose(),))
    closing.start()
    closing.join()


def test_a_reopened_thread_leaves_out_what_a_sub_agent_wrote_on_it(tmp_path: Path,
                                                                     page: Page) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'bloge.db'}")
    researcher = Agent(ScriptedProvider("KB found."), name="researcher", store=store)
    triage = Agent(ScriptedProvider(LlmResponse("", "tool_calls", tool_calls=(
        ToolCall("c1", "researcher", '{"input": "find kb"}'),)), "Here it is."),
        [researcher.as_tool(thread="parent")], name="triage", store=store)
    with LiveServer(create_app([triage], store=store, config=ServerConfig())) as server:
        page.goto(server.url("/"))
        expect(page.locator("#send")).to_be_enabled()
        say(page, "Find kb")
        expect(last_answer(page)).to_have_attribute("data-state", "done")
        page.reload()
        expect(last_answer(page)).to_have_attribute("data-state", "done")
        expect(page.locator(".turn .text")).to_have_text(["Find kb", "Here it is."])
        expect(page.locator(".turn.assistant")).to_have_count(1)
    closing = threading.Thread(target=asyncio.run, args=(store.aclose(),))
    closing.start()
    closing.join()
