"""``GET /``, the chat page, without a browser: what is sent, with which guards, to whom."""

from __future__ import annotations

import gzip
import re

import httpx

from bloge.llm import ScriptedProvider
from bloge.server.page import inline_hashes
from tests.server.conftest import Serve


def test_the_page_is_html_with_a_strict_content_security_policy(serve: Serve) -> None:
    response = httpx.get(serve(ScriptedProvider()).url("/"))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    policy = dict(part.strip().split(" ", 1)
                  for part in response.headers["content-security-policy"].split(";"))
    assert policy["default-src"] == "'none'"
    assert policy["connect-src"] == "'self'"
    assert policy["frame-ancestors"] == "'none'"
    assert policy["script-src"] == inline_hashes(response.text, "script")
    assert policy["style-src"] == inline_hashes(response.text, "style")
    assert "unsafe" not in response.headers["content-security-policy"]


def test_the_page_is_sent_with_nosniff_and_no_referrer(serve: Serve) -> None:
    headers = httpx.get(serve(ScriptedProvider()).url("/")).headers
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"


def test_the_page_names_no_other_site(serve: Serve) -> None:
    page = httpx.get(serve(ScriptedProvider()).url("/")).text
    uncommented = re.sub(r"<!--.*?-->", "", page, flags=re.DOTALL)
    assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", uncommented, flags=re.IGNORECASE)


def test_the_page_needs_no_key_while_the_api_does(serve: Serve) -> None:
    served = serve(ScriptedProvider(), api_keys=("k-test",))
    assert httpx.get(served.url("/")).status_code == 200
    assert httpx.head(served.url("/")).status_code == 200
    assert httpx.get(served.url("/agents")).status_code == 401


def test_the_page_stays_small(serve: Serve) -> None:
    page = httpx.get(serve(ScriptedProvider()).url("/")).content
    assert len(gzip.compress(page)) < 20_000  # 16.7 kB when the console was added
