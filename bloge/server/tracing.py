"""``TraceContext``: the W3C trace context of each request, for the runs it starts.

A request's ``traceparent`` (and ``tracestate``) becomes :data:`bloge.core.tracecontext.
caller` while the request is handled — on every route: the runs API, ``/v1``, ``/mcp`` and
``/rpc`` — so a run it starts records it and its spans are children of the caller's span. A
malformed header is ignored (a new trace starts), as the W3C recommendation says. The app
adds this middleware only when its store traces runs.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from bloge.core import tracecontext
from bloge.core.tracecontext import TraceParent


class TraceContext:
    """ASGI middleware: the request's trace context, while it is handled."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        traceparent = tracestate = None
        for name, value in scope["headers"]:
            if name == b"traceparent":
                traceparent = value.decode("latin-1")
            elif name == b"tracestate":
                tracestate = value.decode("latin-1")
        token = tracecontext.caller.set(TraceParent.parse(traceparent, tracestate))
        try:
            await self.app(scope, receive, send)
        finally:
            tracecontext.caller.reset(token)
