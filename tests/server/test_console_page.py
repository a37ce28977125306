"""The chat page as a console, in a real headless Chromium against a real server: markdown
answers (and hostile ones), tool calls opened to their masked arguments and results, typed
results, failed runs resumed, the threads sidebar, reloads and second tabs, a run's live
timeline, the approvals inbox (four eyes too) and autopilot proposals, the keyboard, the dark
theme and a 360 px screen (see :mod:`tests.server.browser` for when these tests skip)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from bloge import Agent
from bloge.autopilot import Autopilot, Knob, KnobTier
from bloge.llm import LlmResponse, ScriptedProvider, ToolCall
from bloge.server import ServerConfig, create_app
from bloge.store import Store, open_store
from tests.server.browser import WAIT_MS, GatedProvider, last_answer, open_chat, say
from tests.server.conftest import Serve, closed
from tests.server.live_server import LiveServer

with contextlib.suppress(ImportError):  # without Playwright, the browser fixture skips
    from playwright.sync_api import Browser, Page, Route, expect

ALICE, BOB, ADMIN = "k-alice", "k-bob", "k-admin"
LOOKUP = LlmResponse("", "tool_calls", tool_calls=(ToolCall("c1", "lookup", '{"q": "kb"}'),))
SECRET_LOOKUP = LlmResponse("", "tool_calls", tool_calls=(
    ToolCall("c1", "lookup", '{"q": "password=hunter2"}'),))
PAY = LlmResponse("", "tool_calls", tool_calls=(ToolCall("p1", "transfer", '{"amount": 500}'),))

MARKDOWN = """# Plan

Some **bold**, *italic*, _also italic_, ~~gone~~ and `code`; snake_case_name stays.

- one
- two
  - nested
1. first
2. second

| name | count |
|:-----|------:|
| apples | 3 |

> quoted

