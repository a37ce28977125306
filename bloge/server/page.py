"""``GET /``: the chat page — one self-contained HTML file (``static/chat.html``: inline style
and script, nothing fetched from elsewhere) that talks to this server's runs API.

The page is sent with a Content-Security-Policy that allows exactly its own inline
``<style>`` and ``<script>`` blocks, by their SHA-256 (computed here, once, from the file),
and connections to this server only: text a model or a user wrote cannot run as script even
if it ever reached the DOM as markup.
"""

from __future__ import annotations

import base64
import hashlib
import re
from importlib import resources

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

PAGE = (resources.files("bloge.server") / "static" / "chat.html").read_bytes()


def inline_hashes(page: str, tag: str) -> str:
    """CSP sources for each bare ``<tag>…</tag>`` block of ``page`` (its exact text hashed,
    as the browser hashes it)."""
    blocks = re.findall(rf"<{tag}>(.*?)</{tag}>", page, flags=re.DOTALL)
    digests = (base64.b64encode(hashlib.sha256(block.encode("utf-8")).digest()).decode()
               for block in blocks)
    return " ".join(f"'sha256-{digest}'" for digest in digests)


def page_headers(page: bytes) -> dict[str, str]:
    """The headers the page is served with: its CSP and the other browser guards."""
    text = page.decode("utf-8")
    policy = "; ".join([
        "default-src 'none'",
        f"script-src {inline_hashes(text, 'script')}",
        f"style-src {inline_hashes(text, 'style')}",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ])
    return {"Content-Security-Policy": policy, "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer", "Cache-Control": "no-cache"}


HEADERS = page_headers(PAGE)


async def chat_page(request: Request) -> Response:
    """``GET /``: the chat page (public: every request it makes carries the user's key)."""
    return Response(PAGE, media_type="text/html", headers=HEADERS)


ROUTES = [Route("/", chat_page, methods=["GET"])]
