"""The HTTP side of the RPC wire: ``POST /rpc/{service}/{method}`` over the handlers of the
services this process exposes (``bloge serve`` mounts it behind its guard: API keys, Host and
Origin checks, the body limit). Needs Starlette (extra ``[server]``)."""

from __future__ import annotations

from collections.abc import Mapping

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from bloge.rpc.calls import MAX_TIMEOUT_MS, TIMEOUT_HEADER, Handler, dispatch
from bloge.rpc.errors import HTTP_STATUS, RemoteError
from bloge.rpc.transport import DEFAULT_MAX_PAYLOAD

#: Request headers that are the transport's, not the call's metadata.
_NOT_METADATA = frozenset({"host", "content-type", "content-length", "connection", "accept",
                           "accept-encoding", "user-agent", "authorization", "cookie", "origin",
                           "referer", "transfer-encoding", TIMEOUT_HEADER})
_JSON = "application/json"


def rpc_routes(handlers: Mapping[str, Handler], *,
               max_body_bytes: int = DEFAULT_MAX_PAYLOAD) -> list[Route]:
    """The route serving ``handlers`` (service name → handler), for a Starlette app."""

    async def endpoint(request: Request) -> Response:
        service = request.path_params["service"]
        method = request.path_params["method"]
        try:
            reply = await _answer(request, handlers, service, method, max_body_bytes)
        except RemoteError as error:
            return Response(error.to_json(), status_code=HTTP_STATUS[error.code],
                            media_type=_JSON)
        except ClientDisconnect:
            return Response(status_code=499)  # nobody reads it: the caller has gone
        return Response(reply, media_type=_JSON)

    return [Route("/rpc/{service}/{method}", endpoint, methods=["POST"])]


def rpc_app(handlers: Mapping[str, Handler], *,
            max_body_bytes: int = DEFAULT_MAX_PAYLOAD) -> Starlette:
    """A bare ASGI application of :func:`rpc_routes` (no auth: put it behind your own)."""
    return Starlette(routes=rpc_routes(handlers, max_body_bytes=max_body_bytes))


async def _answer(request: Request, handlers: Mapping[str, Handler], service: str,
                  method: str, max_body_bytes: int) -> str:
    handler = handlers.get(service)
    if handler is None:
        raise RemoteError("not_found", f"no service {service!r} is served here")
    timeout = _timeout(request.headers.get(TIMEOUT_HEADER))
    body = await request.body()
    if len(body) > max_body_bytes:
        raise RemoteError("resource_exhausted", f"the arguments of {service}.{method} take "
                          f"{len(body)} bytes, more than the limit of {max_body_bytes}")
    try:
        payload = body.decode()
    except UnicodeDecodeError:
        raise RemoteError("invalid_argument", "the request body is not UTF-8 JSON") from None
    metadata = {name: value for name, value in request.headers.items()
                if name not in _NOT_METADATA}
    return await dispatch(handler, service, method, payload, time_left=timeout,
                          metadata=metadata)


def _timeout(header: str | None) -> float | None:
    if header is None:
        return None
    if not header.isdigit() or len(header) > len(str(MAX_TIMEOUT_MS)):
        raise RemoteError("invalid_argument", f"{TIMEOUT_HEADER} must be a whole number of "
                          f"milliseconds, at most {MAX_TIMEOUT_MS}")
    return int(header) / 1000