See [the docs](https://example.org/docs) or [mail us](mailto:team@example.org).

```python
print("hi")
```
"""

HOSTILE = """<script>window.pwned = 1</script>
<img src=x onerror="window.pwned = 2">
[click me](javascript:window.pwned=3)
[data](data:text/html,<script>window.pwned=4</script>)
<a href="javascript:window.pwned=5">raw link</a>
<iframe srcdoc="<script>parent.pwned=6</script>"></iframe>
**<svg onload="window.pwned=7">**

```html
</code></pre><script>window.pwned=8</script>
```

| <img src=x onerror=window.pwned=9> | b |
|---|---|
| [x](vbscript:msgbox) | <style>body{display:none}</style> |
"""


def transfer(amount: int) -> str:
    """Send money."""
    return f"sent {amount}"


transfer.requires_approval = True  # type: ignore[attr-defined]  # the facade reads it


class Ticket(BaseModel):
    title: str
    priority: int


Start = Callable[..., LiveServer]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    """``start(agents, autopilot=None, **config)``: ``create_app`` on a real server."""
    started: list[tuple[LiveServer, Store]] = []

    def launch(agents: Sequence[Agent], *, knobs: Sequence[Knob] = (),
               **config: Any) -> LiveServer:
        store = open_store(f"sqlite:///{tmp_path / f'bloge-{len(started)}.db'}")
        autopilot = None
        if knobs:
            autopilot = Autopilot(store=store)
            for knob in knobs:
                autopilot.register_knob(knob)
        app = create_app(list(agents), store=store, config=ServerConfig(**config),
                         autopilot=autopilot)
        server = LiveServer(app).__enter__()
        started.append((server, store))
        return server

    yield launch
    for server, store in started:
        server.stop()
        closed(store)


def tab(browser: Browser, **options: Any) -> Page:
    """Another tab, with its own sessionStorage (closed with the browser)."""
    context = browser.new_context(**options)
    context.set_default_timeout(WAIT_MS)
    return context.new_page()


def with_key(page: Page, url: str, key: str) -> None:
    page.goto(url)
    page.fill("#api-key", key)
    page.press("#api-key", "Enter")
    expect(page.locator("#send")).to_be_enabled()


def inbox_of(browser: Browser, server: LiveServer, key: str) -> Page:
    """A tab of the console with ``key``, its inbox open."""
    page = tab(browser)
    with_key(page, server.url("/"), key)
    page.click("#open-inbox")
    return page


def answered(page: Page, text: str) -> Any:
    say(page, text)
    answer = last_answer(page)
    expect(answer).to_have_attribute("data-state", "done")
    return answer


# --- 1. chat


def test_markdown_is_rendered_as_elements(serve: Serve, page: Page) -> None:
    open_chat(page, serve(ScriptedProvider(MARKDOWN)))
    answer = answered(page, "Plan it")
    expect(answer.locator("h3")).to_have_text("Plan")
    expect(answer.locator("strong")).to_have_text("bold")
    expect(answer.locator("em")).to_have_text(["italic", "also italic"])
    expect(answer.locator("del")).to_have_text("gone")
    expect(answer.locator("p code")).to_have_text("code")
    expect(answer.locator(".md > ul > li")).to_have_count(2)
    expect(answer.locator("ul ul li")).to_have_text("nested")
    expect(answer.locator("ol li")).to_have_text(["first", "second"])
    expect(answer.locator("th")).to_have_text(["name", "count"])
    expect(answer.locator("td").last).to_have_attribute("align", "right")
    expect(answer.locator("blockquote")).to_have_text("quoted")
    docs = answer.locator('a[href="https://example.org/docs"]')
    expect(docs).to_have_attribute("rel", "noopener noreferrer")
    expect(docs).to_have_attribute("target", "_blank")
    expect(answer.locator('a[href="mailto:team@example.org"]')).to_have_text("mail us")
    expect(answer.locator("pre code")).to_have_text('print("hi")')
    expect(answer.locator(".md")).to_contain_text("snake_case_name stays")


def test_a_code_block_s_copy_button_copies_its_code(serve: Serve, browser: Browser) -> None:
    page = tab(browser)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    open_chat(page, serve(ScriptedProvider("```sh\nbloge serve --port 8000\n```")))
    answer = answered(page, "How?")
    copy = answer.get_by_role("button", name="Copy the sh code")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == "bloge serve --port 8000"


def test_a_hostile_markdown_answer_runs_no_script_and_links_nowhere_else(serve: Serve,
                                                                       page: Page) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog.message))
    open_chat(page, serve(ScriptedProvider(HOSTILE)))
    answer = answered(page, "Attack")
    expect(answer.locator(".md")).to_contain_text("<script>window.pwned = 1</script>")
    expect(answer.locator("pre code")).to_have_text(
        "</code></pre><script>window.pwned=8</script>")
    expect(page.locator("#transcript :is(script, img, iframe, svg, style, a)")).to_have_count(0)
    answer.get_by_text("click me").click()
    assert page.evaluate("window.pwned") is None
    assert page.evaluate("getComputedStyle(document.body).display") == "flex"
    assert dialogs == []


def test_a_tool_call_opens_to_its_masked_arguments_and_result(serve: Serve, page: Page) -> None:
    open_chat(page, serve(ScriptedProvider(SECRET_LOOKUP, "Found it.")))
    answer = answered(page, "Find it")
    tool = answer.locator('.tool[data-call-id="c1"]')
    tool.locator("summary").click()
    expect(tool.locator(".arguments")).to_have_text('{\n  "q": "password=[redacted]"\n}')
    expect(tool.locator(".result")).to_have_text('{\n  "found": "PASSWORD=[redacted]"\n}')
    page.reload()  # from the thread's stored messages, masked as well
    tool = last_answer(page).locator('.tool[data-call-id="c1"]')
    tool.locator("summary").click()
    expect(tool.locator(".result")).to_have_text('{\n  "found": "PASSWORD=[redacted]"\n}')
    assert "hunter2" not in page.content().lower()


def test_a_typed_result_is_shown_as_a_structured_view(start: Start, page: Page) -> None:
    agent = Agent(ScriptedProvider('{"title": "Jam", "priority": 2}'), model="m",
                  name="triage", output_type=Ticket)
    open_chat(page, start([agent]))
    typed = answered(page, "File it").locator(".typed")
    expect(typed.locator("dt")).to_have_text(["title", "priority"])
    expect(typed.locator("dd")).to_have_text(["Jam", "2"])
    page.reload()
    expect(last_answer(page).locator(".typed dd")).to_have_text(["Jam", "2"])


def test_a_failed_run_shows_its_id_and_resumes(serve: Serve, page: Page) -> None:
    provider = ScriptedProvider(LOOKUP)  # nothing left for the second turn
    open_chat(page, serve(provider))
    say(page, "Find kb")
    answer = last_answer(page)
    expect(answer).to_have_attribute("data-state", "failed")
    run_id = answer.get_attribute("data-run-id") or ""
    expect(answer.locator(".error-actions code")).to_have_text(run_id)
    provider.add("Found it after all.")
    answer.get_by_role("button", name=f"Resume run {run_id}").click()
    expect(answer.locator(".text")).to_have_text("Found it after all.")
    expect(answer).to_have_attribute("data-state", "done")
    expect(answer.locator(".error")).to_have_count(0)


# --- 2. threads


def test_the_sidebar_lists_searches_and_continues_threads(serve: Serve, page: Page) -> None:
    provider = ScriptedProvider("About refunds.", "About passwords.", "Still refunds.")
    open_chat(page, serve(provider))
    answered(page, "refund please")
    page.click("#new-conversation")
    answered(page, "password reset")
    items = page.locator(".thread-item")
    expect(items).to_have_count(2)
    expect(items.first).to_contain_text("password reset")  # the newest first
    page.fill("#thread-search", "REFUND")
    expect(items).to_have_count(1)
    items.first.click()
    expect(page.locator(".turn.user .text")).to_have_text(["refund please"])
    expect(last_answer(page).locator(".text")).to_have_text("About refunds.")
    answered(page, "more?")
    seen = [m.content for m in provider.requests[-1].messages]
    assert seen == ["Be brief.", "refund please", "About refunds.", "more?"]


def test_a_reload_and_a_second_tab_show_the_same_conversation(serve: Serve, page: Page,
                                                              browser: Browser) -> None:
    open_chat(page, serve(ScriptedProvider("Hello Ada.", "You are Ada.")))
    answered(page, "I am Ada.")
    thread = page.text_content("#thread-id")
    page.reload()
    expect(page.locator("#thread-id")).to_have_text(thread or "")
    expect(last_answer(page).locator(".text")).to_have_text("Hello Ada.")
    second = tab(browser)
    second.goto(page.url)
    expect(second.locator(".turn.user .text")).to_have_text(["I am Ada."])
    answered(second, "Who am I?")
    page.reload()
    expect(page.locator(".turn .text")).to_have_text(
        ["I am Ada.", "Hello Ada.", "Who am I?", "You are Ada."])


def test_a_reload_mid_stream_rejoins_the_run(serve: Serve, page: Page) -> None:
    provider = GatedProvider()
    served = serve(provider, shutdown_grace=0.0)
    try:
        open_chat(page, served)
        say(page, "Think")
        expect(last_answer(page).locator(".text")).to_have_text("Thinking ")
        page.reload()
        answer = last_answer(page)
        expect(answer.locator(".text")).to_have_text("Thinking ")
        expect(answer).to_have_attribute("data-state", "running")
        expect(page.locator("#stop")).to_be_visible()
        provider.release.set()
        expect(answer.locator(".text")).to_have_text("Thinking done.")
        expect(answer).to_have_attribute("data-state", "done")
        expect(page.locator(".turn.user .text")).to_have_text(["Think"])
    finally:
        provider.release.set()


def test_another_key_s_threads_are_not_listed(serve: Serve, browser: Browser) -> None:
    served = serve(ScriptedProvider("Hi Alice.", "Hi Bob."), api_keys=(ALICE, BOB))
    alice, bob = tab(browser), tab(browser)
    with_key(alice, served.url("/"), ALICE)
    answered(alice, "secret plans of Alice")
    with_key(bob, served.url("/"), BOB)
    answered(bob, "hello from Bob")
    bob.reload()
    expect(bob.locator(".thread-item")).to_have_count(1)
    expect(bob.locator("#thread-list")).not_to_contain_text("Alice")


# --- 3. runs


def test_a_run_s_timeline_shows_its_turns_model_and_tool_calls(serve: Serve, page: Page) -> None:
    open_chat(page, serve(ScriptedProvider(LOOKUP, "Found the word.")))
    answer = answered(page, "Find kb")
    opener = answer.locator("button.run-id")
    opener.click()
    panel = page.locator("#run-panel")
    expect(panel).to_be_visible()
    expect(panel.locator(".entry .label")).to_have_text(
        ["turn_started", "llm_called", "tool_dispatched", "tool_completed", "turn_started",
         "llm_called", "loop_exited"])
    expect(panel.locator(".entry .detail").nth(1)).to_contain_text("tokens")
    expect(page.locator("#run-status")).to_have_text("finished")
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    expect(opener).to_be_focused()


def test_a_run_s_timeline_is_live_while_it_runs(serve: Serve, page: Page) -> None:
    provider = GatedProvider()
    served = serve(provider, shutdown_grace=0.0)
    try:
        open_chat(page, served)
        say(page, "Think")
        answer = last_answer(page)
        expect(answer.locator(".text")).to_have_text("Thinking ")
        answer.locator("button.run-id").click()
        labels = page.locator("#timeline .entry .label")
        expect(labels).to_have_text(["turn_started"])
        expect(page.locator("#run-status")).to_have_text("live")
        provider.release.set()
        expect(labels).to_have_text(["turn_started", "llm_called", "loop_exited"])
        expect(page.locator("#run-status")).to_have_text("finished")
    finally:
        provider.release.set()


def test_a_dropped_timeline_is_joined_again_after_its_last_event(serve: Serve,
                                                                 page: Page) -> None:
    open_chat(page, serve(ScriptedProvider(LOOKUP, "Found the word.")))
    answer = answered(page, "Find kb")
    kept: list[str] = []

    def cut_short(route: Route) -> None:
        if kept:
            route.continue_()
            return
        blocks = route.fetch().text().split("\n\n")
        kept.extend(re.findall(r"^id: (\d+)$", "\n".join(blocks[:3]), flags=re.MULTILINE))
        route.fulfill(status=200, content_type="text/event-stream",
                      body="\n\n".join(blocks[:3]) + "\n\n")

    page.route("**/events", cut_short)
    with page.expect_request(lambda r: r.url.endswith("/events") and bool(kept)) as rejoined:
        answer.locator("button.run-id").click()
    assert rejoined.value.headers["last-event-id"] == kept[-1]
    expect(page.locator("#timeline .entry")).to_have_count(7)
    expect(page.locator("#run-status")).to_have_text("finished")


# --- 4. approvals


def test_an_approval_is_decided_from_the_inbox(start: Start, page: Page) -> None:
    agent = Agent(ScriptedProvider(PAY, "Sent it."), [transfer], name="payer")
    open_chat(page, start([agent]))
    say(page, "Pay 500")
    answer = last_answer(page)
    expect(answer).to_have_attribute("data-state", "awaiting")
    expect(page.locator("#inbox-count")).to_have_text("1")
    page.click("#open-inbox")
    item = page.locator('#approval-list .inbox-item[data-call-id="p1"]')
    expect(item.locator(".arguments")).to_have_text('{"amount": 500}')
    item.get_by_role("textbox").fill("within the limit")
    item.get_by_role("button", name="Approve transfer p1").click()
    expect(page.locator("#approval-list")).to_have_text("Nothing waits for a decision.")
    expect(answer.locator(".text")).to_have_text("Sent it.")
    expect(answer).to_have_attribute("data-state", "done")
    expect(answer.locator(".approval")).to_have_attribute("data-decided", "approved")
    expect(page.locator("#inbox-count")).to_have_text("")


def test_four_eyes_refuses_the_starter_plainly_and_another_key_decides(
        start: Start, browser: Browser) -> None:
    agent = Agent(ScriptedProvider(PAY, "Sent it."), [transfer], name="payer")
    server = start([agent], api_keys=(ALICE,), admin_keys=(ADMIN,), four_eyes=True)
    alice = tab(browser)
    with_key(alice, server.url("/"), ALICE)
    say(alice, "Pay 500")
    expect(last_answer(alice)).to_have_attribute("data-state", "awaiting")
    alice.click("#open-inbox")
    mine = alice.locator('#approval-list .inbox-item[data-call-id="p1"]')
    expect(mine.locator(".note")).to_contain_text("Four eyes")
    mine.get_by_role("button", name="Approve transfer p1").click()
    expect(mine.locator(".decision.refused")).to_contain_text("Refused (four eyes) — 403:")
    alice.click("#inbox-refresh")  # drawn again, the row still says why
    expect(mine.locator(".decision.refused")).to_contain_text("Refused (four eyes) — 403:")
    admin = inbox_of(browser, server, ADMIN)
    theirs = admin.locator('#approval-list .inbox-item[data-call-id="p1"]')
    theirs.get_by_role("button", name="Approve transfer p1").click()
    expect(admin.locator("#approval-list")).to_have_text("Nothing waits for a decision.")
    alice.reload()
    expect(last_answer(alice).locator(".text")).to_have_text("Sent it.")


def test_autopilot_proposals_are_approved_from_the_inbox_never_by_their_proposer(
        start: Start, browser: Browser) -> None:
    agent = Agent(ScriptedProvider(), name="ops")
    server = start([agent], knobs=[Knob("turns", KnobTier.DANGEROUS, 1, 10, 4)],
                   api_keys=(ALICE, BOB))
    proposed = httpx.post(server.url("/autopilot/knobs/turns/proposals"),
                          json={"value": 8, "reason": "long questions"},
                          headers={"Authorization": f"Bearer {ALICE}"})
    assert proposed.status_code == 200, proposed.text
    alice = inbox_of(browser, server, ALICE)
    own = alice.locator("#proposal-list .proposal")
    expect(own.locator(".tool-name")).to_have_text("turns: 4 → 8")
    own.get_by_role("button", name="Approve").click()
    expect(own.locator(".decision.refused")).to_contain_text("403")
    # The inbox drawn again (it refreshes on focus, on opening, at the page's start: one of
    # them could land after the click) still shows the answer.
    alice.click("#inbox-refresh")
    expect(own.locator(".decision.refused")).to_contain_text("403")
    bob = inbox_of(browser, server, BOB)
    theirs = bob.locator("#proposal-list .proposal")
    theirs.get_by_role("button", name="Approve").click()
    expect(theirs.locator(".decision")).to_have_text("approved")


# --- 5. everyone


def test_the_keyboard_reaches_everything_in_order(serve: Serve, page: Page) -> None:
    open_chat(page, serve(ScriptedProvider("Two lines.")))
    page.focus("#skip")  # the first stop: "Skip to the message box"
    order = []
    for _ in range(6):
        page.keyboard.press("Tab")
        order.append(page.evaluate("document.activeElement.id"))
    assert order == ["agent", "open-inbox", "new-conversation", "thread-search", "message",
                     "send"]
    page.focus("#message")
    page.keyboard.type("line one")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("line two")
    page.keyboard.press("Enter")
    expect(page.locator(".turn.user .text")).to_have_text(["line one\nline two"])
    expect(last_answer(page)).to_have_attribute("data-state", "done")


def test_escape_stops_the_running_run(serve: Serve, page: Page) -> None:
    provider = GatedProvider()
    served = serve(provider, shutdown_grace=0.0)
    try:
        open_chat(page, served)
        say(page, "Think")
        answer = last_answer(page)
        expect(answer.locator(".text")).to_have_text("Thinking ")
        page.keyboard.press("Escape")
        expect(answer.locator(".error")).to_have_text("The run was stopped.")
    finally:
        provider.release.set()


def test_controls_are_named_for_screen_readers(start: Start, page: Page) -> None:
    agent = Agent(ScriptedProvider(PAY, "Sent it."), [transfer], name="payer")
    open_chat(page, start([agent]))
    expect(page.get_by_role("navigation", name="Threads")).to_be_visible()
    expect(page.get_by_role("searchbox", name="Search threads")).to_be_visible()
    expect(page.get_by_role("textbox", name="Message")).to_be_visible()
    expect(page.get_by_role("button", name="Approvals")).to_be_visible()
    say(page, "Pay 500")
    answer = last_answer(page)
    expect(answer.get_by_role("button", name="Deny transfer p1")).to_be_visible()
    expect(answer.get_by_role("textbox", name="Reason for transfer p1")).to_be_visible()
    expect(answer.get_by_role("button", name=re.compile(r"^Timeline of run "))).to_be_visible()


@pytest.mark.parametrize(("scheme", "background"), [("dark", "rgb(20, 22, 27)"),
                                                     ("light", "rgb(246, 247, 249)")])
def test_the_theme_follows_the_system(serve: Serve, browser: Browser, scheme: str,
                                      background: str) -> None:
    page = tab(browser, color_scheme=scheme)
    open_chat(page, serve(ScriptedProvider()))
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == background


def test_the_page_works_360_pixels_wide(serve: Serve, browser: Browser) -> None:
    page = tab(browser, viewport={"width": 360, "height": 740})
    wide = "| " + " | ".join(f"column {n}" for n in range(12)) + " |\n|" + "---|" * 12 + "\n"
    open_chat(page, serve(ScriptedProvider(wide + "\n```\n" + "x" * 300 + "\n```")))
    expect(page.locator("#threads")).to_be_hidden()
    answered(page, "Show me")
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    box = page.locator("#send").bounding_box()
    assert box is not None
    assert box["x"] + box["width"] <= 360
    page.click("#toggle-threads")
    expect(page.locator("#threads")).to_be_visible()
    expect(page.locator(".thread-item")).to_have_count(1)
    page.keyboard.press("Escape")
    expect(page.locator("#threads")).to_be_hidden()


def test_a_second_tab_on_the_thread_follows_a_run_started_in_the_first(serve: Serve,
                                                                        page: Page) -> None:
    open_chat(page, serve(ScriptedProvider("Hello Ada.", "You are Ada.")))
    answered(page, "I am Ada.")
    second = page.context.new_page()  # the same browser profile: a tab beside it
    second.goto(page.url)
    expect(second.locator(".turn.user .text")).to_have_text(["I am Ada."])
    answered(page, "Who am I?")
    expect(second.locator(".turn .text")).to_have_text(
        ["I am Ada.", "Hello Ada.", "Who am I?", "You are Ada."])
