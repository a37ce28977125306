"""The chat page's browser tests' tools: Debian's Chromium driven by Playwright, a tab per
test, and a model whose answer waits for the test.

Without Chromium or Playwright the tests skip, saying why; with ``BLOGE_REQUIRE_SERVICES=1``
(CI) they fail instead.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from bloge.llm import LlmChunk, LlmRequest, LlmResponse

WAIT_MS = 20_000  # generous: the machine's two cores are shared

try:
    from playwright.sync_api import Browser, Page, expect, sync_playwright
except ImportError:  # browser_or_skip says so
    sync_playwright = None
else:
    expect.set_options(timeout=WAIT_MS)

CHROMIUM = os.environ.get("BLOGE_TEST_CHROMIUM", "/usr/bin/chromium")
REQUIRED = os.environ.get("BLOGE_REQUIRE_SERVICES") == "1"
# What Chromium needs here: no sandbox as root, and no calls home on a closed network.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def browser_or_skip() -> None:
    """Skip (fail, in CI) when there is no browser to test the page in."""
    if sync_playwright is None:
        reason = "playwright is not installed (pip install -e '.[dev]')"
    elif not Path(CHROMIUM).is_file():
        reason = f"Chromium is not at {CHROMIUM} (apt-get install chromium)"
    else:
        return
    if REQUIRED:
        pytest.fail(f"BLOGE_REQUIRE_SERVICES=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One Chromium for the module; Playwright gives each launch a fresh profile folder."""
    browser_or_skip()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A tab of its own (its own sessionStorage)."""
    context = browser.new_context()
    context.set_default_timeout(WAIT_MS)
    yield context.new_page()
    context.close()


class GatedProvider:
    """Streams its first words, then waits until the test lets it finish."""

    def __init__(self) -> None:
        self.release = threading.Event()

    async def chat(self, request: LlmRequest) -> LlmResponse:
        raise AssertionError("the page asks for a stream")

    async def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        yield LlmChunk(content="Thinking ")
        await asyncio.to_thread(self.release.wait, 30)
        yield LlmChunk(content="done.")
        yield LlmChunk(done=True, finish_reason="stop")


def open_chat(page: Page, served: Any) -> None:
    page.goto(served.url("/"))
    expect(page.locator("#send")).to_be_enabled()


def say(page: Page, text: str) -> None:
    page.fill("#message", text)
    page.press("#message", "Enter")


def last_answer(page: Page) -> Any:
    return page.locator(".turn.assistant").last
